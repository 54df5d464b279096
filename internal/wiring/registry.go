package wiring

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/pipelinetest"
)

// backend is one way to run a stage: its name, as the flags and the config
// file say it, and how to build it. A test double is for demos and tests:
// it is never a default, and it is only run when asked for by name. A
// backend that runs nothing (turn or TTS "none") builds a nil stage.
type backend[T any] struct {
	name   string
	about  string // what it is, where it is not the real thing
	double bool
	build  func(*builder) (T, error)
}

// builder is what backends are built from: the settings, the session's
// clock, the doubles' script (read when a backend first asks for it) and
// what to release when the session ends.
type builder struct {
	s       Stages
	clk     clock.Clock
	script  *Script
	closers *closeAll
}

func (b *builder) loadScript() (*Script, error) {
	if b.script == nil {
		var err error
		if b.script, err = loadScript(b.s.Script); err != nil {
			return nil, err
		}
	}
	return b.script, nil
}

// The backends of each stage, the real one first. A new backend is one
// more entry here; if it loads a model, also a row in StageModels, its
// cachePaths entry and its flags (flags.go).
var (
	vadBackends = []backend[pipeline.VAD]{
		{name: VADSilero, build: func(b *builder) (pipeline.VAD, error) {
			d, closeVAD, err := NewVAD(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(closeVAD)
			return d, nil
		}},
		{name: VADEnergy, double: true, build: func(*builder) (pipeline.VAD, error) {
			return pipelinetest.NewEnergyVAD(), nil
		}},
	}
	asrBackends = []backend[pipeline.ASR]{
		{name: ASRXASR, build: func(b *builder) (pipeline.ASR, error) {
			r, err := NewRecognizer(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(r.Close)
			return r, nil
		}},
		{name: ASRScripted, double: true, build: func(b *builder) (pipeline.ASR, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			return &pipelinetest.ScriptedASR{Script: script.Utterances()}, nil
		}},
	}
	turnBackends = []backend[pipeline.TurnDetector]{
		{name: TurnSmart, build: func(b *builder) (pipeline.TurnDetector, error) {
			m, err := NewTurnDetector(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(m.Close)
			return m, nil
		}},
		{name: TurnNone, about: "silence only", build: func(*builder) (pipeline.TurnDetector, error) { return nil, nil }},
		{name: TurnScripted, double: true, build: func(b *builder) (pipeline.TurnDetector, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			return &pipelinetest.TimedTurn{Clock: b.clk, Script: script.Utterances()}, nil
		}},
	}
	llmBackends = []backend[pipeline.Generator]{
		{name: LLMMNN, build: func(b *builder) (pipeline.Generator, error) {
			m, err := newMNN(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(m.Close)
			return m, nil
		}},
		{name: LLMScripted, double: true, build: func(b *builder) (pipeline.Generator, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			if len(script.Replies) == 0 {
				return nil, fmt.Errorf("script %s: no replies for the scripted LLM", b.s.Script)
			}
			return &pipelinetest.ScriptedLLM{Clock: b.clk, Replies: script.Replies,
				FirstToken: msDur(script.FirstTokenMS), TokensPerSecond: script.TokensPerSecond}, nil
		}},
	}
	ttsBackends = []backend[pipeline.Synthesizer]{
		{name: TTSMoss, build: func(b *builder) (pipeline.Synthesizer, error) {
			m, err := newMoss(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(m.Close)
			return m, nil
		}},
		{name: TTSNone, about: "text only", build: func(*builder) (pipeline.Synthesizer, error) { return nil, nil }},
		{name: TTSTone, double: true, build: func(*builder) (pipeline.Synthesizer, error) {
			return pipelinetest.NewToneTTS(), nil
		}},
	}
)

// pick builds the backend called name of the stage whose flag is key.
func pick[T any](b *builder, key string, backends []backend[T], name string) (T, error) {
	for _, be := range backends {
		if be.name == name {
			return be.build(b)
		}
	}
	var none T
	return none, fmt.Errorf("unknown --%s backend %q (valid: %s)", key, name, strings.Join(names(backends), ", "))
}

// buildOne builds one stage alone, and the function that releases it.
func buildOne[T any](s Stages, clk clock.Clock, key string, backends []backend[T], name string) (T, func() error, error) {
	var closers closeAll
	v, err := pick(&builder{s: s, clk: clk, closers: &closers}, key, backends, name)
	if err != nil {
		return v, func() error { return nil }, errors.Join(err, closers.close())
	}
	return v, closers.close, nil
}

// NewGenerator builds the language model s chooses, and the function that
// releases it.
func NewGenerator(s Stages, clk clock.Clock) (pipeline.Generator, func() error, error) {
	return buildOne(s, clk, "llm", llmBackends, s.LLM)
}

// NewSynthesizer builds the speech synthesizer s chooses (nil for none),
// and the function that releases it.
func NewSynthesizer(s Stages) (pipeline.Synthesizer, func() error, error) {
	return buildOne(s, nil, "tts", ttsBackends, s.TTS)
}

func names[T any](backends []backend[T]) []string {
	out := make([]string, len(backends))
	for i, be := range backends {
		out[i] = be.name
	}
	return out
}

// describe lists a stage's backends for its flag's help: "silero, or
// energy (test double)".
func describe[T any](backends []backend[T]) string {
	var parts []string
	for _, be := range backends {
		p := be.name
		switch {
		case be.double:
			p += " (test double)"
		case be.about != "":
			p += " (" + be.about + ")"
		}
		parts = append(parts, p)
	}
	if n := len(parts); n > 1 {
		parts[n-1] = "or " + parts[n-1]
	}
	return strings.Join(parts, ", ")
}

// isDouble is whether the backend called name is a test double.
func isDouble[T any](backends []backend[T], name string) bool {
	i := slices.IndexFunc(backends, func(be backend[T]) bool { return be.name == name })
	return i >= 0 && backends[i].double
}

// stageChoice is one stage's choice of backend, as the flags and the
// config file make it.
type stageChoice struct {
	key, what string // config key and flag name; what the flag's help calls it
	group     FlagGroup
	value     *string
	valid     []string
	help      string
	double    bool // whether the value chosen is a test double
}

// choices are s's backend choices, in the pipeline's order.
func (s *Stages) choices() []stageChoice {
	return []stageChoice{
		{"vad", "VAD backend", VADFlags, &s.VAD, names(vadBackends), describe(vadBackends), isDouble(vadBackends, s.VAD)},
		{"asr", "ASR backend", ASRFlags, &s.ASR, names(asrBackends), describe(asrBackends), isDouble(asrBackends, s.ASR)},
		{"turn", "turn detector", TurnFlags, &s.Turn, names(turnBackends), describe(turnBackends), isDouble(turnBackends, s.Turn)},
		{"llm", "LLM backend", LLMFlags, &s.LLM, names(llmBackends), describe(llmBackends), isDouble(llmBackends, s.LLM)},
		{"tts", "TTS backend", TTSFlags, &s.TTS, names(ttsBackends), describe(ttsBackends), isDouble(ttsBackends, s.TTS)},
	}
}

// Doubles names the stages s runs on a test double.
func (s Stages) Doubles() []string {
	var out []string
	for _, c := range s.choices() {
		if c.double {
			out = append(out, c.key)
		}
	}
	return out
}

// choiceFlag is a backend flag: a name that is not one of the stage's
// backends is refused when the flags are parsed, with the valid ones.
type choiceFlag struct{ stageChoice }

func (c choiceFlag) String() string { return *c.value }
func (c choiceFlag) Type() string   { return "name" }

func (c choiceFlag) Set(v string) error {
	if !slices.Contains(c.valid, v) {
		return fmt.Errorf("%q is not one of %s", v, strings.Join(c.valid, ", "))
	}
	*c.value = v
	return nil
}
