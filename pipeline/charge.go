package pipeline

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/tts/normalize"
	"github.com/voiceassistant/voice/vad"
)

// stages are the session's stages as the pipeline calls them. With a
// compute scale each is wrapped here, once, by the charger (package
// compute), so no call site charges anything and none is left off the
// clock.
type stages struct {
	listen listen.Stages
	llm    Generator
	tts    Synthesizer
}

func wireStages(cfg Config, c *compute.Charger) stages {
	s := stages{listen: listen.Stages{VAD: cfg.VAD, ASR: cfg.ASR, Turn: cfg.Turn}, llm: cfg.LLM, tts: cfg.TTS}
	l := &s.listen
	l.Quiet, _ = cfg.ASR.(QuietFinalizer)
	l.Fork, _ = cfg.ASR.(Forker)
	if c == nil {
		return s
	}
	l.VAD = chargedVAD{cfg.VAD, c}
	l.ASR = chargedASR{cfg.ASR, c}
	s.llm = chargedGenerator{cfg.LLM, c}
	if cfg.Turn != nil {
		l.Turn = chargedTurn{cfg.Turn, c}
	}
	if l.Quiet != nil {
		l.Quiet = chargedQuiet{l.Quiet, c}
	}
	if l.Fork != nil {
		l.Fork = chargedForker{l.Fork, c}
	}
	if cfg.TTS != nil {
		s.tts = chargedSynthesizer{cfg.TTS, c}
	}
	return s
}

// The listening path's stages: each call falls on the listening path.

type chargedVAD struct {
	VAD
	c *compute.Charger
}

func (v chargedVAD) Process(f audio.Frame) (vad.Result, error) {
	return compute.Listen(v.c, event.StageVAD, func() (vad.Result, error) { return v.VAD.Process(f) })
}

type chargedASR struct {
	ASR
	c *compute.Charger
}

func (a chargedASR) Accept(f audio.Frame) (string, error) {
	return compute.Listen(a.c, event.StageASR, func() (string, error) { return a.ASR.Accept(f) })
}

func (a chargedASR) Finalize() (string, error) {
	return compute.Listen(a.c, event.StageASRFinal, a.ASR.Finalize)
}

type chargedQuiet struct {
	QuietFinalizer
	c *compute.Charger
}

func (q chargedQuiet) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	return compute.Listen(q.c, event.StageASRFinal, func() (string, error) { return q.QuietFinalizer.FinalizeAfter(ctx, quiet) })
}

type chargedTurn struct {
	TurnDetector
	c *compute.Charger
}

func (d chargedTurn) Predict(ctx context.Context, pcm []float32) (float64, error) {
	return compute.Listen(d.c, event.StageTurn, func() (float64, error) { return d.TurnDetector.Predict(ctx, pcm) })
}

// chargedForker copies the recognizer on the listening path; the copy
// finalizes beside it, charging the account its context carries.
type chargedForker struct {
	Forker
	c *compute.Charger
}

func (f chargedForker) Fork() (Finalizer, error) {
	fork, err := compute.Listen(f.c, event.StageASR, f.Forker.Fork)
	if err != nil {
		return nil, err
	}
	return chargedFinalizer{fork, f.c}, nil
}

type chargedFinalizer struct {
	Finalizer
	c *compute.Charger
}

func (f chargedFinalizer) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	return compute.Once(f.c, ctx, event.StageASR, func() (string, error) { return f.Finalizer.FinalizeAfter(ctx, quiet) })
}

// A reply's stages run beside the listening path: each result they hand
// over waits for its compute, charged to the reply.

type chargedGenerator struct {
	Generator
	c *compute.Charger
}

func (g chargedGenerator) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	return g.Generator.Generate(ctx, conv, compute.Handed(g.c, ctx, event.StageLLM, emit))
}

type chargedSynthesizer struct {
	Synthesizer
	c *compute.Charger
}

func (s chargedSynthesizer) Synthesize(ctx context.Context, text string, lang normalize.Language, emit func([]float32) error) error {
	return s.Synthesizer.Synthesize(ctx, text, lang, compute.Handed(s.c, ctx, event.StageTTS, emit))
}
