package audio

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noSleep fails the test if the player ever has to wait.
type noSleep struct{ t *testing.T }

func (s noSleep) Sleep(context.Context, time.Duration) error {
	assert.Fail(s.t, "player slept with room in the queue")
	return errors.New("unexpected sleep")
}

// drainSleeper plays one device period each time the player waits for
// room, standing in for the device callback.
type drainSleeper struct {
	p       *Player
	period  []float32
	played  []float32
	sleeps  []time.Duration
	written []uint64 // Written() when each sleep began
}

func (s *drainSleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.sleeps = append(s.sleeps, d)
	s.written = append(s.written, s.p.Written())
	s.p.Fill(s.period)
	s.played = append(s.played, s.period...)
	return ctx.Err()
}

// tickSleeper blocks until ctx is done or the test lets it go.
type tickSleeper struct {
	sleeping chan struct{}
	tick     chan struct{}
}

func (s *tickSleeper) Sleep(ctx context.Context, _ time.Duration) error {
	select {
	case s.sleeping <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.tick:
		return nil
	}
}

// fill plays one period of n samples, with out pre-set to garbage so
// padding is checked.
func fill(p *Player, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = -7
	}
	p.Fill(out)
	return out
}

func silence(n int) []float32 { return make([]float32, n) }

func TestPlayerWriteThenFill(t *testing.T) {
	p := NewPlayer(Mono16k, time.Second, noSleep{t})
	ctx := context.Background()

	start, end, err := p.Write(ctx, ramp(1, 100))
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{0, 100}, [2]uint64{start, end})
	start, end, err = p.Write(ctx, ramp(101, 150))
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{100, 250}, [2]uint64{start, end})
	assert.Equal(t, Mono16k.Duration(250), p.Queued())

	assert.Equal(t, ramp(1, 160), fill(p, 160))
	assert.Equal(t, append(ramp(161, 90), silence(70)...), fill(p, 160), "the rest, then silence")
	assert.Equal(t, silence(160), fill(p, 160))
	assert.Equal(t, uint64(250), p.Consumed())
	assert.Equal(t, uint64(250), p.Written())
	assert.Zero(t, p.Queued())

	// An empty write is a no-op at the current position.
	start, end, err = p.Write(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{250, 250}, [2]uint64{start, end})
}

func TestPlayerFlush(t *testing.T) {
	tests := []struct {
		name      string
		fills     int // periods of 160 played before the flush
		wantHeard uint64
	}{
		{"nothing played yet", 0, 0},
		{"one period", 1, 160},
		{"three periods", 3, 480},
		{"everything played", 8, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlayer(Mono16k, time.Second, noSleep{t})
			ctx := context.Background()
			_, _, err := p.Write(ctx, ramp(1, 1000))
			require.NoError(t, err)
			for k := range tc.fills {
				got := fill(p, 160)
				if want := min(160, max(0, 1000-160*k)); want > 0 {
					assert.Equal(t, ramp(1+160*k, want), got[:want])
				}
			}

			assert.Equal(t, tc.wantHeard, p.Flush())
			assert.Equal(t, silence(160), fill(p, 160), "the very next period must be silent")
			assert.Equal(t, uint64(1000), p.Consumed(), "flushed audio counts as consumed")
			assert.Equal(t, uint64(1000), p.Written())
			assert.Zero(t, p.Queued())

			// The queue keeps working after a flush, at the next position.
			start, end, err := p.Write(ctx, ramp(5000, 100))
			require.NoError(t, err)
			assert.Equal(t, [2]uint64{1000, 1100}, [2]uint64{start, end})
			assert.Equal(t, append(ramp(5000, 100), silence(60)...), fill(p, 160))
		})
	}
}

func TestPlayerCancelledWriteCannotLeakAfterFlush(t *testing.T) {
	p := NewPlayer(Mono16k, time.Second, noSleep{t})
	ctx, cancel := context.WithCancel(context.Background())
	_, _, err := p.Write(ctx, ramp(1, 1000))
	require.NoError(t, err)
	fill(p, 160)

	// Barge-in: the reply's context is cancelled, then the queue flushed;
	// a write still in flight for that reply arrives late.
	cancel()
	assert.Equal(t, uint64(160), p.Flush())
	start, end, err := p.Write(ctx, ramp(2000, 500))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, start, end, "nothing of the late write may be queued")
	assert.Equal(t, uint64(1000), p.Written())
	for range 5 {
		assert.Equal(t, silence(160), fill(p, 160))
	}
	// Nor may it mark a reply as playing again: the silence is not an
	// underrun.
	assert.Zero(t, p.Underruns())
}

