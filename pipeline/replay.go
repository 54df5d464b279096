package pipeline

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
)

// ReplayResult is what a replay produced.
type ReplayResult struct {
	// Recording is the assistant's audio as played, aligned with the input.
	Recording []float32
	Format    audio.Format
	Metrics   []TurnMetrics
	Underruns uint64
	// Covered is how much of the input was replayed: all of it unless
	// the replay was stopped.
	Covered time.Duration
}

// Replay runs the pipeline over recorded audio on a virtual clock, as fast
// as the stages allow (or at dev.Pace), calling onEvent for every event in
// order. cfg's Clock and Device are set here to clk (which stages such as
// scripted doubles may also use) and a virtual device.
func Replay(ctx context.Context, clk *clock.Virtual, cfg Config, dev audio.VirtualConfig, onEvent func(Event)) (*ReplayResult, error) {
	vd, err := audio.NewVirtual(clk, dev)
	if err != nil {
		return nil, err
	}
	cfg.Clock, cfg.Device = clk, vd
	p, err := New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var g errgroup.Group
	g.Go(func() error {
		for e := range p.Events() {
			if onEvent != nil {
				onEvent(e)
			}
		}
		return nil
	})
	g.Go(func() error { return vd.Run(ctx) })
	runErr := p.Run(ctx)
	// The pipeline may have ended first (a stage error): stop the device.
	cancel()
	err = g.Wait()
	if errors.Is(runErr, err) {
		err = nil // the pipeline ends with the device's error as its own
	}
	err = errors.Join(runErr, err)
	return &ReplayResult{
		Recording: vd.Recording(),
		Format:    vd.Player().Format(),
		Metrics:   p.Metrics(),
		Underruns: vd.Player().Underruns(),
		Covered:   vd.Position(),
	}, err
}
