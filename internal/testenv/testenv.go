// Package testenv lets tests that need what scripts/setup installs (the
// ONNX Runtime library, the Silero model, espeak-ng) skip cleanly on a
// machine without it, and fail in CI (CI set), where a missing file means
// the set-up is broken rather than that the test may pass.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/voiceassistant/voice/internal/modelstore"
	"github.com/voiceassistant/voice/internal/onnx"
)

// Missing skips tb, or fails it in CI, saying what is missing.
func Missing(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI is set, so this is a set-up failure)", what)
	}
	tb.Skipf("%s; run scripts/setup", what)
}

// ONNXRuntime requires the ONNX Runtime library.
func ONNXRuntime(tb testing.TB) {
	tb.Helper()
	if _, err := onnx.FindLibrary(""); err != nil {
		Missing(tb, err.Error())
	}
}

// Model requires the ONNX Runtime library and the model file that
// scripts/setup installs under third_party/models, and returns its path.
func Model(tb testing.TB, file string) string {
	tb.Helper()
	ONNXRuntime(tb)
	p, ok := modelstore.Local(filepath.Join("models", file))
	if !ok {
		Missing(tb, "model "+file+" not found under third_party/models")
	}
	return p
}

// TinyLLM is the directory of the random-weight LLM in MNN's real format
// that the MNN tests run on (llm/mnn/testdata/tiny-llm, README there).
func TinyLLM(tb testing.TB) string {
	tb.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("testenv: cannot locate the source tree")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "llm", "mnn", "testdata", "tiny-llm")
}

// MNN requires the MNN build that scripts/test exports as MNN_ROOT (its
// install prefix, from scripts/build-mnn), with cgo pointed at it, so a
// test can build the agent with -tags mnn.
func MNN(tb testing.TB) {
	tb.Helper()
	if os.Getenv("MNN_ROOT") == "" {
		Missing(tb, "MNN is not built (scripts/test exports MNN_ROOT after scripts/setup builds it)")
	}
}

// CopyDir copies the files of the folder src (not its subfolders) into
// dst, which it makes if need be: a model a test may damage or edit.
func CopyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// LockedBuffer collects what another goroutine or process writes while the
// test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
