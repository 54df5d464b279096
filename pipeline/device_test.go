package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/vad"
)

// vanishingDevice delivers some audio, then stops as a USB headset does
// when it is unplugged.
type vanishingDevice struct {
	frames chan audio.Frame
	player *audio.Player
	err    error
}

func (d *vanishingDevice) Frames() <-chan audio.Frame { return d.frames }
func (d *vanishingDevice) Player() *audio.Player      { return d.player }
func (d *vanishingDevice) Err() error                 { return d.err }

func TestDeviceDisappearingEndsTheSession(t *testing.T) {
	clk := clock.NewStream(audio.ProcessingRate)
	dev := &vanishingDevice{
		frames: make(chan audio.Frame, 400),
		player: audio.NewPlayer(audio.Mono16k, time.Second, clk),
		err:    errors.New(`audio device "USB headset" stopped unexpectedly (disconnected?)`),
	}
	s := scenario{
		user:    []standin.Utterance{{Start: 100 * time.Millisecond, End: 900 * time.Millisecond, Text: "hello"}},
		replies: []string{"Hi."},
	}
	cfg, _ := s.config(clk)
	cfg.Clock, cfg.Device = clk, dev
	// Speech that is cut off mid-turn by the disconnection.
	pcm := standin.Voice(time.Second, s.user...)
	for pos := 0; pos+160 <= len(pcm); pos += 160 {
		dev.frames <- audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: pcm[pos : pos+160]}
	}
	close(dev.frames)

	p, err := pipeline.New(cfg)
	require.NoError(t, err)
	var events []pipeline.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range p.Events() {
			events = append(events, e)
		}
	}()
	err = p.Run(context.Background())
	require.ErrorIs(t, err, dev.err)
	<-done // the event stream is closed after Run
	require.NotEmpty(t, events)
	assert.Equal(t, pipeline.EvSpeechStart, events[1].Type)
}

func TestStageErrorEndsTheSession(t *testing.T) {
	s := scenario{
		length:  3 * time.Second,
		user:    []standin.Utterance{{Start: 100 * time.Millisecond, End: 900 * time.Millisecond, Text: "hello"}},
		replies: []string{"Hi."},
	}
	clk := clock.NewVirtual()
	cfg, _ := s.config(clk)
	cfg.VAD = failingVAD{}
	var errs []pipeline.Event
	_, err := replay(t, clk, cfg, audio.VirtualConfig{Input: standin.Voice(s.length, s.user...)},
		func(e pipeline.Event) {
			if e.Type == pipeline.EvError {
				errs = append(errs, e)
			}
		})
	require.ErrorContains(t, err, "vad: model output has wrong shape")
	require.Len(t, errs, 1)
}

type failingVAD struct{}

func (failingVAD) Process(audio.Frame) (vad.Result, error) {
	return vad.Result{}, errors.New("model output has wrong shape")
}
func (failingVAD) Reset() {}

func TestConfigNamesMissingStages(t *testing.T) {
	_, err := pipeline.New(pipeline.DefaultConfig())
	require.Error(t, err)
	for _, name := range []string{"ASR", "Clock", "Device", "History", "LLM", "VAD"} {
		assert.Contains(t, err.Error(), name)
	}
}