// TestPlayerCancelledBlockedWriteCannotLeak runs the same race for real: a
// writer blocked on a full queue is cancelled while the callback keeps
// playing, and nothing it offered may play after the flush.
func TestPlayerCancelledBlockedWriteCannotLeak(t *testing.T) {
	for iter := range 50 {
		s := &tickSleeper{sleeping: make(chan struct{}, 1), tick: make(chan struct{})}
		p := NewPlayer(Mono16k, 10*time.Millisecond, s) // 256-sample ring
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			end uint64
			err error
		}
		done := make(chan result, 1)
		go func() {
			_, end, err := p.Write(ctx, ramp(1, 10_000))
			done <- result{end, err}
		}()
		<-s.sleeping // the queue is full
		fill(p, 160)
		s.tick <- struct{}{} // let it refill once
		<-s.sleeping
		fill(p, 160)

		cancel()
		p.Flush()
		r := <-done
		require.ErrorIs(t, r.err, context.Canceled, "iteration %d", iter)
		assert.Less(t, r.end, uint64(10_000))
		assert.Equal(t, r.end, p.Written())
		u := p.Underruns()
		for range 3 {
			require.Equal(t, silence(160), fill(p, 160), "iteration %d: audio after flush", iter)
		}
		require.Equal(t, u, p.Underruns(), "iteration %d: the cancelled write re-marked the reply active", iter)
	}
}

func TestPlayerUnderruns(t *testing.T) {
	tests := []struct {
		name   string
		queued int    // samples written before the fills
		end    string // "", "end" (EndOfReply) or "flush" before the fills
		fills  int
		want   uint64
	}{
		{"nothing written is not an underrun", 0, "", 3, 0},
		{"a reply running short", 100, "", 1, 1},
		{"a reply running dry every period", 100, "", 3, 3},
		{"a full period", 160, "", 1, 0},
		{"two full periods then dry", 320, "", 3, 1},
		{"short after the end of the reply", 100, "end", 3, 0},
		{"flush ends the reply", 100, "flush", 3, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlayer(Mono16k, time.Second, noSleep{t})
			_, _, err := p.Write(context.Background(), ramp(1, tc.queued))
			require.NoError(t, err)
			switch tc.end {
			case "end":
				p.EndOfReply()
			case "flush":
				p.Flush()
			}
			for range tc.fills {
				fill(p, 160)
			}
			assert.Equal(t, tc.want, p.Underruns())
		})
	}

	t.Run("a new reply after the end counts again", func(t *testing.T) {
		p := NewPlayer(Mono16k, time.Second, noSleep{t})
		_, _, err := p.Write(context.Background(), ramp(1, 100))
		require.NoError(t, err)
		p.EndOfReply()
		fill(p, 160)
		require.Zero(t, p.Underruns())
		_, _, err = p.Write(context.Background(), ramp(1, 100))
		require.NoError(t, err)
		fill(p, 160)
		assert.Equal(t, uint64(1), p.Underruns())
	})
}

// Each gap says where the reply's audio ran out and how long it stayed
// dry: ended by more audio, or by the end of the reply.
func TestPlayerGaps(t *testing.T) {
	p := NewPlayer(Mono16k, time.Second, noSleep{t})
	write := func(n int) {
		_, _, err := p.Write(context.Background(), ramp(1, n))
		require.NoError(t, err)
	}
	write(100)
	fill(p, 160) // 100 played, 60 dry
	fill(p, 160) // 160 more dry
	assert.Empty(t, p.Gaps(), "a gap still playing")
	write(200)
	fill(p, 160) // the gap ends: 160 played
	fill(p, 160) // 40 played, 120 dry
	p.EndOfReply()
	fill(p, 160) // the reply's end ends the second gap
	assert.Equal(t, []Gap{{At: 100, Frames: 220}, {At: 300, Frames: 120}}, p.Gaps())
	assert.Equal(t, uint64(3), p.Underruns())
}

