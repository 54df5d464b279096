package app

import (
	"math"
	"sync/atomic"

	"github.com/voiceassistant/voice/audio"
)

// levelWindow is how many 10 ms capture frames one level reading covers:
// 50 ms is about what a meter needs to look live without flooding the UI.
const levelWindow = 5

// Floor of the level meter: quieter than -60 dBFS reads as empty.
const floorDB = -60

// levelOf maps a frame's RMS to the meter's [0, 1] on a dB scale, which is
// how loudness is perceived.
func levelOf(samples []float32) float64 {
	var sum float64
	for _, s := range samples {
		sum += float64(s) * float64(s)
	}
	if len(samples) == 0 || sum == 0 {
		return 0
	}
	db := 10 * math.Log10(sum/float64(len(samples)))
	return min(1, max(0, (db-floorDB)/-floorDB))
}

// Gate decides whether the microphone reaches the assistant: closed while
// muted, and in push-to-talk mode unless the talk button is held. It is
// read on the audio goroutine and set from the UI.
type Gate struct {
	muted, pushToTalk, talking atomic.Bool
}

func (g *Gate) SetMuted(v bool)      { g.muted.Store(v) }
func (g *Gate) SetPushToTalk(v bool) { g.pushToTalk.Store(v) }
func (g *Gate) SetTalking(v bool)    { g.talking.Store(v) }

// Open is whether captured audio is let through now.
func (g *Gate) Open() bool {
	return !g.muted.Load() && (!g.pushToTalk.Load() || g.talking.Load())
}

// tap sits in the device's capture path as its front-end: it runs the real
// front-end (if any), measures the level of what the pipeline would hear,
// and silences the capture while the gate is closed. Being the front-end
// means it needs no goroutine or channel of its own, and it sees every
// frame in order on whichever device the session uses.
type tap struct {
	inner   audio.FrontEnd // nil when the build or settings have none
	gate    *Gate
	onLevel func(float64)
	peak    float64
	frames  int
}

func (t *tap) Far(frame []float32) error {
	if t.inner == nil {
		return nil
	}
	return t.inner.Far(frame)
}

func (t *tap) Near(frame []float32) ([]float32, error) {
	out := frame
	if t.inner != nil {
		var err error
		if out, err = t.inner.Near(frame); err != nil {
			return nil, err
		}
	}
	open := t.gate.Open()
	level := 0.0
	if open {
		level = levelOf(out)
	} else {
		// A fresh buffer: the frame may be shared with its source (a
		// replay's input).
		out = make([]float32, len(out))
	}
	t.peak = max(t.peak, level)
	if t.frames++; t.frames == levelWindow {
		t.onLevel(t.peak)
		t.peak, t.frames = 0, 0
	}
	return out, nil
}
