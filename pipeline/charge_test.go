package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
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

func (c *cpu) work(stage string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
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
