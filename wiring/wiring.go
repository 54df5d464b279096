// Package wiring is the one place where concrete stage backends are chosen
// and built, shared by cmd/voice-agent and the GUI, so the pipeline never
// imports a stage implementation.
package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/tools"
	"github.com/voiceassistant/voice/tts/chunk"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/vad"
)

// Backend names. The real models are the defaults; the stand-ins are
// there for demos and tests and must be asked for by name.
const (
	VADSilero    = "silero"
	VADEnergy    = "energy" // stand-in
	ASRXASR      = "xasr"
	ASRScripted  = "scripted" // stand-in
	TurnSmart    = "smart-turn"
	TurnScripted = "scripted" // stand-in
	TurnNone     = "none"
	LLMMNN       = "mnn"
	LLMScripted  = "scripted" // stand-in
	TTSMoss      = "moss"
	TTSTone      = "tone" // stand-in
	TTSNone      = "none"
)

// Stages selects and configures the backends.
type Stages struct {
	VAD  string `yaml:"vad"`
	ASR  string `yaml:"asr"`
	Turn string `yaml:"turn"`
	LLM  string `yaml:"llm"`
	TTS  string `yaml:"tts"`
	// Script drives the scripted stand-ins (see Script).
	Script   string `yaml:"script"`
	ModelDir string `yaml:"model_dir"`
	// VADModel and TurnModel override where the models are looked for
	// (default: ModelDir, then the copies scripts/setup installs).
	VADModel    string `yaml:"vad_model"`
	TurnModel   string `yaml:"turn_model"`
	ASRModelDir string `yaml:"asr_model_dir"`
	LLMModelDir string `yaml:"llm_model_dir"`
	// TTSModelDir is the MOSS-TTS-Nano ONNX set; TTSCodecDir its audio
	// tokenizer (default: where the set's manifest points); Voice a
	// built-in voice.
	TTSModelDir string `yaml:"tts_model_dir"`
	TTSCodecDir string `yaml:"tts_codec_dir"`
	Voice       string `yaml:"voice"`
	// TTSLowMemory trades the start of long chunks for the synthesizer's
	// prefill graph (see moss.Options.LowMemory).
	TTSLowMemory bool `yaml:"tts_low_memory"`
	// MemoryBudget is the anonymous memory, in MiB, the installed models
	// may be expected to take (ExpectedMemory): Build refuses a set over
	// it. 0 turns the check off; the default is DefaultMemoryBudget.
	MemoryBudget int `yaml:"memory_budget"`
	// LLMThreads is the LLM's CPU threads (0: one per core but one, at
	// most 4; see mnn.Config.Threads).
	LLMThreads int `yaml:"llm_threads"`
	// LLMMaxTokens bounds a reply of the MNN LLM (0: 512).
	LLMMaxTokens int `yaml:"llm_max_tokens"`
	// VADThreads, TurnThreads, ASRThreads and TTSThreads are the ONNX
	// models' intra-op threads (0: one). The stages run side by side, so
	// on a 2-4 core SoC one each is usually fastest overall.
	VADThreads  int `yaml:"vad_threads"`
	TurnThreads int `yaml:"turn_threads"`
	ASRThreads  int `yaml:"asr_threads"`
	TTSThreads  int `yaml:"tts_threads"`
	// ONNXRuntime is the ONNX Runtime library (default: $ONNXRUNTIME_LIB,
	// the copy scripts/setup installs, then the system's).
	ONNXRuntime string `yaml:"onnxruntime"`
	// ONNXProfile has ONNX Runtime profile every node of the ONNX stages'
	// sessions under this file prefix (onnx.Options.Profile): a
	// measurement's setting (bench stages --profile), not a knob.
	ONNXProfile string `yaml:"-"`

	SystemPrompt string `yaml:"system_prompt"`
	// HistoryChars bounds the conversation sent to the LLM (0: no bound);
	// see llm.History for how it is trimmed.
	HistoryChars int `yaml:"history_chars"`
	// HistoryTokens bounds it in the LLM's tokens too, where it can count
	// them (mnn.Model.CountTokens; 0: no bound): the LLM's KV cache holds
	// the conversation, so this bounds its memory (docs/performance.md,
	// "The KV cache's memory").
	HistoryTokens int `yaml:"history_tokens"`
	// Activation is what opens a user turn: any speech (always), the
	// host's talk button through the control socket (push), or a wake
	// phrase, the host's wake, and the follow-up window after a reply
	// (wake; see listen.Activation).
	Activation pipeline.ActivationMode `yaml:"activation"`
	// WakePhrases are the wake phrases, in any language (activation wake;
	// none at all: only the host's wake opens a turn).
	WakePhrases []string `yaml:"wake_phrases"`
	// FollowUp is how long after a reply the next turn needs no wake
	// phrase (activation wake).
	FollowUp time.Duration `yaml:"follow_up"`
	// BargeIn is what happens when the user speaks over a reply.
	BargeIn pipeline.BargeIn `yaml:"barge_in"`
	// Speculate starts the reply at the user's first pause, before the
	// turn is committed, where the LLM can take it back (see
	// pipeline.Config.Speculate).
	Speculate bool `yaml:"speculate"`
	// Continue is when speech right after a commit continues that turn
	// (see pipeline.Continuation).
	Continue pipeline.Continuation `yaml:"continue"`
	// Chunk is how the reply is cut for synthesis: a short first chunk
	// gets the first audio out sooner.
	Chunk chunk.Config `yaml:"chunk"`

	// Endpoint and VADTuning are the endpointing policy and the speech
	// detector's thresholds (see turn.Config and vad.Config for what each
	// default is and why).
	Endpoint  turn.Config `yaml:"endpoint"`
	VADTuning vad.Config  `yaml:"vad_tuning"`

	// FrontEnd cleans the microphone with what is played as reference.
	FrontEnd FrontEnd `yaml:"frontend"`

	// Tools are what the model may call besides talking.
	Tools Tools `yaml:"tools"`
}

