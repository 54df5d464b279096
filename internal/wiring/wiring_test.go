package wiring

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
)

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
		{name: "real models are reported one by one", edit: func(s *Stages) { *s = DefaultStages() }, unavailable: true,
			errs: []string{`VAD backend "silero"`, `ASR backend "xasr"`, `turn detector backend "smart-turn"`, `LLM backend "mnn"`, `TTS backend "moss"`}},
		{name: "unknown backend", edit: func(s *Stages) { s.VAD = "webrtc" }, errs: []string{`unknown --vad backend "webrtc"`}},
		{name: "scripted without a script", edit: func(s *Stages) { s.Script = "" }, errs: []string{"need --script FILE"}},
		{name: "script missing", edit: func(s *Stages) { s.Script = "/nonexistent.json" }, errs: []string{"/nonexistent.json"}},
		{name: "script without replies", edit: func(s *Stages) { s.Script = noReplies }, errs: []string{"no replies"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := doubles
			tc.edit(&s)
			cfg, err := Build(s, clock.NewVirtual())
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
