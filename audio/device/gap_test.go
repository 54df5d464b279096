package device

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
)

// gapPeriod is the rig's period: 10 ms at 16 kHz.
const gapPeriod = 160

// gapRig drives a 16 kHz duplex's callback by hand on a fake clock, the
// way a sound server would: device period k is captured by due(k) and
// handed over whenever the test says.
type gapRig struct {
	d      *Duplex
	start  time.Time
	now    time.Time
	period []float32
	out    []byte
}

// newGapRig opens the rig with cfg's hooks and front-end.
func newGapRig(t *testing.T, cfg Config) *gapRig {
	t.Helper()
	cfg.Rate, cfg.PlaybackChannels, cfg.Period, cfg.PlaybackBuffer = 16000, 1, 10*time.Millisecond, 5*time.Second
	d, err := newDuplex(cfg, "test")
	require.NoError(t, err)
	r := &gapRig{d: d, start: time.Unix(1_700_000_000, 0), period: make([]float32, gapPeriod), out: make([]byte, gapPeriod*4)}
	r.now = r.start
	d.now = func() time.Time { return r.now }
	return r
}

// due is when device period k has been captured: the end of it.
func due(k int) time.Duration { return time.Duration(k+1) * 10 * time.Millisecond }

// callback hands over period k, every sample of it k+1, at the given time
// since the device started.
func (r *gapRig) callback(at time.Duration, k int) {
	r.now = r.start.Add(at)
	for i := range r.period {
		r.period[i] = float32(k + 1)
	}
	r.d.process(r.out, f32bytes(r.period), gapPeriod)
}

// stream drains the ring into frames and returns every sample delivered,
// including those still waiting for a whole frame.
func (r *gapRig) stream(t *testing.T) []float32 {
	t.Helper()
	var all []float32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range r.d.frames {
			all = append(all, f.Samples...)
		}
	}()
	require.True(t, r.d.drain())
	close(r.d.frames)
	<-done
	return append(all, r.d.acc...)
}

// stillClock is the clock for tests that call the callback far faster
// than real time and pause between calls to drain: standing still, it
// shows no gap however long the pauses last on a loaded machine.
func stillClock() time.Time { return time.Time{} }

// Capture a server lost (callbacks resume late with no overrun of ours)
// is counted once, reported where it happened, and stood in for by as
// much silence, up to the cap, so the stream keeps to device time.
func TestCaptureGap(t *testing.T) {
	const before, after = 100, 40 // periods delivered around the loss
	tests := []struct {
		name     string
		lost     int // periods the server lost
		wantGaps uint64
		wantFill int  // samples of silence in the stream
		inTime   bool // the stream is as long as the time that passed
	}{
		{"400 ms lost in a 1.8 s utterance", 40, 1, 6400, true},
		{"a stall past the fill cap", 500, 1, maxGapFillSeconds * 16000, false},
		{"a loss under the threshold passes for jitter", 4, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type report struct{ at, lost time.Duration }
			var reports []report
			r := newGapRig(t, Config{OnCaptureGap: func(at, lost time.Duration) { reports = append(reports, report{at, lost}) }})
			var sent []int
			for k := range before + tc.lost + after {
				if k < before || k >= before+tc.lost {
					r.callback(due(k), k)
					sent = append(sent, k)
				}
			}
			all := r.stream(t)

			lost := time.Duration(tc.lost) * 10 * time.Millisecond
			st := r.d.Stats()
			assert.Equal(t, tc.wantGaps, st.CaptureGaps)
			assert.Zero(t, st.CaptureOverruns)
			fill := len(all) - len(sent)*gapPeriod
			assert.InDelta(t, tc.wantFill, fill, gapPeriod, "silence put in (one period's tolerance)")
			if tc.wantGaps == 0 {
				assert.Zero(t, st.CaptureLost)
				assert.Empty(t, reports)
			} else {
				assert.InDelta(t, lost, st.CaptureLost, float64(10*time.Millisecond))
				require.Len(t, reports, 1)
				assert.Equal(t, time.Second, reports[0].at, "the gap is reported where its silence starts")
				assert.Equal(t, st.CaptureLost, reports[0].lost)
			}
			if tc.inTime {
				// The first callback's period was captured before it.
				elapsed := due(before + tc.lost + after - 1)
				assert.InDelta(t, audio.Format{Rate: 16000}.Samples(elapsed), len(all), gapPeriod)
			}

			// The silence sits exactly where the audio went missing.
			i := 0
			for n, k := range sent {
				if n == before {
					for range fill {
						require.Zero(t, all[i], "sample %d: silence for the loss", i)
						i++
					}
				}
				for range gapPeriod {
					require.Equal(t, float32(k+1), all[i], "sample %d: period %d", i, k)
					i++
				}
			}
		})
	}
}

