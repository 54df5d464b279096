package device

import (
	"context"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collect reads frames until n arrived, the channel closed or timeout.
func collect(t *testing.T, ch <-chan audio.Frame, n int, timeout time.Duration) []audio.Frame {
	t.Helper()
	var got []audio.Frame
	deadline := time.After(timeout)
	for len(got) < n {
		select {
		case f, ok := <-ch:
			if !ok {
				return got
			}
			got = append(got, f)
		case <-deadline:
			return got
		}
	}
	return got
}

// waitClosed drains ch and reports whether it closed within timeout.
func waitClosed(ch <-chan audio.Frame, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func assertContiguous(t *testing.T, frames []audio.Frame, from int64) {
	t.Helper()
	pos := from
	for i, f := range frames {
		require.Equal(t, audio.Mono16k, f.Format, "frame %d format", i)
		require.Len(t, f.Samples, FrameSize, "frame %d length", i)
		require.Equal(t, pos, f.Pos, "frame %d position", i)
		pos = f.End()
	}
}

func tone(rate, channels int, hz float64, d time.Duration, amp float32) []float32 {
	n := int(audio.Format{Rate: rate}.Samples(d))
	out := make([]float32, 0, n*channels)
	for i := range n {
		v := amp * float32(math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
		for range channels {
			out = append(out, v)
		}
	}
	return out
}

func TestNullDuplexLifecycle(t *testing.T) {
	defer goleak.VerifyNone(t)
	d, err := Open(Config{Backend: "null"})
	require.NoError(t, err)
	assert.Equal(t, audio.Format{Rate: 48000, Channels: 1}, d.Player().Format())
	require.NoError(t, d.Start())
	require.NoError(t, d.Start(), "a second Start is a no-op")

	// Queue some playback; the callback has to consume it.
	p := d.Player()
	_, end, err := p.Write(context.Background(), tone(48000, 1, 1000, 100*time.Millisecond, 0.5))
	require.NoError(t, err)
	p.EndOfReply()

	frames := collect(t, d.Frames(), 30, 5*time.Second)
	require.Len(t, frames, 30, "null device should deliver 300 ms of frames")
	assertContiguous(t, frames, 0)
	assert.GreaterOrEqual(t, d.Clock().Now(), frames[len(frames)-1].Stop(),
		"clock must not lag the frames already delivered")

	require.Eventually(t, func() bool { return p.Consumed() >= end }, 5*time.Second, 10*time.Millisecond,
		"player queue was not consumed by the callback")

	st := d.Stats()
	assert.Positive(t, st.Callbacks)
	assert.Zero(t, st.CaptureOverruns)
	assert.Zero(t, st.PlaybackUnderruns)

	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	assert.True(t, waitClosed(d.Frames(), time.Second), "Frames must close on Close")
	assert.NoError(t, d.Err(), "closing is not an error")
	assert.Error(t, d.Start(), "Start after Close")
}

func TestNullCloseWithoutStart(t *testing.T) {
	d, err := Open(Config{Backend: "null", Rate: 16000, PlaybackChannels: 2})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	assert.True(t, waitClosed(d.Frames(), time.Second))
}

func TestNullNoResample(t *testing.T) {
	d, err := Open(Config{Backend: "null", Rate: 16000})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Start())
	frames := collect(t, d.Frames(), 20, 5*time.Second)
	require.Len(t, frames, 20)
	assertContiguous(t, frames, 0)
}

func TestListNull(t *testing.T) {
	infos, err := List("null")
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, i := range infos {
		kinds[i.Kind]++
	}
	assert.Equal(t, 1, kinds["capture"], "%v", infos)
	assert.Equal(t, 1, kinds["playback"], "%v", infos)
}

func TestSelectDevice(t *testing.T) {
	_, err := Open(Config{Backend: "null", Capture: "no such microphone"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"no such microphone" not found`)
	assert.Contains(t, err.Error(), "NULL Capture Device", "error must list the available names")

	_, err = Open(Config{Backend: "null", Playback: "no such speaker"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NULL Playback Device")

	// Case-insensitive substring selection.
	d, err := Open(Config{Backend: "null", Capture: "null capture", Playback: "NULL Playback Device"})
	require.NoError(t, err)
	assert.Contains(t, d.name, "NULL Capture Device")
	require.NoError(t, d.Close())
}

func TestBadConfig(t *testing.T) {
	_, err := Open(Config{Backend: "oss-from-1998"})
	assert.ErrorContains(t, err, "unknown")
	_, err = List("nope")
	assert.Error(t, err)
	_, err = Open(Config{Backend: "null", Rate: -1})
	assert.Error(t, err)
	_, err = Open(Config{Backend: "null", Period: time.Hour})
	assert.Error(t, err)
}

// The stop callback firing without Close is a lost device: the error
// names it and Frames closes so the pipeline ends.
func TestNullUnexpectedStop(t *testing.T) {
	d, err := Open(Config{Backend: "null"})
	require.NoError(t, err)
	defer d.Close()
	require.NoError(t, d.Start())
	require.Len(t, collect(t, d.Frames(), 5, 5*time.Second), 5)

	d.onStop() // what miniaudio does when the backend loses the device
	assert.True(t, waitClosed(d.Frames(), 2*time.Second), "Frames must close after the device stopped")
	require.Error(t, d.Err())
	assert.ErrorIs(t, d.Err(), ErrDeviceLost)
	assert.Contains(t, d.Err().Error(), `audio device "NULL Capture Device / NULL Playback Device" stopped unexpectedly (disconnected?)`)
	require.NoError(t, d.Close())
	assert.Error(t, d.Err(), "Close keeps the reason the device stopped")
}

func TestWatchdog(t *testing.T) {
	cfg := Config{Rate: 16000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: time.Second}
	run := func(t *testing.T, d *Duplex, periods int) {
		d.stallTimeout = 100 * time.Millisecond
		d.startTimeout = 300 * time.Millisecond
		d.wg.Add(2)
		go d.reader()
		go d.watchdog()
		t.Cleanup(func() { close(d.quit); d.wg.Wait() })
		in, out := make([]byte, 160*4), make([]byte, 160*4)
		for range periods {
			d.process(out, in, 160)
			time.Sleep(10 * time.Millisecond)
		}
		assert.True(t, waitClosed(d.Frames(), 2*time.Second), "Frames must close when the device goes quiet")
		require.Error(t, d.Err())
		assert.ErrorIs(t, d.Err(), ErrDeviceLost)
	}
	t.Run("never started", func(t *testing.T) {
		d, err := newDuplex(cfg, "quiet mic")
		require.NoError(t, err)
		run(t, d, 0)
		assert.Contains(t, d.Err().Error(), `audio device "quiet mic" started but delivered no audio`)
	})
	t.Run("stopped", func(t *testing.T) {
		d, err := newDuplex(cfg, "flaky mic")
		require.NoError(t, err)
		run(t, d, 20)
		assert.Contains(t, d.Err().Error(), `audio device "flaky mic" stopped delivering audio`)
	})
}

// Overruns are dropped in the callback but reach the pipeline as silence
// of the same length at the same place, so positions stay exact.
func TestOverrunKeepsPositions(t *testing.T) {
	cfg := Config{Rate: 16000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: time.Second}
	d, err := newDuplex(cfg, "test")
	require.NoError(t, err)
	d.now = stillClock
	capacity := d.ring.Cap()

	period := make([]float32, 160)
	in := func(v float32) []byte {
		for i := range period {
			period[i] = v
		}
		return f32bytes(period)
	}
	out := make([]byte, 160*4)

	// Fill the ring and overflow it by 10 periods of 2s.
	n := 0
	for n < capacity {
		d.process(out, in(1), 160)
		n += 160
	}
	for range 10 {
		d.process(out, in(2), 160)
	}
	dropped := uint64(n - capacity + 10*160)
	assert.Equal(t, dropped, d.Stats().CaptureOverruns)

	var frames []audio.Frame
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range d.frames {
			frames = append(frames, audio.Frame{Format: f.Format, Pos: f.Pos, Samples: append([]float32(nil), f.Samples...)})
		}
	}()
	require.True(t, d.drain())
	// Space again: the next period is preceded by the dropped stretch.
	for range 5 {
		d.process(out, in(3), 160)
	}
	require.True(t, d.drain())
	close(d.frames)
	<-done

	total := capacity + int(dropped) + 5*160
	require.Len(t, frames, total/FrameSize)
	assertContiguous(t, frames, 0)
	var all []float32
	for _, f := range frames {
		all = append(all, f.Samples...)
	}
	for i, v := range all {
		want := float32(1)
		switch {
		case i >= capacity+int(dropped):
			want = 3
		case i >= capacity:
			want = 0
		}
		require.Equal(t, want, v, "sample %d (capacity %d, dropped %d)", i, capacity, dropped)
	}
}

func f32bytes(p []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), len(p)*4)
}

func newBenchDuplex(tb testing.TB) (*Duplex, []byte, []byte) {
	d, err := newDuplex(Config{Rate: 48000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: 5 * time.Second}, "bench")
	require.NoError(tb, err)
	in := f32bytes(tone(48000, 1, 440, 10*time.Millisecond, 0.3))
	out := make([]byte, 480*4)
	return d, in, out
}

// The callback body runs on the audio thread: it must never allocate,
// with or without a front-end (far ring, stereo downmix).
func TestCallbackDoesNotAllocate(t *testing.T) {
	t.Run("capture only", func(t *testing.T) {
		d, in, out := newBenchDuplex(t)
		testCallbackAllocs(t, d, in, out)
	})
	t.Run("front-end stereo", func(t *testing.T) {
		d, err := newDuplex(Config{Rate: 48000, PlaybackChannels: 2, Period: 10 * time.Millisecond, PlaybackBuffer: 5 * time.Second, FrontEnd: &fakeFrontEnd{}}, "bench")
		require.NoError(t, err)
		in := f32bytes(tone(48000, 1, 440, 10*time.Millisecond, 0.3))
		testCallbackAllocs(t, d, in, make([]byte, 480*2*4))
		assert.Equal(t, d.ring.Written(), d.farRing.Written(), "far ring drops in step with capture")
	})
	t.Run("capture gaps", func(t *testing.T) {
		d, in, out := newBenchDuplex(t)
		at := time.Now()
		d.now = func() time.Time {
			at = at.Add(100 * time.Millisecond) // a 90 ms gap before every period
			return at
		}
		allocs := testing.AllocsPerRun(50, func() {
			d.process(out, in, 480)
			d.ring.SkipTo(d.ring.Written())
			d.gapHead.Store(d.gapTail.Load())
		})
		assert.Zero(t, allocs)
		assert.Positive(t, d.Stats().CaptureGaps)
	})
}

func testCallbackAllocs(t *testing.T, d *Duplex, in, out []byte) {
	ch := d.cfg.PlaybackChannels
	_, _, err := d.player.Write(context.Background(), tone(48000, ch, 1000, time.Second, 0.3))
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(200, func() {
		d.process(out, in, 480)
		if d.farRing != nil {
			d.farRing.SkipTo(d.farRing.Written())
		}
		d.ring.SkipTo(d.ring.Written())
	})
	assert.Zero(t, allocs)
	// The overrun path too.
	allocs = testing.AllocsPerRun(int(d.ring.Cap()/480)+50, func() { d.process(out, in, 480) })
	assert.Zero(t, allocs)
	assert.Positive(t, d.Stats().CaptureOverruns)
}

// BenchmarkCallback is the cost of one 10 ms duplex period at 48 kHz with
// audio both ways (capture into the ring, playback from the queue).
func BenchmarkCallback(b *testing.B) {
	d, in, out := newBenchDuplex(b)
	refill := tone(48000, 1, 1000, 4*time.Second, 0.3)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%256 == 0 {
			b.StopTimer()
			d.ring.SkipTo(d.ring.Written())
			d.player.Flush()
			_, _, err := d.player.Write(ctx, refill)
			require.NoError(b, err)
			select {
			case <-d.wake:
			default:
			}
			b.StartTimer()
		}
		d.process(out, in, 480)
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(10*time.Millisecond)*100, "%period")
}

// A reader told to wake every 100 ms is woken once that much capture
// waits for it, not every period, and at once when told to wake sooner.
func TestWakeEvery(t *testing.T) {
	cfg := Config{Rate: 16000, PlaybackChannels: 1, Period: 10 * time.Millisecond, PlaybackBuffer: time.Second}
	d, err := newDuplex(cfg, "test")
	require.NoError(t, err)
	d.now = stillClock
	in, out := f32bytes(make([]float32, 160)), make([]byte, 160*4)
	woken := func() bool {
		select {
		case <-d.wake:
			return true
		default:
			return false
		}
	}
	d.process(out, in, 160)
	assert.True(t, woken(), "every period by default")
	d.ring.Read(make([]float32, 160)) // as the reader would
	d.WakeEvery(100 * time.Millisecond)
	assert.False(t, woken(), "a longer wait wakes nothing")
	for range 9 {
		d.process(out, in, 160)
		assert.False(t, woken(), "not before 100 ms wait")
	}
	d.process(out, in, 160)
	assert.True(t, woken(), "100 ms wait")
	d.WakeEvery(0)
	assert.True(t, woken(), "a shorter wait wakes it at once")
}
