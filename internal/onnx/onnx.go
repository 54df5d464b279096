// Package onnx is the ONNX Runtime plumbing every ONNX stage shares (VAD,
// turn detection, ASR, TTS): finding the library, one environment per
// process, session options, and checking that a model's inputs and
// outputs are what the code was written for, with errors that say what to
// do.
package onnx

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/modelstore"
)

// APIVersion is the ONNX Runtime C API version onnxruntime_go v1.27.0 is
// compiled against; libraries older than 1.24 do not provide it.
const APIVersion = 24

// EnvLibrary names the environment variable that points at the library.
const EnvLibrary = "ONNXRUNTIME_LIB"

// envNoTelemetry is ONNX Runtime's switch for its telemetry uploader.
const envNoTelemetry = "ORT_DISABLE_TELEMETRY"

// ErrLibraryMissing is returned when no ONNX Runtime library can be found.
var ErrLibraryMissing = errors.New("ONNX Runtime library not found")

// LocalLibrary is where scripts/setup installs the library for this
// platform, relative to the project's third_party/ folder.
func LocalLibrary() string {
	return filepath.Join("onnxruntime", platform(), libraryFile)
}

const libraryFile = "libonnxruntime.so.1"

// platform names this platform as onnxruntime-node's package does.
func platform() string {
	return runtime.GOOS + "-" + map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
}

// RuntimeModel is the model manifest's entry for this platform's library
// (`voice-agent models pull` puts it in the model cache).
func RuntimeModel() string { return "onnxruntime-" + platform() }

var systemDirs = []string{"/usr/local/lib", "/usr/lib", "/usr/lib/" + multiarch(), "/lib/" + multiarch()}

func multiarch() string {
	return map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
}

// FindLibrary returns the library to load: the explicit path (a flag) if
// given, else $ONNXRUNTIME_LIB, else the project-local copy installed by
// scripts/setup, else a system-wide installation.
func FindLibrary(explicit string) (string, error) {
	for _, c := range []struct{ path, from string }{{explicit, "the --onnxruntime flag"}, {os.Getenv(EnvLibrary), "$" + EnvLibrary}} {
		if c.path == "" {
			continue
		}
		if _, err := os.Stat(c.path); err != nil {
			return "", fmt.Errorf("%w: %s points at %s: %v", ErrLibraryMissing, c.from, c.path, err)
		}
		return c.path, nil
	}
	if cache, err := modelstore.CacheDir(); err == nil {
		if p := filepath.Join(cache, RuntimeModel(), libraryFile); fileExists(p) {
			return p, nil
		}
	}
	if p, ok := modelstore.Local(LocalLibrary()); ok {
		return p, nil
	}
	for _, dir := range systemDirs {
		for _, name := range []string{"libonnxruntime.so.1", "libonnxruntime.so"} {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%w: run `voice-agent models pull %s` (or scripts/setup, which installs it under %s), or set %s to a libonnxruntime.so of version 1.24 or newer",
		ErrLibraryMissing, RuntimeModel(), filepath.Join(modelstore.LocalDir, LocalLibrary()), EnvLibrary)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var env struct {
	sync.Mutex
	path string
	err  error
	done bool
}

// Init loads the library and creates the process's one ONNX Runtime
// environment. Later calls return the first call's result; asking for a
// different library once one is loaded is an error, since a process can
// hold only one.
func Init(library string) error {
	env.Lock()
	defer env.Unlock()
	if env.done {
		if env.err == nil && library != "" && library != env.path {
			return fmt.Errorf("onnx: %s already loaded; cannot also load %s", env.path, library)
		}
		return env.err
	}
	path, err := FindLibrary(library)
	if err != nil {
		// Nothing was loaded, so a later call may find a library installed
		// meanwhile (the desktop app downloads it and starts again).
		return err
	}
	env.done, env.path = true, path
	// Nothing leaves the device: ONNX Runtime 1.29 and later start a
	// telemetry uploader on Linux, with a device id and an event database
	// under ~/.cache/Microsoft, unless this is set before the library
	// starts (docs/Privacy.md of microsoft/onnxruntime v1.29.0); turning
	// the events off through the API afterwards is too late for those.
	if err := os.Setenv(envNoTelemetry, "1"); err != nil {
		return err
	}
	ort.SetSharedLibraryPath(env.path)
	// A failed load or run comes back as an error with the engine's
	// reason; at its Error level the engine also printed it, in ANSI
	// colours, on stderr among the agent's own log lines.
	if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
		env.err = explainInit(env.path, err)
		return env.err
	}
	if err := ort.DisableTelemetry(); err != nil {
		env.err = fmt.Errorf("onnx: turning ONNX Runtime's telemetry off: %w", err)
	}
	return env.err
}

// explainInit turns onnxruntime_go's initialization errors into ones that
// say what is wrong with the library.
func explainInit(path string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Error setting ORT API base: 2"):
		// Not ort.GetVersion(): its string lived in the library, which
		// onnxruntime_go has unloaded again by now.
		return fmt.Errorf("onnx: %s is too old: ONNX Runtime API version %d (ONNX Runtime 1.24 or newer) is required; run scripts/setup or point %s at a newer library",
			path, APIVersion, EnvLibrary)
	case strings.Contains(msg, "Error loading ONNX shared library"):
		return fmt.Errorf("onnx: %s is not a usable ONNX Runtime library: %s (loading it said: %v)", path, whyNotLoaded(path), err)
	case strings.Contains(msg, "OrtGetApiBase"):
		return fmt.Errorf("onnx: %s is not a usable ONNX Runtime library: %v", path, err)
	}
	return fmt.Errorf("onnx: initializing %s: %w", path, err)
}

// whyNotLoaded says why the dynamic loader refused the library at path,
// where its own word misleads: glibc's dlopen says "No such file or
// directory" of a file that is there, built for another architecture.
func whyNotLoaded(path string) string {
	lib, err := elf.Open(path)
	if err != nil {
		return fmt.Sprintf("it is not an ELF shared library (%v); point --onnxruntime or $%s at the %s library, or run `voice-agent models pull %s`",
			err, EnvLibrary, platform(), RuntimeModel())
	}
	defer lib.Close()
	if native := nativeMachine[runtime.GOARCH]; lib.Machine != native {
		return fmt.Sprintf("it is a library for %s, and this agent runs on %s: point --onnxruntime or $%s at the %s library, or run `voice-agent models pull %s`",
			machineName(lib.Machine), machineName(native), EnvLibrary, platform(), RuntimeModel())
	}
	return fmt.Sprintf("it, or a library it needs, cannot be loaded (`ldd %s` lists what is missing)", path)
}

// nativeMachine is the ELF machine of the architectures the agent is
// built for.
var nativeMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// machineName names an ELF machine as its users do.
func machineName(m elf.Machine) string {
	switch m {
	case elf.EM_X86_64:
		return "x86-64"
	case elf.EM_AARCH64:
		return "arm64 (aarch64)"
	case elf.EM_386:
		return "32-bit x86"
	case elf.EM_ARM:
		return "32-bit ARM"
	}
	return m.String()
}

// Version is the loaded library's version string ("" before Init).
func Version() string {
	env.Lock()
	defer env.Unlock()
	if !env.done || env.err != nil {
		return ""
	}
	return ort.GetVersion()
}
