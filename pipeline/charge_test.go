package pipeline_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/normalize"
)

// cpu is a compute clock that only stage calls move, a millisecond each,
// and that counts the calls per stage.
type cpu struct {
	mu    sync.Mutex
	now   time.Time
	calls map[string]int
}

func (c *cpu) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *cpu) work(stage string) { c.spend(stage, time.Millisecond) }

func (c *cpu) spend(stage string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.calls[stage]++
}

type cpuASR struct {
	*standin.ScriptedASR
	cpu *cpu
}

func (a cpuASR) Accept(f audio.Frame) (string, error) {
	a.cpu.work("asr")
	return a.ScriptedASR.Accept(f)
}

func (a cpuASR) Finalize() (string, error) {
	a.cpu.work("asr")
	return a.ScriptedASR.Finalize()
}

func (a cpuASR) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	a.cpu.work("asr")
	return a.ScriptedASR.FinalizeAfter(ctx, quiet)
}

type cpuTurn struct {
	standin.ScriptedTurn
	cpu *cpu
}

func (d *cpuTurn) Predict(ctx context.Context, pcm []float32) (float64, error) {
	d.cpu.work("turn")
	return d.ScriptedTurn.Predict(ctx, pcm)
}

// Every call the listening path makes to the recognizer and the turn
// model is charged: with a compute clock that moves a millisecond per
// call, the turns' figures add up to a millisecond per call (the
// pre-roll given to the recognizer as a turn opens was once left out).
func TestEveryListeningCallIsCharged(t *testing.T) {
	c := &cpu{now: time.Unix(0, 0), calls: map[string]int{}}
	s := scenario{
		length:  9 * time.Second,
		user:    weatherQuestions,
		replies: []string{"It is sunny today.", "Tomorrow it will rain."},
		tune: func(cfg *pipeline.Config) {
			cfg.ComputeScale = 1
			pipeline.MeasureComputeOn(cfg, c.Now)
			cfg.ASR = cpuASR{cfg.ASR.(*standin.ScriptedASR), c}
			cfg.Turn = &cpuTurn{ScriptedTurn: standin.ScriptedTurn{Probs: []float64{0.9}}, cpu: c}
		},
	}
	o := s.run(t)
	require.Len(t, o.result.Metrics, 2)
	var asr, turn float64
	for _, m := range o.result.Metrics {
		require.NotNil(t, m.Compute)
		asr += m.Compute.ASR
		turn += m.Compute.Turn
	}
	require.NotZero(t, c.calls["asr"])
	require.NotZero(t, c.calls["turn"])
	assert.InDelta(t, float64(c.calls["asr"]), asr, 1e-9, "recognizer calls charged, in ms")
	assert.InDelta(t, float64(c.calls["turn"]), turn, 1e-9, "turn model calls charged, in ms")
}

// finalASR computes only its final transcript: the recognizer's own, or
// (Fork) a copy's.
type finalASR struct {
	*standin.ForkingASR
	cpu   *cpu
	final time.Duration
}

func (a finalASR) Finalize() (string, error) {
	a.cpu.spend("asr", a.final)
	return a.ForkingASR.Finalize()
}

func (a finalASR) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	a.cpu.spend("asr", a.final)
	return a.ForkingASR.FinalizeAfter(ctx, quiet)
}

func (a finalASR) Fork() (pipeline.Finalizer, error) {
	fork, err := a.ForkingASR.Fork()
	return finalFork{fork, a}, err
}

type finalFork struct {
	pipeline.Finalizer
	asr finalASR
}

func (f finalFork) FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error) {
	f.asr.cpu.spend("asr", f.asr.final)
	return f.Finalizer.FinalizeAfter(ctx, quiet)
}

// firstLLM computes only up to each reply's first token: firsts[i] for the
// i-th call (the last for the calls after).
type firstLLM struct {
	*standin.ScriptedLLM
	cpu    *cpu
	firsts []time.Duration
	calls  *atomic.Int32
}

func (l firstLLM) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	first := l.firsts[min(int(l.calls.Add(1)), len(l.firsts))-1]
	started := false
	return l.ScriptedLLM.Generate(ctx, conv, func(piece string) error {
		if !started {
			started = true
			l.cpu.spend("llm", first)
		}
		return emit(piece)
	})
}