func TestPlayerDeviceTime(t *testing.T) {
	ms := func(n int64) time.Duration { return Mono16k.Duration(n) } // 16 kHz samples
	st := Format{Rate: 48000, Channels: 2}
	fr := func(n int64) time.Duration { return st.Duration(n) } // 48 kHz frames
	type query struct {
		q      uint64
		want   time.Duration
		wantOK bool
	}
	type step struct {
		write int // samples to queue before the fill
		fill  int // period length in samples; 0 = no fill
		check []query
	}
	tests := []struct {
		name   string
		format Format
		steps  []step
	}{
		{
			name:   "nothing played",
			format: Mono16k,
			steps: []step{
				{check: []query{{0, 0, false}}},
				{write: 100, check: []query{{0, 0, false}}},
			},
		},
		{
			name:   "mono after a silent period",
			format: Mono16k,
			steps: []step{
				// Device position 0..160 is silence.
				{fill: 160, check: []query{{0, 0, false}}},
				// Queue 0..160 plays at device 160..320.
				{write: 480, fill: 160, check: []query{
					{0, ms(160), true}, {1, ms(161), true}, {159, ms(319), true}, {160, 0, false},
				}},
				// Queue 160..320 at device 320..480; earlier positions are
				// extrapolated back from the last period.
				{fill: 160, check: []query{
					{160, ms(320), true}, {319, ms(479), true}, {320, 0, false},
					{0, ms(160), true}, {100, ms(260), true}, {159, ms(319), true},
				}},
				// The last of the queue: 320..480 at device 480..640.
				{fill: 160, check: []query{
					{320, ms(480), true}, {479, ms(639), true}, {480, 0, false},
				}},
			},
		},
		{
			name:   "period longer than what is queued",
			format: Mono16k,
			steps: []step{
				{write: 50, fill: 160, check: []query{
					{0, 0, true}, {49, ms(49), true}, {50, 0, false},
				}},
			},
		},
		{
			name:   "stereo positions count interleaved samples",
			format: st,
			steps: []step{
				// 480 frames of silence, then queue 0..960 (480 frames) at
				// device frames 480..960.
				{fill: 960},
				{write: 1920, fill: 960, check: []query{
					{0, fr(480), true},
					{2, fr(481), true},
					{958, fr(959), true},
					{960, 0, false},
				}},
				{fill: 960, check: []query{
					{960, fr(960), true},
					{0, fr(480), true},
					{480, fr(720), true},
					{1920, 0, false},
				}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlayer(tc.format, time.Second, noSleep{t})
			next := 1
			for i, s := range tc.steps {
				if s.write > 0 {
					_, _, err := p.Write(context.Background(), ramp(next, s.write))
					require.NoError(t, err)
					next += s.write
				}
				if s.fill > 0 {
					fill(p, s.fill)
				}
				for _, q := range s.check {
					got, ok := p.DeviceTime(q.q)
					assert.Equal(t, q.wantOK, ok, "step %d: DeviceTime(%d) ok", i, q.q)
					if q.wantOK {
						assert.Equal(t, q.want, got, "step %d: DeviceTime(%d)", i, q.q)
					}
				}
			}
		})
	}
}

func TestPlayerWriteBlocksUntilFillDrains(t *testing.T) {
	s := &drainSleeper{period: make([]float32, 160)}
	p := NewPlayer(Mono16k, 10*time.Millisecond, s) // 160 samples, a 256-sample ring
	s.p = p
	in := ramp(1, 1000)

	start, end, err := p.Write(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, [2]uint64{0, 1000}, [2]uint64{start, end})

	// 1000 samples through a 256-sample queue drained 160 at a time.
	require.Len(t, s.sleeps, 5)
	for _, d := range s.sleeps {
		assert.Equal(t, 5*time.Millisecond, d)
	}
	assert.Equal(t, []uint64{256, 416, 576, 736, 896}, s.written, "each wait starts with the queue full")

	// What was played while waiting, then the rest, is the input in order.
	played := s.played
	for p.Consumed() < p.Written() {
		played = append(played, fill(p, 160)...)
	}
	require.GreaterOrEqual(t, len(played), len(in))
	assert.Equal(t, in, played[:len(in)])
	assert.Equal(t, silence(len(played)-len(in)), played[len(in):])
}

func TestPlayerBlockedWriteStopsOnCancel(t *testing.T) {
	s := &tickSleeper{sleeping: make(chan struct{}, 1), tick: make(chan struct{})}
	p := NewPlayer(Mono16k, 10*time.Millisecond, s)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var end uint64
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, end, err = p.Write(ctx, ramp(1, 1000))
	}()
	<-s.sleeping
	cancel()
	wg.Wait()
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, uint64(256), end, "only what fitted was queued")
	assert.Equal(t, ramp(1, 160), fill(p, 160))
}

