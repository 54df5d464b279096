package voicebench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// worker answers samples one at a time with its own stages.
type worker interface {
	// answer returns the sample's result, an *InputError for a sample
	// that cannot be answered as given, or another error that should stop
	// the run.
	answer(ctx context.Context, s Sample) (Result, error)
	close() error
}

// InputError is a sample whose input is unusable (unreadable audio, no
// prompt): it is reported, not written, so a rerun tries it again once the
// data is fixed.
type InputError struct {
	ID  string
	Err error
}

func (e *InputError) Error() string { return fmt.Sprintf("sample %s: %v", e.ID, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }

func newWorkers(cfg Config) ([]worker, error) {
	if cfg.Modality == ModalityAudio {
		_, closeFE, halfDuplex, err := wiring.NewFrontEnd(cfg.Stages)
		if err != nil {
			return nil, err
		}
		closeFE()
		if halfDuplex {
			cfg.Log.Warn("echo cancellation is not in this build (scripts/setup builds it in; docs/how-it-works.md, Echo); running half duplex")
		}
	}
	var ws []worker
	for range cfg.Workers {
		var (
			w   worker
			err error
		)
		if cfg.Modality == ModalityAudio {
			w, err = newVoiceWorker(cfg.Stages, cfg.ComputeScale)
		} else {
			w, err = newTextWorker(cfg.Stages)
		}
		if err != nil {
			for _, w := range ws {
				err = errors.Join(err, w.close())
			}
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// voiceWorker replays each sample's audio through the whole pipeline,
// built once and reset between samples.
type voiceWorker struct {
	stages  wiring.Stages
	clk     *sessionClock
	cfg     pipeline.Config
	release func() error
}

func newVoiceWorker(s wiring.Stages, computeScale float64) (*voiceWorker, error) {
	clk := &sessionClock{}
	cfg, release, err := wiring.Build(s, clk)
	if err != nil {
		return nil, err
	}
	cfg.ComputeScale = computeScale
	return &voiceWorker{stages: s, clk: clk, cfg: cfg, release: release}, nil
}

func (w *voiceWorker) close() error { return w.release() }

func (w *voiceWorker) answer(ctx context.Context, s Sample) (Result, error) {
	pcm, err := s.PCM(ctx)
	if err != nil {
		return Result{}, &InputError{ID: s.ID, Err: err}
	}
	// Every sample starts a new session at time zero: its own clock, an
	// empty conversation, detectors without memory of the last sample.
	clk := clock.NewVirtual()
	w.clk.use(clk)
	cfg := w.cfg
	cfg.History = wiring.NewHistory(w.stages, cfg.LLM)
	cfg.VAD.Reset()
	cfg.ASR.Reset()
	fe, closeFE, halfDuplex, err := wiring.NewFrontEnd(w.stages)
	if err != nil {
		return Result{}, err
	}
	defer closeFE()
	cfg.HalfDuplex.Enabled = cfg.HalfDuplex.Enabled || halfDuplex
	// The device feeds silence after the input (VirtualConfig.MinTail), so
	// a question that ends with the recording still gets its turn.
	dev := audio.VirtualConfig{Input: pcm, FrontEnd: fe, Stall: stall}
	var turn firstTurn
	_, runErr := pipeline.Replay(ctx, clk, cfg, dev, turn.observe)
	return turn.result(s, runErr), nil
}

// stall is how long a replay may wait for the stages within one device
// period. Models compute while the virtual clock stands still, and a long
// reply on a slow CPU, with other workers beside it, can take minutes.
const stall = 10 * time.Minute

// firstTurn collects what a replay did with the first user turn it
// committed: a turn the user went on with is committed again under its
// number, with the whole sentence, and a reply dropped for it publishes
// nothing more. Events arrive on one goroutine, and Replay returns after
// the last, so it needs no lock.
type firstTurn struct {
	turn       int
	transcript string
	reply      string
	metrics    *pipeline.TurnMetrics
	llm        *llm.Stats
	err        string
}

func (t *firstTurn) observe(e pipeline.Event) {
	if t.turn == 0 {
		if e.Type == pipeline.EvTurnCommit {
			t.turn, t.transcript = e.Turn, e.Text
		}
		return
	}
	if e.Turn != t.turn {
		return
	}
	switch e.Type {
	case pipeline.EvTurnCommit:
		t.transcript = e.Text
	case pipeline.EvLLMDone:
		t.reply, t.llm = e.Text, e.Stats
	case pipeline.EvTurnMetrics:
		m := *e.Metrics
		t.metrics = &m
	case pipeline.EvError:
		t.err = e.Err
	}
}

func (t *firstTurn) result(s Sample, runErr error) Result {
	res := Result{Sample: s, Response: t.reply, Transcript: &t.transcript, LLM: t.llm, Error: t.err}
	if m := t.metrics; m != nil {
		res.Latency = Latency{Endpoint: &m.EndpointingMS, ASRFinal: &m.ASRMS}
		if m.FirstToken > 0 {
			res.Latency.FirstToken = &m.FirstTokenMS
		}
		if m.FirstAudio > 0 {
			res.Latency.FirstAudio = &m.FirstAudioMS
		}
		if m.PlaybackStart > 0 {
			res.Latency.EndToEnd = &m.EndToEndMS
		}
	}
	switch {
	case runErr != nil:
		res.Error = runErr.Error()
	case t.turn == 0:
		res.Error = "no user turn was committed (no speech detected, or no words recognized)"
	}
	return res
}

// sessionClock is the clock a voice worker's stages are built with. Each
// sample replays on a fresh virtual clock; the stages that keep the clock
// they were built with (the scripted LLM) follow it through this.
type sessionClock struct{ cur atomic.Pointer[clock.Virtual] }

func (c *sessionClock) use(v *clock.Virtual) { c.cur.Store(v) }
func (c *sessionClock) Now() time.Duration   { return c.cur.Load().Now() }
func (c *sessionClock) Sleep(ctx context.Context, d time.Duration) error {
	return c.cur.Load().Sleep(ctx, d)
}
func (c *sessionClock) Hold()    { c.cur.Load().Hold() }
func (c *sessionClock) Release() { c.cur.Load().Release() }

// textWorker gives each sample's prompt straight to the LLM.
type textWorker struct {
	stages  wiring.Stages
	gen     pipeline.Generator
	release func() error
}

func newTextWorker(s wiring.Stages) (*textWorker, error) {
	// No audio runs, so no audio clock: the live clock waits in wall time.
	gen, release, err := wiring.NewGenerator(s, clock.NewStream(audio.ProcessingRate))
	if err != nil {
		return nil, err
	}
	return &textWorker{stages: s, gen: gen, release: release}, nil
}

func (w *textWorker) close() error { return w.release() }

func (w *textWorker) answer(ctx context.Context, s Sample) (Result, error) {
	prompt := s.Prompt()
	if prompt == "" {
		return Result{}, &InputError{ID: s.ID, Err: errors.New(`no "prompt" for text mode`)}
	}
	history := wiring.NewHistory(w.stages, w.gen)
	history.AddUser(prompt)
	var (
		reply strings.Builder
		first *float64
	)
	start := time.Now()
	stats, err := w.gen.Generate(ctx, history.Messages(), func(piece string) error {
		if first == nil {
			ms := float64(time.Since(start).Microseconds()) / 1000
			first = &ms
		}
		reply.WriteString(piece)
		return nil
	})
	res := Result{Sample: s, Response: reply.String(), Latency: Latency{FirstToken: first}, LLM: &stats}
	if err != nil {
		res.Error = err.Error()
	}
	return res, nil
}
