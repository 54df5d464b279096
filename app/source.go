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

func (l Live) Run(ctx context.Context, s Session) (err error) {
	// Stages first: a missing model is reported without touching the
	// audio hardware.
	clk := clock.NewStream(audio.ProcessingRate)
	cfg, err := s.Build(clk)
	if err != nil {
		return err
	}
	fe, closeFE, halfDuplex, err := wiring.NewFrontEnd(s.Stages)
	if err != nil {
		return err
	}
	defer closeFE()
	if halfDuplex {
		s.Warn("echo cancellation is not in this build: running half duplex, so no barge-in (see README)")
		cfg.HalfDuplex.Enabled = true
	}
	devCfg := l.Device
	devCfg.Clock, devCfg.FrontEnd = clk, s.Tap(fe)
	dev, err := device.Open(devCfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dev.Close()) }()
	cfg.Clock, cfg.Device = clk, dev
	p, err := pipeline.New(cfg)
	if err != nil {
		return err
	}
	if err := dev.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range p.Events() {
			s.OnEvent(e)
		}
	}()
	err = p.Run(ctx)
	<-done
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
func (r Replay) Run(ctx context.Context, s Session) error {
	clk := clock.NewVirtual()
	cfg, err := s.Build(clk)
	if err != nil {
		return err
	}
	_, err = pipeline.Replay(ctx, clk, cfg, audio.VirtualConfig{Input: r.Input, Pace: r.Pace, FrontEnd: s.Tap(nil)}, s.OnEvent)
	return err
}