func TestPlayerFillDoesNotAllocate(t *testing.T) {
	p := NewPlayer(Mono16k, 2*time.Second, noSleep{t})
	_, _, err := p.Write(context.Background(), ramp(1, 16000))
	require.NoError(t, err) // the reply stays active: running dry counts
	out := make([]float32, 160)
	allocs := testing.AllocsPerRun(200, func() { p.Fill(out) }) // runs dry part way: underrun path too
	assert.Zero(t, allocs)
	assert.NotZero(t, p.Underruns())
	p.Flush()
	assert.Zero(t, testing.AllocsPerRun(50, func() { p.Fill(out) }))
}

// Pause fades out within a few milliseconds and then holds the queue:
// nothing more is consumed (nor counted as an underrun) until Resume,
// which plays on from the held sample with a fade in; a sample played
// before the pause keeps its device time.
func TestPlayerPauseResume(t *testing.T) {
	p := NewPlayer(Mono16k, time.Second, noSleep{t})
	_, _, err := p.Write(context.Background(), ones(1000))
	require.NoError(t, err)
	assert.Equal(t, ones(160), fill(p, 160))

	p.Pause()
	out := fill(p, 160)
	rampFrames := int(Mono16k.Samples(rampTime)) // 40 at 16 kHz
	for i := range rampFrames - 1 {
		assert.InDelta(t, 1-float32(i+1)/float32(rampFrames), out[i], 1e-6, "fade sample %d", i)
	}
	assert.Equal(t, silence(160-rampFrames+1), out[rampFrames-1:])
	held := p.Consumed()
	assert.Equal(t, uint64(160+rampFrames-1), held, "only the fade was consumed")
	for range 5 {
		assert.Equal(t, silence(160), fill(p, 160))
	}
	assert.Equal(t, held, p.Consumed(), "paused: the queue waits")
	assert.Zero(t, p.Underruns(), "a pause is not an underrun")
	at, ok := p.DeviceTime(100)
	assert.True(t, ok)
	assert.Equal(t, Mono16k.Duration(100), at, "played before the pause, dated then")

	p.Resume()
	out = fill(p, 160)
	for i := range rampFrames {
		assert.InDelta(t, float32(i+1)/float32(rampFrames), out[i], 1e-6, "fade-in sample %d", i)
	}
	assert.Equal(t, ones(160-rampFrames), out[rampFrames:])
	assert.Equal(t, held+160, p.Consumed(), "played on from the held sample")
	at, ok = p.DeviceTime(held)
	assert.True(t, ok)
	assert.Equal(t, Mono16k.Duration(7*160), at, "after one period and the six paused")
}

// Duck plays on at the lower level after the fade; Flush ends a pause or
// ducking, so the next reply plays at full level.
func TestPlayerDuckAndFlush(t *testing.T) {
	p := NewPlayer(Format{Rate: 16000, Channels: 2}, time.Second, noSleep{t})
	_, _, err := p.Write(context.Background(), ones(2000))
	require.NoError(t, err)
	p.Duck(0.25)
	out := fill(p, 320)
	assert.Equal(t, out[0], out[1], "both channels alike")
	assert.Less(t, out[0], float32(1))
	assert.Equal(t, []float32{0.25, 0.25}, out[318:])
	assert.Equal(t, uint64(320), p.Consumed(), "ducked, not paused")

	p.Pause()
	fill(p, 320)
	p.Flush()
	assert.Equal(t, silence(320), fill(p, 320), "flushed")
	_, _, err = p.Write(context.Background(), ones(320))
	require.NoError(t, err)
	out = fill(p, 320)
	assert.Equal(t, ones(320), out, "the next reply: full level")
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		p.Pause()
		p.Fill(out)
		p.Resume()
		p.Fill(out)
	}))
}

