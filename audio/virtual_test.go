package audio

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/clock"
)

// received is a frame as the consumer saw it, with the clock at receipt.
type received struct {
	Frame
	now time.Duration
}

// consume runs v to completion with a consumer that copies every frame,
// calls react (which may use the player) and then releases the frame's
// clock hold, as the pipeline does.
func consume(t *testing.T, clk *clock.Virtual, v *Virtual, react func(f Frame)) ([]received, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []received
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for f := range v.Frames() {
			r := received{Frame: f, now: clk.Now()}
			r.Samples = slices.Clone(f.Samples)
			got = append(got, r)
			if react != nil {
				react(f)
			}
			clk.Release()
		}
	}()
	err := v.Run(ctx)
	wg.Wait()
	require.NoError(t, ctx.Err(), "replay did not finish")
	return got, err
}

// captured joins the received frames into one capture stream.
func captured(frames []received) []float32 {
	var out []float32
	for _, f := range frames {
		out = append(out, f.Samples...)
	}
	return out
}

func newVirtual(t *testing.T, cfg VirtualConfig) (*clock.Virtual, *Virtual) {
	t.Helper()
	clk := clock.NewVirtual()
	v, err := NewVirtual(clk, cfg)
	require.NoError(t, err)
	return clk, v
}

func TestVirtualFramesAndClock(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name    string
		input   int
		period  time.Duration
		minTail time.Duration
		frames  int
	}{
		{"whole periods", 1600, 0, 50 * time.Millisecond, 15},             // (1600+800)/160
		{"partial last input period", 1650, 0, 50 * time.Millisecond, 16}, // ceil(2450/160)
		{"no input", 0, 0, 100 * time.Millisecond, 10},
		{"20 ms periods", 1600, 20 * time.Millisecond, 40 * time.Millisecond, 7}, // ceil(2240/320)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			input := ramp(1, tc.input)
			clk, v := newVirtual(t, VirtualConfig{Input: input, Period: tc.period, MinTail: tc.minTail, MaxTail: time.Second})
			period := 160
			if tc.period > 0 {
				period = int(Mono16k.Samples(tc.period))
			}

			frames, err := consume(t, clk, v, nil)
			require.NoError(t, err)
			require.NoError(t, v.Err())
			require.Len(t, frames, tc.frames)
			for k, f := range frames {
				assert.Equal(t, Mono16k, f.Format, "frame %d", k)
				assert.Equal(t, int64(k*period), f.Pos, "frame %d position", k)
				assert.Equal(t, period, f.Len(), "frame %d length", k)
				// The clock reads the end of the frame while it is handled.
				assert.Equal(t, f.Stop(), f.now, "frame %d: clock at receipt", k)
			}
			// The capture is the input, then silence.
			capture := captured(frames)
			assert.Equal(t, input, capture[:len(input)])
			assert.Equal(t, silence(len(capture)-len(input)), capture[len(input):])
			assert.Equal(t, Mono16k.Duration(int64(tc.frames*period)), clk.Now())
		})
	}
}

func TestVirtualEnd(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const minTail, maxTail = 50 * time.Millisecond, 300 * time.Millisecond
	tests := []struct {
		name   string
		setup  func(t *testing.T, clk *clock.Virtual, v *Virtual) (cleanup func())
		frames int
	}{
		{
			name:   "idle stops after MinTail",
			frames: (1600 + 800) / 160,
		},
		{
			name: "a reply still being written runs to MaxTail",
			setup: func(t *testing.T, _ *clock.Virtual, v *Virtual) func() {
				_, _, err := v.Player().Write(context.Background(), ramp(1, 100))
				require.NoError(t, err)
				return nil
			},
			frames: (1600 + 4800) / 160,
		},
		{
			name: "a finished reply stops once it has played",
			setup: func(t *testing.T, _ *clock.Virtual, v *Virtual) func() {
				// 4000 samples play over periods 0..24 (rendered by the
				// time frame 23 is delivered).
				_, _, err := v.Player().Write(context.Background(), ramp(1, 4000))
				require.NoError(t, err)
				v.Player().EndOfReply()
				return nil
			},
			frames: 24,
		},
		{
			name: "a stage sleeping on the clock keeps it running",
			setup: func(t *testing.T, clk *clock.Virtual, _ *Virtual) func() {
				var wg sync.WaitGroup
				wg.Add(1)
				clk.Hold()
				go func() {
					defer wg.Done()
					assert.NoError(t, clk.Sleep(context.Background(), 250*time.Millisecond))
					clk.Release()
				}()
				waitSleeping(t, clk)
				return wg.Wait
			},
			frames: 25, // it wakes when frame 24 ends at 250 ms
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk, v := newVirtual(t, VirtualConfig{Input: ramp(1, 1600), MinTail: minTail, MaxTail: maxTail})
			if tc.setup != nil {
				if cleanup := tc.setup(t, clk, v); cleanup != nil {
					defer cleanup()
				}
			}
			frames, err := consume(t, clk, v, nil)
			require.NoError(t, err)
			assert.Len(t, frames, tc.frames)
			// One period is rendered before the first frame, one per frame.
			assert.Len(t, v.Recording(), (tc.frames+1)*160)
		})
	}
}

