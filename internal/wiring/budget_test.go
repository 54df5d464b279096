package wiring

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/quantize"
	"github.com/voiceassistant/voice/llm/mnn"
)

// sized makes a file of n MiB (sparse: only its size matters).
func sized(t *testing.T, path string, n int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(n<<20))
	require.NoError(t, f.Close())
}

// trueSizeSet lays out the int4 set's files at their sizes (scripts/bench-scale).
func trueSizeSet(t *testing.T) Stages {
	dir := t.TempDir()
	sized(t, filepath.Join(dir, XASRDir, "encoder-160ms.data"), 90)
	sized(t, filepath.Join(dir, XASRDir, "decoder-160ms.onnx"), 11)
	sized(t, filepath.Join(dir, SmartTurnFile), 6)
	sized(t, filepath.Join(dir, MNNDir, "llm.mnn.weight"), 163)
	require.NoError(t, os.WriteFile(filepath.Join(dir, MNNDir, "llm.mnn"), []byte("/layers.0/self_attn/FusedRoPE"), 0o644))
	sized(t, filepath.Join(dir, MossDir, "moss_tts_global_shared.data"), 67)
	sized(t, filepath.Join(dir, MossDir, "moss_tts_local_shared.data"), 62)
	sized(t, filepath.Join(dir, MossCodecDir, "moss_audio_tokenizer_decode_shared.data"), 7)
	s := DefaultStages()
	s.VAD, s.ModelDir, s.MemoryBudget = VADEnergy, dir, 0
	return s
}

func expected(s Stages) map[string]float64 {
	out := map[string]float64{}
	for _, m := range s.ExpectedMemory() {
		out[m.Stage] = m.MiB
	}
	return out
}

// The estimate follows the installed models' sizes; the synthesizer's
// global weights count twice (its prefill and decode graphs each prepack
// them) unless the prefill graph is closed.
func TestExpectedMemoryFollowsTheModels(t *testing.T) {
	s := trueSizeSet(t)
	full := expected(s)
	assert.InDelta(t, 1.5*101+50, full["asr"], 1)
	assert.InDelta(t, 1.5*6+30, full["turn"], 1)
	if mnn.Built {
		assert.InDelta(t, 1.3*163+40, full["llm"], 1, "an export with MNN's C4 fusions")
		require.NoError(t, os.WriteFile(filepath.Join(s.ModelDir, MNNDir, "llm.mnn"), []byte("/layers.0/self_attn/RoPE"), 0o644))
		assert.InDelta(t, 0.25*163+40, expected(s)["llm"], 1, "one without")
	} else {
		assert.NotContains(t, full, "llm", "without MNN in the build no LLM loads")
	}
	assert.InDelta(t, 67*2+62+7+140, full["tts"], 1)
	assert.Equal(t, float64(runtimeMiB), full["onnxruntime"])
	assert.Equal(t, float64(processMiB), full["process"])
	assert.NotContains(t, full, "vad", "the energy detector loads no model")

	s.TTSLowMemory = true
	assert.InDelta(t, full["tts"]-67, expected(s)["tts"], 1)

	// A weight read at 17 places (the unrolled local frame graph's) is
	// prepacked 17 times: 16 more copies of its 1 MiB. Without a shared
	// prepacked-weights container ONNX Runtime calls each kernel's
	// PrePack on its own (microsoft/onnxruntime
	// onnxruntime/core/framework/session_state.cc,
	// SessionState::PrepackConstantInitializedTensors, the branch
	// "caching of pre-packed weights' turned OFF").
	const k, n = 512, 512
	local := quantize.MatMulModel(make([]float32, k*n), k, n, 17)
	require.NoError(t, os.WriteFile(filepath.Join(s.ModelDir, MossDir, "moss_tts_local_fixed_sampled_frame.onnx"), local, 0o644))
	size := float64(len(local)) / (1 << 20)
	assert.InDelta(t, full["tts"]-67+size+16, expected(s)["tts"], 0.1)
}

// Over the budget, start-up stops before loading anything, with one line
// that names the largest stage and what would fit; 0 is no budget.
func TestBuildRefusesASetOverTheBudget(t *testing.T) {
	s := trueSizeSet(t)
	s.MemoryBudget = 450
	_, closeStages, err := Build(s, clock.NewVirtual())
	require.Error(t, err)
	closeStages()
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	for _, want := range []string{"over the budget of 450 MiB", "the largest is tts", "--tts-low-memory", "--memory-budget 0"} {
		assert.Contains(t, msg, want)
	}

	s.TTSLowMemory = true
	err = CheckMemory(s.ExpectedMemory(), 450)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the largest is tts, 276 MiB: try a smaller model, or one quantized further", "lean already: a smaller set")

	assert.NoError(t, CheckMemory(s.ExpectedMemory(), 0))
	assert.NoError(t, CheckMemory(s.ExpectedMemory(), 2000))
}

func TestDefaultMemoryBudget(t *testing.T) {
	assert.Equal(t, 450, DefaultMemoryBudget("arm64"))
	assert.Equal(t, 0, DefaultMemoryBudget("amd64"))
	assert.Equal(t, int64(150<<20), GoMemoryLimit(450))
}
