package wiring

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/tools"
)

// Live is a session on the sound card, as `voice-agent run` and the
// desktop app hold one.
type Live struct {
	Stages Stages
	Device device.Config
	// Capture, if set, makes the capture chain around the audio
	// front-end (nil when there is none; see audio.Chain): the desktop
	// app's microphone switch and level meter.
	Capture func(inner audio.FrontEnd) audio.FrontEnd
	// OnEvent gets every pipeline event, in order, on one goroutine.
	OnEvent func(pipeline.Event)
	// Warn reports what makes the session run degraded.
	Warn func(string)
	// Listening is called once the device runs.
	Listening func()
	// Interrupt stops the reply when a value arrives (the stop key; see
	// pipeline.Config.Interrupt).
	Interrupt <-chan struct{}
	// Commands takes the host's commands (the control socket's; see
	// pipeline.Config.Commands).
	Commands <-chan pipeline.Command
	// Alive is called once per round of the pipeline's loop (systemd's
	// watchdog; see pipeline.Config.Alive).
	Alive func()
	// Tools, if set, is the registry the session's tools go into, where
	// the host declares its own (control socket); nil: one of the
	// session's own. Stages.Tools turns tools on.
	Tools *tools.Registry
}

// needWake is how much capture wakes the device's reader for each need
// of the session. A session listening for speech to begin hears it 40 ms
// late at most, a sixth of the least speech the VAD reports; one keeping
// a pre-roll sees a talk button's press at once (the press ends the
// wait), and the pre-roll reaches further back than 100 ms.
var needWake = map[pipeline.Need]time.Duration{
	pipeline.NeedPrompt:  0,
	pipeline.NeedListen:  40 * time.Millisecond,
	pipeline.NeedPreRoll: 100 * time.Millisecond,
}

// Run builds the stages, opens the device and runs the pipeline until ctx
// ends or a stage or the device fails. It returns the device's counters.
func (l Live) Run(ctx context.Context) (stats device.Stats, err error) {
	// Stages first: a missing model is reported without touching the
	// audio hardware.
	if standIns := l.Stages.StandIns(); len(standIns) > 0 && l.Warn != nil {
		l.Warn(strings.Join(standIns, ", ") + " run on stand-ins, not models: a demo, not the assistant")
	}
	clk := clock.NewStream(audio.ProcessingRate)
	cfg, toolset, closeStages, err := buildSession(l.Stages, clk, l.Tools)
	if err != nil {
		return stats, err
	}
	defer func() { err = errors.Join(err, closeStages()) }()
	fe, closeFE, halfDuplex, err := NewFrontEnd(l.Stages)
	if err != nil {
		return stats, err
	}
	defer func() {
		if n := FrontEndRestarts(fe); n > 0 && l.Warn != nil {
			l.Warn(fmt.Sprintf("the echo canceller produced audio that was not finite and was restarted %d times; those frames were passed on as captured", n))
		}
		closeFE()
	}()
	if halfDuplex {
		if l.Warn != nil {
			l.Warn("echo cancellation is not in this build (scripts/setup builds it in; docs/how-it-works.md, Echo): running half duplex, so no barge-in")
		}
		cfg.HalfDuplex.Enabled = true
	}
	devCfg := l.Device
	devCfg.Clock = clk
	// The front end and the capture reader do as little as the session
	// needs: one that listens all day costs a battery the least it can.
	var resting *audio.Resting
	if fe != nil {
		resting = &audio.Resting{FrontEnd: fe}
		devCfg.FrontEnd = resting
	}
	if l.Capture != nil {
		devCfg.FrontEnd = l.Capture(devCfg.FrontEnd)
	}
	dev, err := device.Open(devCfg)
	if err != nil {
		return stats, err
	}
	defer func() { err = errors.Join(err, dev.Close()) }()
	// The stream clock needs no hold for a press (its Hold and Release
	// do nothing).
	cfg.Clock, cfg.Device, cfg.Interrupt, cfg.Commands, cfg.Alive = clk, dev, l.Interrupt, l.Commands, l.Alive
	cfg.Need = func(n pipeline.Need) {
		if resting != nil {
			resting.Rest(n == pipeline.NeedPreRoll)
		}
		dev.WakeEvery(needWake[n])
	}
	if toolset != nil {
		toolset.Volume.Attach(dev.Player())
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		return stats, err
	}
	if err := dev.Start(); err != nil {
		return stats, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range p.Events() {
			if l.OnEvent != nil {
				l.OnEvent(e)
			}
		}
	}()
	if l.Listening != nil {
		l.Listening()
	}
	err = p.Run(ctx)
	<-done
	return dev.Stats(), err
}