// firstTTS computes only up to each chunk's first audio.
type firstTTS struct {
	pipeline.Synthesizer
	cpu   *cpu
	first time.Duration
}

func (s firstTTS) Synthesize(ctx context.Context, text string, lang normalize.Language, emit func([]float32) error) error {
	s.cpu.spend("tts", s.first)
	return s.Synthesizer.Synthesize(ctx, text, lang, emit)
}

// computeOnly runs s with the final transcript, the LLM's first token (of
// the call firsts names) and each chunk's first audio computing the times
// given, and nothing else computing, and returns the turns' compute and
// the compute clock.
func computeOnly(t *testing.T, s scenario, final time.Duration, firsts []time.Duration, firstAudio time.Duration, fork bool) ([]*pipeline.StageCompute, *cpu) {
	c := &cpu{now: time.Unix(0, 0), calls: map[string]int{}}
	tune := s.tune
	s.tune = func(cfg *pipeline.Config) {
		cfg.ComputeScale = 1
		pipeline.MeasureComputeOn(cfg, c.Now)
		asr := finalASR{&standin.ForkingASR{ScriptedASR: cfg.ASR.(*standin.ScriptedASR), Clock: cfg.Clock}, c, final}
		cfg.ASR = asr
		if !fork {
			cfg.ASR = struct {
				pipeline.ASR
				pipeline.QuietFinalizer
			}{asr, asr}
		}
		cfg.LLM = firstLLM{cfg.LLM.(*standin.ScriptedLLM), c, firsts, new(atomic.Int32)}
		cfg.TTS = firstTTS{cfg.TTS, c, firstAudio}
		if tune != nil {
			tune(cfg)
		}
	}
	o := s.run(t)
	var out []*pipeline.StageCompute
	for _, m := range o.result.Metrics {
		require.NotNil(t, m.Compute)
		out = append(out, m.Compute)
	}
	return out, c
}

// A turn's compute-only latency is what the final transcript, the LLM up
// to its first token and the first chunk's synthesis up to its first
// audio computed, whichever way the final transcript was made; the
// reply's later pieces and chunks are not of it.
func TestComputeOnlyIsTheFinalTheFirstTokenAndTheFirstAudio(t *testing.T) {
	for _, fork := range []bool{false, true} {
		name := map[bool]string{false: "the recognizer finalized at the commit", true: "an early final's copy"}[fork]
		t.Run(name, func(t *testing.T) {
			s := scenario{
				length:  5 * time.Second,
				user:    []standin.Utterance{{Start: 500 * ms, End: 2000 * ms, Text: "what is the weather today"}},
				replies: []string{"It is sunny today. It will rain tomorrow. Take an umbrella."},
				tune:    func(cfg *pipeline.Config) { cfg.Speculate = false },
			}
			turns, _ := computeOnly(t, s, 40*ms, []time.Duration{70 * ms}, 30*ms, fork)
			require.Len(t, turns, 1)
			c := turns[0]
			assert.Equal(t, 40.0, c.ASRFinal)
			assert.Equal(t, 70.0, c.LLMFirstToken)
			assert.Equal(t, 30.0, c.TTSFirstAudio)
			assert.Equal(t, 140.0, c.ComputeOnly())
			assert.Equal(t, 40.0, c.ASR, "the final is the recognizer's compute, counted once")
			assert.Greater(t, c.TTS, c.TTSFirstAudio, "the later chunks computed too")
		})
	}
}

// A speculated reply dropped when the user went on computed its own first
// token: the turn's figure is the reply's that answered it.
func TestComputeOnlyIsTheAnsweringReplys(t *testing.T) {
	turns, c := computeOnly(t, goesOn(), 40*ms, []time.Duration{20 * ms, 70 * ms}, 30*ms, false)
	require.Equal(t, 2, c.calls["llm"], "the dropped reply came to its first token too")
	require.Len(t, turns, 1)
	assert.Equal(t, 70.0, turns[0].LLMFirstToken)
	assert.Equal(t, 140.0, turns[0].ComputeOnly())
}
