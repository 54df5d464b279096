//go:build linux && cgo

package malloc

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static int voice_arenas_limited;

__attribute__((constructor)) static void voice_limit_arenas(void) {
#ifdef __GLIBC__
	if (getenv("MALLOC_ARENA_MAX") == NULL) {
		voice_arenas_limited = mallopt(M_ARENA_MAX, 1) == 1;
	}
#endif
}

static int voice_limited(void) { return voice_arenas_limited; }

static void voice_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
*/
import "C"

func limited() bool { return C.voice_limited() == 1 }

func trim() { C.voice_trim() }
