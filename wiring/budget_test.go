package wiring

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
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

// trueSizeSet lays out the int4 set's files at their sizes
// (scripts/bench-scale), its LLM exported without MNN's C4 fusions.
func trueSizeSet(t *testing.T) Stages {
	dir := t.TempDir()
	sized(t, filepath.Join(dir, XASRDir, "encoder-160ms.data"), 90)
	sized(t, filepath.Join(dir, XASRDir, "decoder-160ms.onnx"), 11)
	sized(t, filepath.Join(dir, SmartTurnFile), 6)
	sized(t, filepath.Join(dir, MNNDir, "llm.mnn.weight"), 163)
	require.NoError(t, os.WriteFile(filepath.Join(dir, MNNDir, "llm.mnn"), []byte("/layers.0/self_attn/RoPE"), 0o644))
	sized(t, filepath.Join(dir, MossDir, "moss_tts_global_shared.data"), 67)
	sized(t, filepath.Join(dir, MossDir, "moss_tts_local_shared.data"), 35)
	sized(t, filepath.Join(dir, MossCodecDir, "moss_audio_tokenizer_decode_shared.data"), 7)
	s := DefaultStages()
	s.VAD, s.ModelDir, s.MemoryBudget = VADEnergy, dir, 0
	return s
}

// fuse makes the set's LLM an export with MNN's C4 fusions.
func fuse(t *testing.T, s Stages) {
	require.NoError(t, os.WriteFile(filepath.Join(s.ModelDir, MNNDir, "llm.mnn"), []byte("/layers.0/self_attn/FusedRoPE"), 0o644))
}

func expected(s Stages) map[string]float64 {
	out := map[string]float64{}
	for _, m := range s.ExpectedMemory() {
		out[m.Stage] = m.MiB
	}
	return out
}

func total(s Stages) float64 {
	var sum float64
	for _, m := range s.ExpectedMemory() {
		sum += m.MiB
	}
	return sum
}

// The estimate follows the installed models' sizes; the synthesizer's
// global weights count twice (its prefill and decode graphs each load
// them) unless the prefill graph is closed; prepacked weights count on
// the heap only when the optimized copies are off.
func TestExpectedMemoryFollowsTheModels(t *testing.T) {
	s := trueSizeSet(t)
	mapped := expected(s)
	assert.InDelta(t, 0.3*101+50, mapped["asr"], 1)
	assert.InDelta(t, 0.5*6+27, mapped["turn"], 1)
	if mnn.Built {
		assert.InDelta(t, 0.25*163+40, mapped["llm"], 1, "an export without MNN's C4 fusions")
		fuse(t, s)
		assert.InDelta(t, 1.33*163+40, expected(s)["llm"], 1, "one with")
	} else {
		assert.NotContains(t, mapped, "llm", "without MNN in the build no LLM loads")
	}
	assert.InDelta(t, 0.2*(67*2+35+7)+140, mapped["tts"], 1)
	assert.Equal(t, float64(runtimeMiB), mapped["onnxruntime"])
	assert.Equal(t, float64(processMiB), mapped["process"])
	assert.NotContains(t, mapped, "vad", "the energy detector loads no model")

	s.TTSLowMemory = true
	assert.InDelta(t, mapped["tts"]-0.2*67, expected(s)["tts"], 1)

	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
	heap := expected(s)
	assert.InDelta(t, 1.3*101+50, heap["asr"], 1)
	assert.InDelta(t, 1.5*6+27, heap["turn"], 1)
	assert.InDelta(t, 1*(67+35+7)+140, heap["tts"], 1)
	if mnn.Built {
		assert.Equal(t, expected(s)["llm"], heap["llm"], "MNN's weights are mapped either way")
	}
}

// Over the budget, start-up stops before loading anything, with one line
// that names the largest stage and what would fit; 0 is no budget. The
// int4 set fits the glasses' default budget with the LLM exported
// without MNN's C4 fusions, and not with them.
func TestBuildRefusesASetOverTheBudget(t *testing.T) {
	s := trueSizeSet(t)
	assert.NoError(t, CheckMemory(s.ExpectedMemory(), DefaultMemoryBudget("arm64")), "the int4 set, %.0f MiB", total(s))

	if mnn.Built {
		fuse(t, s)
		s.MemoryBudget = DefaultMemoryBudget("arm64")
		_, closeStages, err := Build(s, clock.NewVirtual())
		require.Error(t, err)
		closeStages()
		msg := err.Error()
		assert.NotContains(t, msg, "\n")
		for _, want := range []string{"over the budget of 450 MiB", "the largest is llm", "--disable_transformer_c4", "--memory-budget 0"} {
			assert.Contains(t, msg, want)
		}
		assert.NoError(t, CheckMemory(s.ExpectedMemory(), 0))
		assert.NoError(t, CheckMemory(s.ExpectedMemory(), 2000))
	}

	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
	s = trueSizeSet(t)
	err := CheckMemory(s.ExpectedMemory(), 450)
	require.Error(t, err, "the prepacked weights on the heap")
	assert.Contains(t, err.Error(), "the largest is tts")
	assert.Contains(t, err.Error(), "--tts-low-memory (about 67 MiB less)")
}

func TestDefaultMemoryBudget(t *testing.T) {
	assert.Equal(t, 450, DefaultMemoryBudget("arm64"))
	assert.Equal(t, 0, DefaultMemoryBudget("amd64"))
	assert.Equal(t, int64(150<<20), GoMemoryLimit(450))
}
