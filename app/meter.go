package app

import (
	"math"
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

// meter is the capture stage that reports the level of what the
// assistant hears, one reading per levelWindow frames. Being a capture
// stage means it needs no goroutine or channel of its own, and it sees
// every frame in order on whichever device the session uses.
type meter struct {
	onLevel func(float64)
	peak    float64
	frames  int
}

func (*meter) Far([]float32) error { return nil }

func (m *meter) Near(frame []float32) ([]float32, error) {
	m.peak = max(m.peak, levelOf(frame))
	if m.frames++; m.frames == levelWindow {
		m.onLevel(m.peak)
		m.peak, m.frames = 0, 0
	}
	return frame, nil
}
