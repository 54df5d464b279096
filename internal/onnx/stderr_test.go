package onnx_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
)

// A run that fails comes back as an error, and only so: ONNX Runtime
// logged it besides, in ANSI colours, on the process's stderr (twice, for
// a failure inside an If), where it broke the agent's log lines. The
// child process runs Silero on an input too short for its padding.
func TestEngineErrorsStayOffStderr(t *testing.T) {
	if model := os.Getenv("VOICE_TEST_STDERR_MODEL"); model != "" {
		s, err := onnx.Open(model, sileroIn, sileroOut, onnx.Options{}, "")
		require.NoError(t, err)
		defer s.Destroy()
		input, err := ort.NewTensor(ort.NewShape(1, 1), []float32{0})
		require.NoError(t, err)
		state, err := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
		require.NoError(t, err)
		sr, err := ort.NewScalar(int64(16000))
		require.NoError(t, err)
		outputs := make([]ort.Value, 2)
		err = s.Run([]ort.Value{input, state, sr}, outputs)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Pad reflect requires axis length >= 2", "the engine's reason is in the error")
		return
	}
	cmd := sileroChild(t, "TestEngineErrorsStayOffStderr", "VOICE_TEST_STDERR_MODEL", "XDG_CACHE_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s%s", &stdout, &stderr)
	require.Contains(t, stdout.String(), "--- PASS: TestEngineErrorsStayOffStderr", "the child ran no model")
	assert.NotContains(t, stderr.String(), "onnxruntime:", "the engine's own log line")
	assert.NotContains(t, stderr.String(), "\x1b[", "terminal colours")
}
