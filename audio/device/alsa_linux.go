//go:build linux

package device

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>

typedef void (*voice_alsa_handler)(const char *file, int line, const char *function, int err, const char *fmt, ...);

static void voice_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {}

// voice_alsa_silence installs a handler that drops ALSA's error messages,
// in the libasound that miniaudio will open too (dlopen returns the same
// library); the handle stays open so the handler stays installed.
static void voice_alsa_silence(void) {
	void *h = dlopen("libasound.so.2", RTLD_LAZY | RTLD_GLOBAL);
	if (h == NULL) {
		return;
	}
	int (*set)(voice_alsa_handler) = (int (*)(voice_alsa_handler))dlsym(h, "snd_lib_error_set_handler");
	if (set != NULL) {
		set(voice_alsa_quiet);
	}
}
*/
import "C"

import "sync"

// silenceALSA keeps libasound from printing its configuration errors
// (dozens of "ALSA lib ..." lines when there is no sound card or server)
// over the one error that says what to do.
var silenceALSA = sync.OnceFunc(func() { C.voice_alsa_silence() })