// The echo canceller's far end gets the same silence at the same place,
// so its frames stay aligned with the capture after the gap: nothing was
// rendered while the callback did not run.
func TestCaptureGapKeepsFarEndAligned(t *testing.T) {
	fe := &fakeFrontEnd{}
	r := newGapRig(t, Config{FrontEnd: fe})
	played := ramp16(140 * gapPeriod)
	_, _, err := r.d.player.Write(context.Background(), played)
	require.NoError(t, err)
	for k := range 180 {
		if k < 100 || k >= 140 {
			r.callback(due(k), k)
		}
	}
	r.stream(t)
	_, far, near, _, _ := fe.snapshot()
	require.Equal(t, len(near), len(far))
	fill := len(near) - 140*gapPeriod + len(r.d.acc)
	require.InDelta(t, 6400, fill, gapPeriod)
	for i := range far {
		var wantNear, wantFar float32 // silence in the gap
		switch j := i - fill; {
		case i < 100*gapPeriod:
			wantNear, wantFar = float32(i/gapPeriod+1), played[i]
		case j >= 100*gapPeriod: // period 140 on, and the reply where it stopped
			wantNear, wantFar = float32(j/gapPeriod+41), played[j]
		}
		require.Equal(t, wantNear, near[i], "near sample %d", i)
		require.Equal(t, wantFar, far[i], "far sample %d", i)
	}
}

// Callbacks that come late and then back to back, as a busy server
// delivers them, lose nothing and must count nothing.
func TestCaptureGapIgnoresBursts(t *testing.T) {
	const periods = 1000
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		arrive func(k int, prev time.Duration) time.Duration
	}{
		{"three late, then all four at once", func(k int, _ time.Duration) time.Duration {
			return due(k - k%4 + 3)
		}},
		{"a late start", func(k int, _ time.Duration) time.Duration {
			return due(max(k, 3))
		}},
		{"one stall of three periods", func(k int, _ time.Duration) time.Duration {
			if k >= 500 && k < 503 {
				return due(503)
			}
			return due(k)
		}},
		{"random lateness up to three periods", func(k int, prev time.Duration) time.Duration {
			return max(prev, due(k)+time.Duration(rng.Int64N(int64(30*time.Millisecond)+1)))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newGapRig(t, Config{})
			var at time.Duration
			for k := range periods {
				at = tc.arrive(k, at)
				r.callback(at, k)
			}
			st := r.d.Stats()
			assert.Zero(t, st.CaptureGaps)
			assert.Zero(t, st.CaptureLost)
			assert.Zero(t, r.d.gapTail.Load(), "no silence put in")
		})
	}
}

// An hour of a sound card whose clock runs 50 ppm off the system's,
// which over the hour is 180 ms of drift, counts nothing.
func TestCaptureGapIgnoresClockDrift(t *testing.T) {
	const hour = 360_000 // periods
	tests := []struct {
		name  string
		ppm   float64 // how much longer a device period takes in system time
		burst bool    // periods come in fours, as in TestCaptureGapIgnoresBursts
	}{
		{"slow card", 50, false},
		{"fast card", -50, false},
		{"slow card, bursts", 50, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newGapRig(t, Config{})
			for k := range hour {
				when := k
				if tc.burst {
					when = k - k%4 + 3
				}
				r.callback(time.Duration(float64(due(when))*(1+tc.ppm/1e6)), k)
				// A reader would; without one the ring overruns.
				r.d.ring.SkipTo(r.d.ring.Written())
			}
			st := r.d.Stats()
			assert.Zero(t, st.CaptureGaps)
			assert.Zero(t, st.CaptureLost)
			assert.Zero(t, st.CaptureOverruns)
		})
	}
}
