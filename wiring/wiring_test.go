package wiring

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/testenv"
)

var tinySmartTurn = filepath.Join("..", "turn", "smartturn", "testdata", "smart_turn_tiny.onnx")

func TestBuild(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"user":[{"start_ms":0,"end_ms":500,"text":"hi"}],"replies":["hello"]}`), 0o644))
	noReplies := filepath.Join(t.TempDir(), "empty.json")
	require.NoError(t, os.WriteFile(noReplies, []byte(`{"user":[]}`), 0o644))
	doubles := DefaultStages()
	doubles.VAD, doubles.ASR, doubles.Turn, doubles.LLM, doubles.TTS, doubles.Script = VADEnergy, ASRScripted, TurnNone, LLMScripted, TTSTone, script

	for _, tc := range []struct {
		name        string
		edit        func(*Stages)
		unavailable bool
		errs        []string
	}{
		{name: "doubles build", edit: func(*Stages) {}},
		{name: "text only", edit: func(s *Stages) { s.TTS = TTSNone }},
		{name: "missing real models are reported one by one", edit: func(s *Stages) { *s = DefaultStages() }, unavailable: true,
			errs: []string{"X-ASR not found", "Smart Turn v3.2 not found", "--turn none", "MNN", "MOSS-TTS-Nano not found"}},
		{name: "missing VAD model", edit: func(s *Stages) { s.VAD = VADSilero; s.ModelDir = t.TempDir(); s.VADModel = "/nonexistent/silero.onnx" },
			errs: []string{"/nonexistent/silero.onnx", "scripts/setup"}},
		{name: "an unreadable model directory is not a missing model", edit: func(s *Stages) { s.VAD = VADSilero; s.ModelDir = symlinkLoop(t) },
			errs: []string{"silero_vad_v5.onnx", "too many levels of symbolic links", "make it readable"}},
		{name: "Smart Turn from the model directory", edit: func(s *Stages) { s.Turn = TurnSmart; s.TurnModel = tinySmartTurn }},
		{name: "unknown backend", edit: func(s *Stages) { s.VAD = "webrtc" }, errs: []string{`stages.vad: "webrtc" is not one of silero, energy`}},
		{name: "scripted without a script", edit: func(s *Stages) { s.Script = "" }, errs: []string{"need --script FILE"}},
		{name: "script missing", edit: func(s *Stages) { s.Script = "/nonexistent.json" }, errs: []string{"/nonexistent.json"}},
		{name: "script without replies", edit: func(s *Stages) { s.Script = noReplies }, errs: []string{"no replies"}},
		{name: "threads per model", edit: func(s *Stages) { s.Turn = TurnSmart; s.TurnModel = tinySmartTurn; s.TurnThreads = 2; s.VADThreads = 1 }},
		{name: "negative threads", edit: func(s *Stages) { s.ASRThreads = -1 }, errs: []string{"stages.asr_threads: -1 is not between 0"}},
		{name: "negative min speech", edit: func(s *Stages) { s.BargeIn.MinSpeech = -time.Second }, errs: []string{"stages.barge_in.min_speech: -1s"}},
		{name: "negative fallback silence", edit: func(s *Stages) { s.Endpoint.FallbackSilence = -time.Second }, errs: []string{"stages.endpoint.fallback_silence: -1s"}},
		{name: "unknown barge-in mode", edit: func(s *Stages) { s.BargeIn.Mode = "sometimes" }, errs: []string{`stages.barge_in.mode: "sometimes"`}},
		{name: "empty backchannel", edit: func(s *Stages) { s.BargeIn.Backchannels = []string{"yeah", "..."} }, errs: []string{`stages.barge_in.backchannels: "..."`}},
		{name: "negative half-duplex tail", edit: func(s *Stages) { s.FrontEnd.HalfDuplexTail = -time.Millisecond }, errs: []string{"stages.frontend.half_duplex_tail"}},
		{name: "half-duplex tail past 10s", edit: func(s *Stages) { s.FrontEnd.HalfDuplexTail = 11 * time.Second }, errs: []string{"stages.frontend.half_duplex_tail: 11s is not between 0 and 10s"}},
		{name: "VAD threshold", edit: func(s *Stages) { s.VADTuning.Threshold = 2 }, errs: []string{"stages.vad_tuning: vad: threshold 2"}},
		{name: "zero min speech is allowed: interrupt at once", edit: func(s *Stages) { s.BargeIn.MinSpeech = 0 }},
		{name: "scripted turn detector", edit: func(s *Stages) { s.Turn = TurnScripted }},
		{name: "chunk limits", edit: func(s *Stages) { s.Chunk.FirstWords = -1 }, errs: []string{"stages.chunk.first_words: -1"}},
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
				assert.Equal(t, s.BargeIn, cfg.BargeIn, "the policy as configured, zeros included")
				assert.Equal(t, s.Endpoint, cfg.Endpoint)
				assert.Equal(t, s.Turn != TurnNone, cfg.Turn != nil)
				assert.Equal(t, s.Speculate, cfg.Speculate)
				return
			}
			require.Error(t, err)
			for _, want := range tc.errs {
				assert.Contains(t, err.Error(), want)
			}
			assert.Equal(t, tc.unavailable, errors.Is(err, ErrUnavailable))
			if tc.unavailable {
				// One line per stage for the user; the detail says where
				// it looked and how to get the model by hand.
				assert.Len(t, strings.Split(err.Error(), "\n"), 4)
				details := Details(err)
				require.Len(t, details, 4, "a detail for every stage")
				detail := strings.Join(details, "\n")
				assert.Contains(t, detail, "looked for smart-turn-v3.2-cpu.onnx in")
				assert.Contains(t, detail, "--turn-model PATH")
			}
		})
	}
}

func TestBuildWithSilero(t *testing.T) {
	testenv.Model(t, SileroFile)
	s := DefaultStages()
	s.VAD, s.ASR, s.Turn, s.TurnModel, s.LLM, s.TTS = VADSilero, ASRScripted, TurnSmart, tinySmartTurn, LLMScripted, TTSNone
	s.Script = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(s.Script, []byte(`{"replies":["hello"]}`), 0o644))
	cfg, closeStages, err := Build(s, clock.NewVirtual())
	require.NoError(t, err)
	assert.NotNil(t, cfg.VAD)
	assert.NotNil(t, cfg.Turn)
	require.NoError(t, closeStages())
}

// The scripted turn detector answers, at a time, for the utterance that
// ended last: its turn_complete, or 1 where the script gives none.
func TestScriptedTurnDetector(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"user":[
		{"start_ms":0,"end_ms":1000,"text":"what is the","turn_complete":0.1},
		{"start_ms":1300,"end_ms":2000,"text":"weather"}],"replies":["sunny"]}`), 0o644))
	s := DefaultStages()
	s.VAD, s.ASR, s.Turn, s.LLM, s.TTS, s.Script = VADEnergy, ASRScripted, TurnScripted, LLMScripted, TTSNone, script
	clk := clock.NewVirtual()
	cfg, closeStages, err := Build(s, clk)
	require.NoError(t, err)
	defer closeStages()
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{{500 * time.Millisecond, 0}, {1100 * time.Millisecond, 0.1}, {2200 * time.Millisecond, 1}} {
		clk.Advance(tc.at - clk.Now())
		p, err := cfg.Turn.Predict(t.Context(), nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, p, "at %v", tc.at)
	}
}

