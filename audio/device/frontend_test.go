package device

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
)

// fakeFrontEnd records what it is given and returns the capture scaled by
// 0.5; with fail set it returns fail from Near after failAfter frames.
type fakeFrontEnd struct {
	mu        sync.Mutex
	calls     []string // "far" / "near", in call order
	far       []float32
	near      []float32
	out       [][]float32
	badLen    bool
	fail      error
	failAfter int
}

func (f *fakeFrontEnd) Far(frame []float32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "far")
	if len(frame) != FrameSize {
		f.badLen = true
	}
	f.far = append(f.far, frame...)
	return nil
}

func (f *fakeFrontEnd) Near(frame []float32) ([]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "near")
	if len(frame) != FrameSize {
		f.badLen = true
	}
	if f.fail != nil && len(f.out) >= f.failAfter {
		return nil, f.fail
	}
	f.near = append(f.near, frame...)
	out := make([]float32, len(frame))
	for i, v := range frame {
		out[i] = 0.5 * v
	}
	f.out = append(f.out, out)
	return out, nil
}

func (f *fakeFrontEnd) snapshot() (calls []string, far, near []float32, out [][]float32, badLen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...), append([]float32(nil), f.far...),
		append([]float32(nil), f.near...), append([][]float32(nil), f.out...), f.badLen
}

func assertAlternates(t *testing.T, calls []string) {
	t.Helper()
	require.Zero(t, len(calls)%2, "Far and Near calls must pair up: %d calls", len(calls))
	for i, c := range calls {
		want := "far"
		if i%2 == 1 {
			want = "near"
		}
		require.Equal(t, want, c, "call %d", i)
	}
}

func ramp16(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i+1) / float32(n+1)
	}
	return out
}

// On the null device at 16 kHz (no resampling) the front-end sees every
// played sample, in order, as far frames alternating with the capture
// frames, and Frames delivers what Near returns.
func TestNullFrontEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	fe := &fakeFrontEnd{}
	d, err := Open(Config{Backend: "null", Rate: 16000, FrontEnd: fe})
	require.NoError(t, err)
	played := ramp16(8000) // 0.5 s
	_, end, err := d.Player().Write(context.Background(), played)
	require.NoError(t, err)
	d.Player().EndOfReply()
	require.NoError(t, d.Start())

	frames := collect(t, d.Frames(), 60, 5*time.Second)
	require.Len(t, frames, 60)
	assertContiguous(t, frames, 0)
	require.Eventually(t, func() bool { return d.Player().Consumed() >= end }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, d.Close())
	assert.True(t, waitClosed(d.Frames(), time.Second))
	require.NoError(t, d.Err())

	calls, far, _, out, badLen := fe.snapshot()
	assert.False(t, badLen, "every frame must have FrameSize samples")
	assertAlternates(t, calls)
	require.GreaterOrEqual(t, len(out), len(frames))
	for i, f := range frames {
		require.Equal(t, out[i], f.Samples, "frame %d must be Near's output", i)
	}
	require.GreaterOrEqual(t, len(far), len(played), "the whole reply must reach the front-end")
	require.Equal(t, played, far[:len(played)], "far frames must be exactly the played samples, in order")
	for i, v := range far[len(played):] {
		require.Zero(t, v, "far sample %d after the reply", len(played)+i)
	}
}