// FrontEnd selects the audio front-end's parts.
type FrontEnd struct {
	AEC bool `yaml:"aec"`
	NS  bool `yaml:"ns"`
	AGC bool `yaml:"agc"`
	// DelayMS is the speaker-to-microphone delay if known; 0 leaves it to
	// the echo canceller's own estimate.
	DelayMS int `yaml:"delay_ms"`
	// HalfDuplex closes the microphone while the assistant speaks; it is
	// turned on by itself when echo cancellation is wanted but not built.
	HalfDuplex     bool          `yaml:"half_duplex"`
	HalfDuplexTail time.Duration `yaml:"half_duplex_tail"`
}

// DefaultStages are the real models. The pipeline's settings take the
// pipeline's own defaults, which are set there alone.
func DefaultStages() Stages {
	p := pipeline.DefaultConfig()
	return Stages{
		VAD: VADSilero, ASR: ASRXASR, Turn: TurnSmart, LLM: LLMMNN, TTS: TTSMoss,
		SystemPrompt:  "You are a helpful voice assistant. Answer briefly, in plain spoken language.",
		HistoryChars:  4000,
		HistoryTokens: 2048,
		MemoryBudget:  DefaultMemoryBudget(runtime.GOARCH),
		Activation:    pipeline.ActivateAlways,
		WakePhrases:   listen.DefaultWakePhrases(),
		FollowUp:      listen.DefaultFollowUp,
		BargeIn:       p.BargeIn,
		Speculate:     p.Speculate,
		Continue:      p.Continue,
		Chunk:         chunk.DefaultConfig(),
		Endpoint:      p.Endpoint,
		VADTuning:     vad.DefaultConfig(),
		FrontEnd:      FrontEnd{AEC: true, NS: true, HalfDuplexTail: p.HalfDuplex.Tail},
		Tools:         DefaultTools(),
	}
}

// Build returns a pipeline configuration with every stage constructed, and
// a function that releases the stages' resources (model sessions); the
// caller adds the clock and device.
func Build(s Stages, clk clock.Clock) (pipeline.Config, func() error, error) {
	cfg, _, closeStages, err := buildSession(s, clk, nil)
	return cfg, closeStages, err
}

// buildSession is Build, with the host's tools going into reg (nil: a
// registry of its own), and the session's tools (nil when off).
func buildSession(s Stages, clk clock.Clock, reg *tools.Registry) (pipeline.Config, *Toolset, func() error, error) {
	var closers closeAll
	cfg, ts, err := build(s, clk, reg, &closers)
	if err != nil {
		closers.close()
		return cfg, nil, func() error { return nil }, err
	}
	return cfg, ts, closers.close, nil
}

type closeAll []func() error

func (c *closeAll) add(f func() error) { *c = append(*c, f) }

func (c *closeAll) close() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}

// Validate names the first setting that makes no sense by its key in the
// config file (flags are named after the keys), so a typo on a headless
// device is an error, not a silently different assistant.
func (s Stages) Validate() error {
	for _, c := range s.choices() {
		if !slices.Contains(c.valid, *c.value) {
			return fmt.Errorf("config: stages.%s: %q is not one of %s", c.key, *c.value, strings.Join(c.valid, ", "))
		}
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"llm_threads", s.LLMThreads}, {"vad_threads", s.VADThreads}, {"turn_threads", s.TurnThreads}, {"asr_threads", s.ASRThreads}, {"tts_threads", s.TTSThreads}} {
		if n.v < 0 || n.v > 256 {
			return fmt.Errorf("config: stages.%s: %d is not between 0 (the default) and 256", n.key, n.v)
		}
	}
	if s.LLMMaxTokens < 0 {
		return fmt.Errorf("config: stages.llm_max_tokens: %d is negative (0 means 512)", s.LLMMaxTokens)
	}
	if s.MemoryBudget < 0 || s.MemoryBudget > maxMemoryBudget {
		return fmt.Errorf("config: stages.memory_budget: %d MiB is not between 0 (no budget) and %d (1 TiB)", s.MemoryBudget, maxMemoryBudget)
	}
	if s.HistoryChars < 0 {
		return fmt.Errorf("config: stages.history_chars: %d is negative (0 means no bound)", s.HistoryChars)
	}
	if s.HistoryTokens < 0 {
		return fmt.Errorf("config: stages.history_tokens: %d is negative (0 means no bound)", s.HistoryTokens)
	}
	if err := s.BargeIn.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Tools.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Continue.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Endpoint.Validate(); err != nil {
		return fmt.Errorf("config: stages.%w", err)
	}
	if err := s.Chunk.Validate(); err != nil {
		return fmt.Errorf("config: stages.chunk.%w", err)
	}
	if err := s.VADTuning.Validate(); err != nil {
		return fmt.Errorf("config: stages.vad_tuning: %w", err)
	}
	if err := (pipeline.HalfDuplex{Tail: s.FrontEnd.HalfDuplexTail}).Validate(); err != nil {
		return fmt.Errorf("config: stages.frontend.%w", err)
	}
	if d := s.FrontEnd.DelayMS; d < 0 || d > 1000 {
		return fmt.Errorf("config: stages.frontend.delay_ms: %d is not between 0 (estimate it) and 1000", d)
	}
	return nil
}