func TestParseScript(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		err        string
	}{
		{"words timed", `{"user":[{"start_ms":100,"end_ms":900,"text":"hi there","words":[{"text":"hi","start_ms":100,"end_ms":400},{"text":"there","start_ms":500,"end_ms":900}]}],"replies":["x"]}`, ""},
		{"end before start", `{"user":[{"start_ms":900,"end_ms":100,"text":"hi"}]}`, "user[0]: start_ms 900 and end_ms 100"},
		{"negative time", `{"user":[{"start_ms":-1,"end_ms":100,"text":"hi"}]}`, "user[0]"},
		{"a time past a day", `{"user":[{"start_ms":0,"end_ms":1e300,"text":"hi"}]}`, "user[0]"},
		{"word outside its utterance", `{"user":[{"start_ms":100,"end_ms":900,"text":"hi","words":[{"text":"hi","start_ms":0,"end_ms":400}]}]}`, "user[0].words[0]"},
		{"negative rate", `{"replies":["x"],"tokens_per_second":-1}`, "tokens_per_second -1"},
		{"turn_complete not a probability", `{"user":[{"start_ms":0,"end_ms":100,"text":"hi","turn_complete":1.5}]}`, "user[0]: turn_complete 1.5"},
		{"misspelt key", `{"replys":["x"]}`, `unknown field "replys"`},
		{"not JSON", `{"user":`, "script s.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseScript([]byte(tc.json), "s.json")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			u := s.Utterances()
			require.Len(t, u, 1)
			assert.Equal(t, 500*time.Millisecond, u[0].Words[1].Start)
		})
	}
}

