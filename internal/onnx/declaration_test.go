package onnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// Declaration, read from the file, says what ONNX Runtime says of every
// model the stages load (the tiny stand-ins, Silero): the same inputs
// (without initializers listed as inputs), types and dimensions, and the
// same outputs, whose dimensions ONNX Runtime may have inferred where the
// file leaves them symbolic (-1 here).
func TestDeclarationMatchesONNXRuntime(t *testing.T) {
	testenv.ONNXRuntime(t)
	require.NoError(t, onnx.Init(""))
	models := []string{testenv.Model(t, "silero_vad_v5.onnx"), "../../turn/smartturn/testdata/smart_turn_tiny.onnx"}
	for _, pattern := range []string{"../../asr/xasr/testdata/tiny/*.onnx", "../../asr/xasr/testdata/*.onnx", "../../tts/moss/testdata/tiny*/*.onnx"} {
		found, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, found, pattern)
		models = append(models, found...)
	}
	for _, path := range models {
		t.Run(filepath.Base(path), func(t *testing.T) {
			wantIns, wantOuts, err := ort.GetInputOutputInfo(path)
			require.NoError(t, err)
			ins, outs, err := onnx.Declaration(path)
			require.NoError(t, err)
			assert.Equal(t, wantIns, ins)
			require.Len(t, outs, len(wantOuts))
			for i, want := range wantOuts {
				got := outs[i]
				assert.Equal(t, []any{want.Name, want.OrtValueType, want.DataType, len(want.Dimensions)},
					[]any{got.Name, got.OrtValueType, got.DataType, len(got.Dimensions)})
				for j, d := range got.Dimensions {
					if d != -1 && j < len(want.Dimensions) {
						assert.Equal(t, want.Dimensions[j], d, "%s axis %d", got.Name, j)
					}
				}
			}
		})
	}
}

// A file that is not a model, or is cut short, is an error naming it.
func TestDeclarationOfABadFile(t *testing.T) {
	model, err := os.ReadFile("../../turn/smartturn/testdata/smart_turn_tiny.onnx")
	require.NoError(t, err)
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty.onnx":     nil,
		"text.onnx":      []byte("not a model"),
		"truncated.onnx": model[:len(model)/2],
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		_, _, err := onnx.Declaration(path)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
		assert.Contains(t, err.Error(), "corrupt or not a model")
	}
	_, _, err = onnx.Declaration(filepath.Join(dir, "missing.onnx"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
