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

// A float model's prepacked MatMul weights are saved once, beside an
// optimized copy that later loads map (the session config keys
// kOrtSessionOptionsOptimizedModelExternalInitializersFileName and
// kOrtSessionOptionsSavePrePackedConstantInitializers of microsoft/onnxruntime
// include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h). Silero's copy does not load (ONNX Runtime 1.24 writes its
// subgraphs' initializers under names that clash), so Silero loads as
// it is; and with the copies turned off every model does.
func TestMappedCopy(t *testing.T) {
	testenv.ONNXRuntime(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer onnx.SetMinPrepacked(1)()
	model := filepath.Join("..", "..", "tts", "moss", "testdata", "tiny-codec", "moss_audio_tokenizer_decode_step.onnx")
	ins, outs, err := onnx.Declaration(model)
	require.NoError(t, err)
	tensors := func(infos []ort.InputOutputInfo) []onnx.Tensor {
		ts := make([]onnx.Tensor, len(infos))
		for i, info := range infos {
			ts[i] = onnx.Tensor{Name: info.Name, Type: info.DataType}
		}
		return ts
	}

	open := func(path string) *onnx.Session {
		s, err := onnx.Open(path, tensors(ins), tensors(outs), onnx.Options{}, "")
		require.NoError(t, err)
		t.Cleanup(func() { s.Destroy() })
		return s
	}
	first := open(model)
	require.NotEmpty(t, first.Mapped, "the float model was loaded as it is")
	dir := filepath.Dir(first.Mapped)
	verdict, err := os.ReadFile(filepath.Join(dir, "verdict"))
	require.NoError(t, err)
	assert.Equal(t, "mapped\n", string(verdict))
	assert.FileExists(t, filepath.Join(dir, "weights.bin"))
	assert.Equal(t, first.Mapped, open(model).Mapped, "a later load maps the same copy")

	// A copy damaged since (a truncated data file) costs the mapping, not
	// the stage: the model itself loads.
	require.NoError(t, os.Truncate(filepath.Join(dir, "weights.bin"), 100))
	assert.Empty(t, open(model).Mapped, "the damaged copy was loaded")
	assert.Equal(t, first.Mapped, open(model).Mapped, "the copy is made again at the next load")

	silero := testenv.Model(t, "silero_vad_v5.onnx")
	s, err := onnx.Open(silero, sileroIn, sileroOut, onnx.Options{}, "")
	require.NoError(t, err)
	assert.Empty(t, s.Mapped, "Silero's copy does not load; the model itself does")
	require.NoError(t, s.Destroy())

	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
	assert.Empty(t, open(model).Mapped, "copies turned off")
}