// The volume scales playback after a fade, as a gain change does, and
// multiplies with ducking; muted playback still consumes the queue, so
// positions and device times advance as if it were heard.
func TestPlayerVolume(t *testing.T) {
	rampFrames := int(Mono16k.Samples(rampTime))
	tests := []struct {
		name   string
		volume float32
		duck   float32 // 0: not ducked
		want   float32 // level after the fade
	}{
		{"full", 1, 0, 1},
		{"half", 0.5, 0, 0.5},
		{"muted", 0, 0, 0},
		{"ducked and lowered", 0.5, 0.5, 0.25},
		{"above one is one", 3, 0, 1},
		{"below zero is muted", -1, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlayer(Mono16k, time.Second, noSleep{t})
			_, _, err := p.Write(context.Background(), ones(1000))
			require.NoError(t, err)
			p.SetVolume(tc.volume)
			if tc.duck > 0 {
				p.Duck(tc.duck)
			}
			out := fill(p, 160)
			for i := range rampFrames {
				want := 1 + (tc.want-1)*float32(i+1)/float32(rampFrames)
				assert.InDelta(t, want, out[i], 1e-6, "fade sample %d", i)
			}
			for i := rampFrames; i < 160; i++ {
				require.InDelta(t, tc.want, out[i], 1e-6, "sample %d", i)
			}
			assert.Equal(t, uint64(160), p.Consumed(), "never held, muted or not")
			out = fill(p, 160)
			for i := range out {
				require.InDelta(t, tc.want, out[i], 1e-6, "next period, sample %d", i)
			}
			at, ok := p.DeviceTime(300)
			assert.True(t, ok, "played, if unheard")
			assert.Equal(t, Mono16k.Duration(300), at)
		})
	}

	t.Run("clamped", func(t *testing.T) {
		p := NewPlayer(Mono16k, time.Second, noSleep{t})
		assert.Equal(t, float32(1), p.Volume(), "starts at full volume")
		for _, c := range []struct{ set, want float32 }{
			{0.3, 0.3}, {1.5, 1}, {-0.2, 0}, {float32(math.NaN()), 0}, {1, 1},
		} {
			p.SetVolume(c.set)
			assert.Equal(t, c.want, p.Volume(), "SetVolume(%v)", c.set)
		}
	})

	// Barge-in's Resume and Flush restore the gain, never the user's volume.
	t.Run("kept across pause, resume and flush", func(t *testing.T) {
		p := NewPlayer(Mono16k, time.Second, noSleep{t})
		p.SetVolume(0.5)
		_, _, err := p.Write(context.Background(), ones(1000))
		require.NoError(t, err)
		fill(p, 160)
		p.Pause()
		fill(p, 160)
		p.Resume()
		fill(p, 160)
		assert.Equal(t, []float32{0.5, 0.5}, fill(p, 160)[158:], "resumed at the volume")
		p.Flush()
		_, _, err = p.Write(context.Background(), ones(160))
		require.NoError(t, err)
		out := fill(p, 160)
		assert.Equal(t, float32(0.5), out[159], "the next reply: at the volume")
		assert.Equal(t, float32(0.5), p.Volume())
	})

	// Unmuting fades in from silence, and muting a paused player keeps it
	// held: the volume never starts the queue moving.
	t.Run("unmute fades in", func(t *testing.T) {
		p := NewPlayer(Mono16k, time.Second, noSleep{t})
		p.SetVolume(0)
		_, _, err := p.Write(context.Background(), ones(1000))
		require.NoError(t, err)
		fill(p, 160)
		assert.Equal(t, silence(160), fill(p, 160))
		p.SetVolume(1)
		out := fill(p, 160)
		for i := range rampFrames {
			assert.InDelta(t, float32(i+1)/float32(rampFrames), out[i], 1e-6, "fade-in sample %d", i)
		}
		assert.Equal(t, ones(160-rampFrames), out[rampFrames:])

		p.SetVolume(0)
		fill(p, 160)
		p.Pause()
		held := p.Consumed()
		assert.Equal(t, silence(160), fill(p, 160))
		assert.Equal(t, held, p.Consumed(), "muted and paused: held at once")
	})

	t.Run("no allocation", func(t *testing.T) {
		p := NewPlayer(Mono16k, 2*time.Second, noSleep{t})
		_, _, err := p.Write(context.Background(), ones(16000))
		require.NoError(t, err)
		out := make([]float32, 160)
		assert.Zero(t, testing.AllocsPerRun(50, func() {
			p.SetVolume(0.4)
			p.Fill(out)
			p.SetVolume(1)
			p.Fill(out)
		}))
	})
}

func ones(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