// FuzzParseScript: a script either is refused with an error naming it, or
// gives utterances whose times are in order and within a day.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(`{"user":[{"start_ms":500,"end_ms":2295,"text":"what is the weather like today"}],"replies":["Sunny."],"first_token_ms":120,"tokens_per_second":25}`))
	f.Add([]byte(`{"user":[{"start_ms":100,"end_ms":900,"text":"hi there","words":[{"text":"hi","start_ms":100,"end_ms":400}]}]}`))
	f.Add([]byte(`{"user":[{"start_ms":1e308,"end_ms":-0}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data, "fuzz.json")
		if err != nil {
			require.Nil(t, s)
			require.Contains(t, err.Error(), "fuzz.json")
			return
		}
		for _, u := range s.Utterances() {
			require.LessOrEqual(t, time.Duration(0), u.Start)
			require.LessOrEqual(t, u.Start, u.End)
			require.LessOrEqual(t, u.End, 24*time.Hour)
			for _, w := range u.Words {
				require.True(t, u.Start <= w.Start && w.Start <= w.End && w.End <= u.End, "%+v in %+v", w, u)
			}
		}
	})
}

// The defaults are the real models, and each stage's stand-ins are
// marked as such: they run only when asked for by name.
func TestDefaultsAreNoDoubles(t *testing.T) {
	s := DefaultStages()
	assert.Empty(t, s.StandIns())
	for _, c := range s.choices() {
		assert.Equal(t, c.valid[0], *c.value, "%s: the real backend comes first and is the default", c.key)
	}
	s.ASR, s.LLM, s.TTS = ASRScripted, LLMScripted, TTSTone
	assert.Equal(t, []string{"asr", "llm", "tts"}, s.StandIns())
	s.TTS, s.Turn = TTSNone, TurnScripted
	assert.Equal(t, []string{"asr", "turn", "llm"}, s.StandIns(), "none is off, not a stand-in")
	assert.Equal(t, StageBackend{Stage: "tts", Backend: TTSNone, Off: true}, s.Backends()[4])
}

// A backend name that is not one is an error naming the valid ones, from
// the config file as from a flag.
func TestUnknownBackendIsRefused(t *testing.T) {
	s := DefaultStages()
	s.Turn = "smart_turn"
	require.ErrorContains(t, s.Validate(), `config: stages.turn: "smart_turn" is not one of smart-turn, none, scripted`)

	s = DefaultStages()
	f := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.AddBackendFlags(f, PipelineFlags)
	require.ErrorContains(t, f.Parse([]string{"--vad", "webrtc"}), `"webrtc" is not one of silero, energy`)
	require.NoError(t, f.Parse([]string{"--vad", "energy", "--tts", "none"}))
	assert.Equal(t, VADEnergy, s.VAD)
	assert.Equal(t, TTSNone, s.TTS)
}

// A model in the cache that changed since it was pulled (of the right
// size, but not the right bytes) is not loaded: the error names the file
// and the command that repairs it, and the stage counts as missing, for
// `run --pull` to fetch it again.
func TestChangedCachedModelIsRefused(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(assets.EnvCache, cache)
	manifest, err := assets.LoadManifest()
	require.NoError(t, err)
	silero, ok := manifest.Model("silero-vad-v5")
	require.True(t, ok)
	path := filepath.Join(cache, "silero-vad-v5", SileroFile)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, make([]byte, silero.Files[0].Size), 0o644))

	s := DefaultStages()
	_, _, err = s.model("", SileroFile)
	require.Error(t, err)
	for _, want := range []string{path, "changed or damaged", "voice-agent models pull silero-vad-v5"} {
		assert.ErrorContains(t, err, want)
	}
	assert.Contains(t, s.MissingStages(), "vad")
}

// symlinkLoop is a path that is there but cannot be looked into: it
// stands in for a folder without permissions, which root reads through.
func symlinkLoop(t *testing.T) string {
	loop := filepath.Join(t.TempDir(), "loop")
	require.NoError(t, os.Symlink(loop, loop))
	return loop
}
