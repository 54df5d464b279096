package wiring

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/asr/xasr"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// backend is one way to run a stage: its name, as the flags and the config
// file say it, and how to build it. A stand-in (package standin) is for
// demos and tests: it is never a default, and it is only run when asked
// for by name. A backend that runs nothing (turn or TTS "none") builds a
// nil stage.
type backend[T any] struct {
	name    string
	about   string // what it is, where it is not the real thing
	standIn bool
	off     bool // the stage does not run
	build   func(*builder) (T, error)
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
		{name: VADEnergy, standIn: true, build: func(*builder) (pipeline.VAD, error) {
			return standin.NewEnergyVAD(), nil
		}},
	}
	// X-ASR pads the end of an utterance: the pipeline tells it how much
	// quiet it already heard, and finalizes a fork of it early.
	_ pipeline.QuietFinalizer = forkingRecognizer{}
	_ pipeline.Forker         = forkingRecognizer{}

	asrBackends = []backend[pipeline.ASR]{
		{name: ASRXASR, build: func(b *builder) (pipeline.ASR, error) {
			r, err := NewRecognizer(b.s)
			if err != nil {
				return nil, err
			}
			b.closers.add(r.Close)
			return forkingRecognizer{r}, nil
		}},
		{name: ASRScripted, standIn: true, build: func(b *builder) (pipeline.ASR, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			return &standin.ScriptedASR{Script: script.Utterances()}, nil
		}},
	}
	turnBackends = []backend[pipeline.TurnDetector]{
		{name: TurnSmart, build: func(b *builder) (pipeline.TurnDetector, error) {
			m, err := openTurnDetector(b.s, turnModelFix+", or --turn none to end turns on silence alone")
			if err != nil {
				return nil, err
			}
			b.closers.add(m.Close)
			return m, nil
		}},
		{name: TurnNone, about: "silence only", off: true, build: func(*builder) (pipeline.TurnDetector, error) { return nil, nil }},
		{name: TurnScripted, standIn: true, build: func(b *builder) (pipeline.TurnDetector, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			return &standin.TimedTurn{Clock: b.clk, Script: script.Utterances()}, nil
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
		{name: LLMScripted, standIn: true, build: func(b *builder) (pipeline.Generator, error) {
			script, err := b.loadScript()
			if err != nil {
				return nil, err
			}
			if len(script.Replies) == 0 {
				return nil, fmt.Errorf("script %s: no replies for the scripted LLM", b.s.Script)
			}
			return &standin.ScriptedLLM{Clock: b.clk, Replies: script.Replies,
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
		{name: TTSNone, about: "text only", off: true, build: func(*builder) (pipeline.Synthesizer, error) { return nil, nil }},
		{name: TTSTone, standIn: true, build: func(*builder) (pipeline.Synthesizer, error) {
			return standin.NewToneTTS(), nil
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
// energy (stand-in)".
func describe[T any](backends []backend[T]) string {
	var parts []string
	for _, be := range backends {
		p := be.name
		switch {
		case be.standIn:
			p += " (stand-in)"
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

// lookup is the backend called name, if there is one.
func lookup[T any](backends []backend[T], name string) (backend[T], bool) {
	i := slices.IndexFunc(backends, func(be backend[T]) bool { return be.name == name })
	if i < 0 {
		return backend[T]{}, false
	}
	return backends[i], true
}

// stageChoice is one stage's choice of backend, as the flags and the
// config file make it.
type stageChoice struct {
	key, what string // config key and flag name; what the flag's help calls it
	group     FlagGroup
	value     *string
	valid     []string
	help      string
	// standIn and off say what the value chosen is: a stand-in for a
	// model, or nothing run.
	standIn, off bool
}

func choice[T any](key, what string, group FlagGroup, value *string, backends []backend[T]) stageChoice {
	be, _ := lookup(backends, *value)
	return stageChoice{key: key, what: what, group: group, value: value,
		valid: names(backends), help: describe(backends), standIn: be.standIn, off: be.off}
}

// choices are s's backend choices, in the pipeline's order.
func (s *Stages) choices() []stageChoice {
	return []stageChoice{
		choice("vad", "VAD backend", VADFlags, &s.VAD, vadBackends),
		choice("asr", "ASR backend", ASRFlags, &s.ASR, asrBackends),
		choice("turn", "turn detector", TurnFlags, &s.Turn, turnBackends),
		choice("llm", "LLM backend", LLMFlags, &s.LLM, llmBackends),
		choice("tts", "TTS backend", TTSFlags, &s.TTS, ttsBackends),
	}
}

// StageBackend is the backend a stage runs, as s chooses it.
type StageBackend struct {
	Stage   string // vad, asr, turn, llm or tts
	Backend string
	// StandIn is set for a stand-in for a model (package standin); Off
	// for a stage that does not run (turn or TTS "none").
	StandIn, Off bool
}

// Backends are the backends s chooses, stage by stage.
func (s Stages) Backends() []StageBackend {
	var out []StageBackend
	for _, c := range s.choices() {
		out = append(out, StageBackend{Stage: c.key, Backend: *c.value, StandIn: c.standIn, Off: c.off})
	}
	return out
}

// StandIns names the stages s runs on a stand-in.
func (s Stages) StandIns() []string {
	var out []string
	for _, b := range s.Backends() {
		if b.StandIn {
			out = append(out, b.Stage)
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

// forkingRecognizer is X-ASR with its forks as the pipeline takes them.
type forkingRecognizer struct{ *xasr.Recognizer }

func (r forkingRecognizer) Fork() (pipeline.Finalizer, error) {
	f, err := r.Recognizer.Fork()
	if err != nil {
		return nil, err
	}
	return f, nil
}