// prefiller is an LLM that can run a prompt into its KV cache without
// replying (mnn.Model).
type prefiller interface {
	Prefill(ctx context.Context, conv []llm.Message) (llm.Stats, error)
}

// tokenCounter is an LLM that can count its tokens (mnn.Model).
type tokenCounter interface {
	CountTokens(text string) int
}

// NewHistory is the conversation's history as s bounds it, in gen's
// tokens too where gen can count them.
func NewHistory(s Stages, gen pipeline.Generator) *llm.History {
	h := llm.NewHistory(s.SystemPrompt, s.HistoryChars)
	if c, ok := gen.(tokenCounter); ok && s.HistoryTokens > 0 {
		h.BoundTokens(c.CountTokens, s.HistoryTokens)
	}
	return h
}

func build(s Stages, clk clock.Clock, reg *tools.Registry, closers *closeAll) (pipeline.Config, *Toolset, error) {
	cfg := pipeline.DefaultConfig()
	if err := s.Validate(); err != nil {
		return cfg, nil, err
	}
	cfg.Activation = pipeline.Activation{Mode: s.Activation, Phrases: s.WakePhrases, FollowUp: s.FollowUp}
	cfg.BargeIn = s.BargeIn
	cfg.Speculate = s.Speculate
	cfg.Continue = s.Continue
	cfg.Endpoint = s.Endpoint
	cfg.HalfDuplex = pipeline.HalfDuplex{Enabled: s.FrontEnd.HalfDuplex, Tail: s.FrontEnd.HalfDuplexTail}
	cfg.NewChunker = func() pipeline.Chunker { return chunk.New(s.Chunk) }

	expected := s.ExpectedMemory()
	level := slog.LevelDebug
	if s.MemoryBudget > 0 {
		level = slog.LevelInfo
	}
	slog.Log(context.Background(), level, "memory expected at the peak, anonymous, MiB", "stages", Breakdown(expected), "budget", s.MemoryBudget)
	if err := CheckMemory(expected, s.MemoryBudget); err != nil {
		return cfg, nil, err
	}
	b := &builder{s: s, clk: clk, closers: closers}
	if s.ASR == ASRScripted || s.LLM == LLMScripted || s.Turn == TurnScripted {
		// Once, before the doubles that share it.
		if _, err := b.loadScript(); err != nil {
			return cfg, nil, err
		}
	}
	// Every stage is built, so that one run names every missing model.
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	cfg.VAD, err = pick(b, "vad", vadBackends, s.VAD)
	keep(err)
	cfg.ASR, err = pick(b, "asr", asrBackends, s.ASR)
	keep(err)
	cfg.Turn, err = pick(b, "turn", turnBackends, s.Turn)
	keep(err)
	cfg.LLM, err = pick(b, "llm", llmBackends, s.LLM)
	keep(err)
	cfg.History = NewHistory(s, cfg.LLM)
	var ts *Toolset
	if s.Tools.Enabled && err == nil {
		// Before the prefill: the tools are part of every prompt's start.
		ts, err = NewToolset(s.Tools, clk, cfg.History, cfg.LLM, reg)
		keep(err)
		if err == nil {
			closers.add(ts.Close)
			cfg.Tools, cfg.ToolPolicy, cfg.Notices = ts.Registry, s.Tools.Policy(), ts.Timers.Fired()
		}
	}
	if p, ok := cfg.LLM.(prefiller); ok && err == nil && s.SystemPrompt != "" {
		// Every conversation starts with the system prompt: prefilled now,
		// at start-up, it is not on the first reply's path.
		_, err := p.Prefill(context.Background(), cfg.History.Messages())
		keep(err)
	}
	cfg.TTS, err = pick(b, "tts", ttsBackends, s.TTS)
	keep(err)
	return cfg, ts, errors.Join(errs...)
}