// waitSleeping waits until some goroutine is asleep on clk.
func waitSleeping(t *testing.T, clk *clock.Virtual) {
	t.Helper()
	require.Eventually(t, func() bool { _, ok := clk.NextWake(); return ok }, 2*time.Second, time.Millisecond)
}

// impulse is n samples of silence with a click at the end.
func impulse(n int) []float32 {
	out := make([]float32, n+1)
	out[n] = 1
	return out
}

func TestVirtualEcho(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name   string
		n      int // samples of capture (default 200 ms)
		echo   Echo
		before []float32 // queued before the run starts (plays from time 0)
		at     int64     // frame position after which the consumer plays a click
		click  int       // where the click should be in the recording
	}{
		{"queued before start", 0, Echo{Delay: 30 * time.Millisecond, Gain: 0.5}, impulse(1000), -1, 1000},
		// Written in reaction to frame 5 ([50, 60) ms, clock at 60 ms), it
		// is rendered with the next period and plays from 70 ms.
		{"written after frame 5", 0, Echo{Delay: 30 * time.Millisecond, Gain: 0.5}, nil, 800, 1120},
		{"no delay", 0, Echo{Delay: 0, Gain: 0.25}, nil, 800, 1120},
		{"delay not a whole period", 0, Echo{Delay: 12500 * time.Microsecond, Gain: 1}, impulse(77), -1, 77},
		// Long after the start, where only a window of what was played
		// is kept.
		{"written after 3 s", 4 * 16000, Echo{Delay: 250 * time.Millisecond, Gain: 0.5}, nil, 48000, 48320},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := cmp.Or(tc.n, 3200)
			// A quiet input under the echo, so both must be present.
			input := make([]float32, n)
			for i := range input {
				input[i] = float32(i%7) / 64
			}
			echo := tc.echo
			clk, v := newVirtual(t, VirtualConfig{Input: input, MinTail: time.Millisecond, MaxTail: time.Second, Echo: &echo})
			p := v.Player()
			if tc.before != nil {
				_, _, err := p.Write(context.Background(), tc.before)
				require.NoError(t, err)
				p.EndOfReply()
			}
			frames, err := consume(t, clk, v, func(f Frame) {
				if f.Pos == tc.at {
					_, _, err := p.Write(context.Background(), []float32{1})
					assert.NoError(t, err)
					p.EndOfReply()
				}
			})
			require.NoError(t, err)
			capture := captured(frames)
			require.Len(t, capture, n+160)

			rec := v.Recording()
			want := make([]float32, len(rec))
			want[tc.click] = 1
			require.Equal(t, want, rec, "the click must be played at sample %d", tc.click)

			delay := int(Mono16k.Samples(tc.echo.Delay))
			gain := float32(tc.echo.Gain)
			at := tc.click + delay
			for i, got := range capture {
				in := float32(0)
				if i < n {
					in = input[i]
				}
				if i == at {
					assert.Equal(t, in+gain, got, "echo of the click at %d", i)
				} else if got != in {
					assert.Failf(t, "capture differs from the input", "sample %d: %v, want %v", i, got, in)
					break
				}
			}
		})
	}
}

