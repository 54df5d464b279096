package wiring

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/testenv"
)

var tinySmartTurn = filepath.Join("..", "..", "turn", "smartturn", "testdata", "smart_turn_tiny.onnx")

func TestBuild(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"user":[{"start_ms":0,"end_ms":500,"text":"hi"}],"replies":["hello"]}`), 0o644))
	noReplies := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(noReplies, []byte(`{"user":[]}`), 0o644))
	doubles := Stages{VAD: VADEnergy, ASR: ASRScripted, Turn: TurnNone, LLM: LLMScripted, TTS: TTSTone, Script: script}

	for _, tc := range []struct {
		name        string
		edit        func(*Stages)
		unavailable bool
		errs        []string
	}{
		{name: "doubles build", edit: func(*Stages) {}},
		{name: "text only", edit: func(s *Stages) { s.TTS = TTSNone }},
		{name: "missing real models are reported one by one", edit: func(s *Stages) { *s = DefaultStages() }, unavailable: true,
			errs: []string{"X-ASR model directory not found", "Smart Turn v3.2 model not found", "--turn-model PATH", `LLM backend "mnn"`, "MOSS-TTS-Nano not found"}},
		{name: "missing VAD model", edit: func(s *Stages) { s.VAD = VADSilero; s.ModelDir = t.TempDir(); s.VADModel = "/nonexistent/silero.onnx" },
			errs: []string{"/nonexistent/silero.onnx", "scripts/setup"}},
		{name: "Smart Turn from the model directory", edit: func(s *Stages) { s.Turn = TurnSmart; s.TurnModel = tinySmartTurn }},
		{name: "unknown backend", edit: func(s *Stages) { s.VAD = "webrtc" }, errs: []string{`unknown --vad backend "webrtc"`}},
		{name: "scripted without a script", edit: func(s *Stages) { s.Script = "" }, errs: []string{"need --script FILE"}},
		{name: "script missing", edit: func(s *Stages) { s.Script = "/nonexistent.json" }, errs: []string{"/nonexistent.json"}},
		{name: "script without replies", edit: func(s *Stages) { s.Script = noReplies }, errs: []string{"no replies"}},
		{name: "threads per model", edit: func(s *Stages) { s.Turn = TurnSmart; s.TurnModel = tinySmartTurn; s.TurnThreads = 2; s.VADThreads = 1 }},
		{name: "negative threads", edit: func(s *Stages) { s.ASRThreads = -1 }, errs: []string{"asr threads: -1 is negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := doubles
			tc.edit(&s)
			cfg, closeStages, err := Build(s, clock.NewVirtual())
			defer func() { assert.NoError(t, closeStages()) }()
			if len(tc.errs) == 0 {
				require.NoError(t, err)
				assert.NotNil(t, cfg.VAD)
				assert.NotNil(t, cfg.LLM)
				assert.Equal(t, s.TTS != TTSNone, cfg.TTS != nil)
				return
			}
			require.Error(t, err)
			for _, want := range tc.errs {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, tc.unavailable, errors.Is(err, ErrUnavailable))
		})
	}
}

func TestBuildWithSilero(t *testing.T) {
	testenv.Model(t, SileroFile)
	s := Stages{VAD: VADSilero, ASR: ASRScripted, Turn: TurnSmart, TurnModel: tinySmartTurn, LLM: LLMScripted, TTS: TTSNone}
	s.Script = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(s.Script, []byte(`{"replies":["hello"]}`), 0o644))
	cfg, closeStages, err := Build(s, clock.NewVirtual())
	require.NoError(t, err)
	assert.NotNil(t, cfg.VAD)
	assert.NotNil(t, cfg.Turn)
	require.NoError(t, closeStages())
}
