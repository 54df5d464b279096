package app

import (
	"context"
	"errors"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/wiring"
	"github.com/voiceassistant/voice/pipeline"
)

// Live runs sessions on the sound card, like `voice-agent run`.
type Live struct {
	Device device.Config
}

func (l Live) Run(ctx context.Context, s Session) error {
	_, err := wiring.Live{Stages: s.Stages, Device: l.Device, Tap: s.Tap, OnEvent: s.OnEvent, Warn: s.Warn}.Run(ctx)
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
// `voice-agent replay` without --echo-gain); the tap alone is the
// front-end.
func (r Replay) Run(ctx context.Context, s Session) (err error) {
	clk := clock.NewVirtual()
	cfg, closeStages, err := wiring.Build(s.Stages, clk)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeStages()) }()
	_, err = pipeline.Replay(ctx, clk, cfg, audio.VirtualConfig{Input: r.Input, Pace: r.Pace, FrontEnd: s.Tap(nil)}, s.OnEvent)
	return err
}