// Driven by hand: a known capture signal is scaled by the fake, and the
// far path stays aligned with the capture across an overrun, with
// silence on both sides where capture was dropped. Stereo playback is
// downmixed.
func TestFrontEndAlignedAcrossOverrun(t *testing.T) {
	fe := &fakeFrontEnd{}
	cfg := Config{Rate: 16000, PlaybackChannels: 2, Period: 10 * time.Millisecond, PlaybackBuffer: 5 * time.Second, FrontEnd: fe}
	d, err := newDuplex(cfg, "test")
	require.NoError(t, err)
	d.now = stillClock
	capacity := d.ring.Cap()
	require.Equal(t, capacity, d.farRing.Cap())

	const total = 40000
	left, right := ramp16(total), make([]float32, total)
	stereo := make([]float32, 0, 2*total)
	for i := range left {
		right[i] = -0.5 * left[i]
		stereo = append(stereo, left[i], right[i])
	}
	_, _, err = d.player.Write(context.Background(), stereo)
	require.NoError(t, err)
	played := func(i int) float32 { return (left[i] + right[i]) / 2 }

	period := make([]float32, 160)
	capIdx := 0
	in := func() []byte {
		for i := range period {
			period[i] = float32(capIdx+i+1) / 1e5
		}
		capIdx += 160
		return f32bytes(period)
	}
	out := make([]byte, 160*2*4)
	n := 0
	for n < capacity {
		d.process(out, in(), 160)
		n += 160
	}
	for range 10 {
		d.process(out, in(), 160)
	}
	dropped := n - capacity + 10*160
	assert.Equal(t, uint64(dropped), d.Stats().CaptureOverruns)

	var frames []audio.Frame
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range d.frames {
			frames = append(frames, f)
		}
	}()
	require.True(t, d.drain())
	for range 5 {
		d.process(out, in(), 160)
	}
	require.True(t, d.drain())
	close(d.frames)
	<-done

	length := capacity + dropped + 5*160
	require.Len(t, frames, length/FrameSize)
	assertContiguous(t, frames, 0)
	calls, far, near, _, badLen := fe.snapshot()
	assert.False(t, badLen)
	assertAlternates(t, calls)
	require.Len(t, far, length)
	require.Len(t, near, length)
	for i := range length {
		gap := i >= capacity && i < capacity+dropped
		wantNear, wantFar := float32(i+1)/1e5, played(i)
		if gap {
			wantNear, wantFar = 0, 0
		}
		require.Equal(t, wantNear, near[i], "sample %d: near (capacity %d, dropped %d)", i, capacity, dropped)
		require.Equal(t, wantFar, far[i], "sample %d: far (capacity %d, dropped %d)", i, capacity, dropped)
		require.Equal(t, 0.5*wantNear, frames[i/FrameSize].Samples[i%FrameSize], "delivered sample %d", i)
	}
}

// At 48 kHz both paths are resampled the same way: equal counts, and the
// far frames carry the played tone.
func TestNullFrontEndResampled(t *testing.T) {
	fe := &fakeFrontEnd{}
	d, err := Open(Config{Backend: "null", FrontEnd: fe})
	require.NoError(t, err)
	defer d.Close()
	_, _, err = d.Player().Write(context.Background(), tone(48000, 1, 1000, time.Second, 0.5))
	require.NoError(t, err)
	require.NoError(t, d.Start())
	frames := collect(t, d.Frames(), 40, 5*time.Second)
	require.Len(t, frames, 40)
	assertContiguous(t, frames, 0)
	require.NoError(t, d.Close())
	calls, far, _, _, badLen := fe.snapshot()
	assert.False(t, badLen)
	assertAlternates(t, calls)
	var peak float32
	for _, v := range far[FrameSize:] { // past the resampler's start-up
		peak = max(peak, v)
	}
	assert.InDelta(t, 0.5, peak, 0.05, "far frames carry the played tone")
}

// A front-end error ends the session like a device error.
func TestNullFrontEndError(t *testing.T) {
	defer goleak.VerifyNone(t)
	boom := errors.New("boom")
	fe := &fakeFrontEnd{fail: boom, failAfter: 3}
	d, err := Open(Config{Backend: "null", Rate: 16000, FrontEnd: fe})
	require.NoError(t, err)
	require.NoError(t, d.Start())
	frames := collect(t, d.Frames(), 100, 5*time.Second)
	assert.Len(t, frames, 3, "frames before the error are delivered, none after")
	assert.True(t, waitClosed(d.Frames(), 2*time.Second), "Frames must close after a front-end error")
	require.ErrorIs(t, d.Err(), boom)
	assert.Contains(t, d.Err().Error(), "front-end")
	require.NoError(t, d.Close())
	assert.ErrorIs(t, d.Err(), boom, "Close keeps the reason")
}
