// Package testenv lets tests that need what scripts/setup installs (the
// ONNX Runtime library, the Silero model, espeak-ng) skip cleanly on a
// machine without it, and fail in CI (CI set), where a missing file means
// the set-up is broken rather than that the test may pass.
package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/voiceassistant/voice/assets"
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
	p, ok := assets.Local(filepath.Join("models", file))
	if !ok {
		Missing(tb, "model "+file+" not found under third_party/models")
	}
	return p
}