func TestVirtualRecording(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name     string
		playback Format
		burst    int
	}{
		{"mono 16k", Mono16k, 500},
		{"stereo 48k", Format{Rate: 48000, Channels: 2}, 3000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk, v := newVirtual(t, VirtualConfig{Playback: tc.playback, MinTail: 100 * time.Millisecond, MaxTail: time.Second})
			assert.Equal(t, tc.playback, v.Player().Format())
			burst := ramp(1, tc.burst)
			_, _, err := v.Player().Write(context.Background(), burst)
			require.NoError(t, err)
			v.Player().EndOfReply()

			frames, err := consume(t, clk, v, nil)
			require.NoError(t, err)
			require.Len(t, frames, 10)
			rec := v.Recording()
			perPeriod := int(tc.playback.Samples(10*time.Millisecond)) * tc.playback.Channels
			require.Len(t, rec, 11*perPeriod)
			// Audio queued before the start plays from time 0.
			assert.Equal(t, burst, rec[:len(burst)])
			assert.Equal(t, silence(len(rec)-len(burst)), rec[len(burst):])
		})
	}
}

// sampleSink is a SampleWriter keeping what it gets, or failing after
// failAfter writes.
type sampleSink struct {
	got       []float32
	writes    int
	failAfter int
}

func (s *sampleSink) Write(samples []float32) error {
	if s.writes++; s.failAfter > 0 && s.writes > s.failAfter {
		return errors.New("disk full")
	}
	s.got = append(s.got, samples...)
	return nil
}

// What Record takes is what Recording would have kept, and a failed write
// stops the replay with its error.
func TestVirtualRecord(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	run := func(sink SampleWriter) (*Virtual, error) {
		cfg := VirtualConfig{Input: ramp(0, 4000), Playback: Format{Rate: 48000, Channels: 2}, MinTail: 100 * time.Millisecond, MaxTail: time.Second, Record: sink}
		clk, v := newVirtual(t, cfg)
		_, _, err := v.Player().Write(context.Background(), ramp(1, 9000))
		require.NoError(t, err)
		v.Player().EndOfReply()
		_, err = consume(t, clk, v, nil)
		return v, err
	}
	inMemory, err := run(nil)
	require.NoError(t, err)
	var sink sampleSink
	streamed, err := run(&sink)
	require.NoError(t, err)
	assert.Equal(t, inMemory.Recording(), sink.got)
	assert.Empty(t, streamed.Recording(), "nothing kept in memory")

	_, err = run(&sampleSink{failAfter: 5})
	require.ErrorContains(t, err, "virtual device: recording: disk full")
}

// A source that fails stops the replay with its error.
func TestVirtualSourceError(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	clk, v := newVirtual(t, VirtualConfig{Source: failingSource{}, MaxTail: time.Second})
	_, err := consume(t, clk, v, nil)
	require.ErrorContains(t, err, "virtual device: capture: truncated")
}

type failingSource struct{}

func (failingSource) Len() int64 { return 16000 }

func (failingSource) Read(pos int64, _ []float32) error {
	if pos >= 800 {
		return errors.New("truncated")
	}
	return nil
}

func TestVirtualStall(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const stall = 200 * time.Millisecond
	clk, v := newVirtual(t, VirtualConfig{Input: ramp(1, 1600), Stall: stall})
	var frames int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range v.Frames() {
			frames++ // never released: the stage is stuck
		}
	}()
	start := time.Now()
	err := v.Run(context.Background())
	elapsed := time.Since(start)
	<-done

	require.ErrorIs(t, err, clock.ErrStalled)
	assert.Equal(t, err, v.Err())
	assert.Equal(t, 1, frames, "time must not move past the stuck frame")
	assert.GreaterOrEqual(t, elapsed, stall)
	assert.Less(t, elapsed, 2*time.Second)
	assert.Equal(t, 10*time.Millisecond, clk.Now())
	clk.Release()
}

func TestVirtualCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	clk, v := newVirtual(t, VirtualConfig{Input: ramp(1, 16000)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	go func() {
		n := 0
		for range v.Frames() {
			n++
			if n == 3 {
				cancel() // and hold on to the frame
				continue
			}
			clk.Release()
		}
		done <- n
	}()
	require.NoError(t, v.Run(ctx), "a cancelled replay is not an error")
	assert.Equal(t, 3, <-done)
	assert.NoError(t, v.Err())
}

func TestNewVirtualRejects(t *testing.T) {
	clk := clock.NewVirtual()
	for _, cfg := range []VirtualConfig{
		{Playback: Format{Rate: 0, Channels: 1}},
		{Playback: Format{Rate: 16000, Channels: 0}},
		{Period: 10*time.Millisecond + time.Microsecond}, // not a whole sample
	} {
		_, err := NewVirtual(clk, cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	_, err := NewVirtual(clk, VirtualConfig{Period: 20 * time.Millisecond})
	assert.NoError(t, err)
}
