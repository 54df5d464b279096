package pipeline_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
)

// busyLLM is a test double that spends work wall time on each piece, as a
// real engine computes.
type busyLLM struct {
	pieces int
	work   time.Duration
}

func (b busyLLM) Generate(ctx context.Context, _ []llm.Message, emit func(string) error) (llm.Stats, error) {
	start := time.Now()
	for i := range b.pieces {
		time.Sleep(b.work)
		if err := ctx.Err(); err != nil {
			return llm.Stats{GeneratedTokens: i, Decode: time.Since(start)}, err
		}
		if err := emit("x"); err != nil {
			return llm.Stats{GeneratedTokens: i + 1, Decode: time.Since(start)}, err
		}
	}
	return llm.Stats{GeneratedTokens: b.pieces, Decode: time.Since(start)}, nil
}

// driveClock advances clk in 1 ms steps whenever nothing holds it, as the
// replay device does, until stop is closed.
func driveClock(t *testing.T, clk *clock.Virtual, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := clk.WaitIdle(t.Context(), 10*time.Second); err != nil {
				t.Error(err)
				return
			}
			clk.Advance(time.Millisecond)
		}
	})
	return &wg
}

func TestChargeComputePutsTheEngineOnTheClock(t *testing.T) {
	const work, scale = 2 * time.Millisecond, 10
	clk := clock.NewVirtual()
	gen := pipeline.ChargeCompute(busyLLM{pieces: 5, work: work}, clk, scale)
	stop := make(chan struct{})
	clk.Hold() // the generating goroutine's hold, as the pipeline takes it
	wg := driveClock(t, clk, stop)

	var at []time.Duration
	_, err := gen.Generate(t.Context(), nil, func(string) error {
		at = append(at, clk.Now())
		return nil
	})
	clk.Release()
	close(stop)
	wg.Wait()
	require.NoError(t, err)

	require.Len(t, at, 5)
	prev := time.Duration(0)
	for i, a := range at {
		// At least the scaled compute passed on the clock before each
		// piece (more on a loaded machine: the figure is measured).
		assert.GreaterOrEqual(t, a-prev, scale*work, "piece %d", i)
		prev = a
	}
}

func TestChargeComputeStopsWhenCancelledWhileWaiting(t *testing.T) {
	clk := clock.NewVirtual() // never advanced: the wait would last forever
	gen := pipeline.ChargeCompute(busyLLM{pieces: 3, work: time.Millisecond}, clk, 1)
	ctx, cancel := context.WithCancel(t.Context())
	clk.Hold()
	time.AfterFunc(20*time.Millisecond, cancel)
	st, err := gen.Generate(ctx, nil, func(string) error {
		t.Error("no piece may pass before its compute time has passed on the clock")
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, st.GeneratedTokens)
}
