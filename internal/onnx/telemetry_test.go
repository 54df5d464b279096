package onnx_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// ONNX Runtime 1.29 and later start a telemetry uploader on Linux, which
// writes a device id and an event database under the user's cache
// (Microsoft/DeveloperTools/.onnxruntime) the moment the library starts
// (seen with 1.30.0 before the switch was set). Nothing leaves the
// device: a process that loads the library and runs a model writes
// nothing of it, in its home, its cache or its working folder. The
// process is a new one, as the library starts once per process.
func TestNoTelemetry(t *testing.T) {
	if model := os.Getenv("VOICE_TEST_TELEMETRY_MODEL"); model != "" {
		t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0") // the agent's own files aside
		s, err := onnx.Open(model, sileroIn, sileroOut, onnx.Options{}, "")
		require.NoError(t, err)
		require.NoError(t, s.Destroy())
		for _, dir := range []string{os.Getenv("HOME"), os.Getenv("XDG_CACHE_HOME"), "."} {
			assert.Empty(t, files(t, dir), "files written in %s", dir)
		}
		return
	}
	cmd := sileroChild(t, "TestNoTelemetry", "VOICE_TEST_TELEMETRY_MODEL", "HOME="+t.TempDir())
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- PASS: TestNoTelemetry", "the child ran no model")
}

// sileroChild is this test binary run again for the test named, with
// Silero's path in modelEnv (the child's cue to run the model), the
// library found here, and env besides: what ONNX Runtime does once per
// process is seen in a process of its own.
func sileroChild(t *testing.T, test, modelEnv string, env ...string) *exec.Cmd {
	t.Helper()
	model, err := filepath.Abs(testenv.Model(t, "silero_vad_v5.onnx"))
	require.NoError(t, err)
	lib, err := onnx.FindLibrary("")
	require.NoError(t, err)
	lib, err = filepath.Abs(lib)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(append(os.Environ(), modelEnv+"="+model, "ONNXRUNTIME_LIB="+lib), env...)
	return cmd
}

// files are the files under dir.
func files(t *testing.T, dir string) []string {
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, path)
		}
		return err
	})
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	return found
}
