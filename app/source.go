package app

import (
	"context"
	"errors"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// Live runs sessions on the sound card, like `voice-agent run`.
type Live struct {
	Device device.Config
}

func (l Live) Run(ctx context.Context, s Session) error {
	_, err := wiring.Live{Stages: s.Stages, Device: l.Device, Capture: s.Capture, OnEvent: s.OnEvent, Warn: s.Warn,
		Interrupt: s.StopKey, Commands: s.Commands}.Run(ctx)
	return err
}

// Replay runs sessions over a recording on a virtual clock, like
// `voice-agent replay`; at Pace 1 it plays out in real time, so the window
// shows the conversation as it would happen live.
type Replay struct {
	// Input is 16 kHz mono.
	Input []float32
	Pace  float64
}

// There is no echo path in a replay, so no echo canceller either (as in
// `voice-agent replay` without --echo-gain); the capture chain alone is the
// front-end.
func (r Replay) Run(ctx context.Context, s Session) (err error) {
	clk := clock.NewVirtual()
	cfg, closeStages, err := wiring.Build(s.Stages, clk)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStages()) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	presses, commands := make(chan struct{}), make(chan pipeline.Command)
	cfg.Interrupt, cfg.Commands = presses, commands
	go holdEach(ctx, clk, s.StopKey, presses)
	go holdEach(ctx, clk, s.Commands, commands)
	_, err = pipeline.Replay(ctx, clk, cfg, audio.VirtualConfig{Input: r.Input, Pace: r.Pace, FrontEnd: s.Capture(nil)}, s.OnEvent)
	return err
}

// holdEach passes the user's presses (of the stop key, of the talk
// button) on to a pipeline on a virtual clock, holding the clock for each
// until the pipeline has taken it (and releases the hold), so the replay
// does not run on past it.
func holdEach[T any](ctx context.Context, clk *clock.Virtual, in <-chan T, out chan<- T) {
	for {
		var v T
		select {
		case v = <-in:
		case <-ctx.Done():
			return
		}
		clk.Hold()
		select {
		case out <- v:
		case <-ctx.Done():
			clk.Release()
			return
		}
	}
}
