package clock_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The interface is what stages depend on; both clocks must satisfy it.
var (
	_ clock.Clock = (*clock.Virtual)(nil)
	_ clock.Clock = (*clock.Stream)(nil)
)

// waitSleeping waits until a goroutine is asleep on clk (NextWake only
// says whether there is one, so callers start sleepers one at a time and
// wait for the clock to go idle in between).
func waitSleeping(t *testing.T, clk *clock.Virtual) {
	t.Helper()
	require.Eventually(t, func() bool { _, ok := clk.NextWake(); return ok }, 2*time.Second, time.Millisecond)
}

// idle waits for the clock to go idle, failing fast instead of hanging.
func idle(t *testing.T, clk *clock.Virtual) {
	t.Helper()
	require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
}

// TestVirtualSleepWakesAtDeadline advances the clock in steps and checks
// after each one exactly which sleepers have woken, and at what time.
func TestVirtualSleepWakesAtDeadline(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		sleeps    []time.Duration
		steps     []time.Duration
		wantWoken [][]bool // per step, per sleeper
	}{
		{
			name:      "one sleeper, not a moment early",
			sleeps:    []time.Duration{100 * ms},
			steps:     []time.Duration{50 * ms, 49 * ms, ms - 1, 1},
			wantWoken: [][]bool{{false}, {false}, {false}, {true}},
		},
		{
			name:      "one step past the deadline",
			sleeps:    []time.Duration{100 * ms},
			steps:     []time.Duration{time.Second},
			wantWoken: [][]bool{{true}},
		},
		{
			name:   "several deadlines",
			sleeps: []time.Duration{10 * ms, 30 * ms, 30 * ms, 50 * ms},
			steps:  []time.Duration{10 * ms, 10 * ms, 10 * ms, 19 * ms, ms},
			wantWoken: [][]bool{
				{true, false, false, false},
				{true, false, false, false},
				{true, true, true, false},
				{true, true, true, false},
				{true, true, true, true},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewVirtual()
			var mu sync.Mutex
			wokeAt := make([]time.Duration, len(tc.sleeps))
			woken := make([]bool, len(tc.sleeps))
			var wg sync.WaitGroup
			for i, d := range tc.sleeps {
				wg.Add(1)
				clk.Hold() // a stage runs with a hold, as the device gives it
				go func() {
					defer wg.Done()
					err := clk.Sleep(context.Background(), d)
					now := clk.Now()
					mu.Lock()
					woken[i], wokeAt[i] = err == nil, now
					mu.Unlock()
					clk.Release()
				}()
				waitSleeping(t, clk)
				// Sleeping gives the hold back, so the clock is idle again
				// before the next sleeper starts.
				idle(t, clk)
			}
			var now time.Duration
			before := make([]bool, len(tc.sleeps))
			for s, step := range tc.steps {
				clk.Advance(step)
				now += step
				// A woken sleeper holds the clock until it has recorded
				// its wake-up, so after WaitIdle the state is settled.
				idle(t, clk)
				assert.Equal(t, now, clk.Now())
				mu.Lock()
				got := append([]bool(nil), woken...)
				at := append([]time.Duration(nil), wokeAt...)
				mu.Unlock()
				assert.Equal(t, tc.wantWoken[s], got, "after step %d (t=%v)", s, now)
				for i := range got {
					if got[i] && !before[i] {
						// Woken by this step: it saw the clock at the step's
						// end, never before its deadline.
						assert.Equal(t, now, at[i], "sleeper %d wake time", i)
						assert.GreaterOrEqual(t, at[i], tc.sleeps[i])
					}
				}
				before = got
			}
			wg.Wait()
		})
	}
}

func TestVirtualSleepEdgeCases(t *testing.T) {
	clk := clock.NewVirtual()
	// Zero or negative durations return at once without touching holds.
	require.NoError(t, clk.Sleep(context.Background(), 0))
	require.NoError(t, clk.Sleep(context.Background(), -time.Second))
	_, pending := clk.NextWake()
	assert.False(t, pending)

	// A done context returns its error before sleeping.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, clk.Sleep(ctx, time.Second), context.Canceled)
	assert.ErrorIs(t, clk.Sleep(ctx, 0), context.Canceled)
	_, pending = clk.NextWake()
	assert.False(t, pending)
	idle(t, clk)
}

func TestVirtualNextWake(t *testing.T) {
	clk := clock.NewVirtual()
	clk.Advance(5 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, d := range []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		wg.Add(1)
		clk.Hold()
		go func() {
			defer wg.Done()
			_ = clk.Sleep(ctx, d) // woken or cancelled, the hold is ours again
			clk.Release()
		}()
		waitSleeping(t, clk)
		idle(t, clk)
	}
	require.Eventually(t, func() bool {
		next, ok := clk.NextWake()
		return ok && next == 15*time.Millisecond // earliest deadline, absolute
	}, 2*time.Second, time.Millisecond)
	clk.Advance(10 * time.Millisecond)
	idle(t, clk)
	next, ok := clk.NextWake()
	assert.True(t, ok)
	assert.Equal(t, 25*time.Millisecond, next)
	cancel()
	wg.Wait()
	_, ok = clk.NextWake()
	assert.False(t, ok)
	idle(t, clk)
}

func TestVirtualWaitIdleNothingHeld(t *testing.T) {
	clk := clock.NewVirtual()
	start := time.Now()
	// A zero stall would fail at once if WaitIdle ever had to wait.
	require.NoError(t, clk.WaitIdle(context.Background(), 0))
	assert.Less(t, time.Since(start), 100*time.Millisecond)

	clk.Hold()
	clk.Hold()
	clk.Release()
	clk.Release()
	require.NoError(t, clk.WaitIdle(context.Background(), 0))
}

func TestVirtualWaitIdleWaitsForRelease(t *testing.T) {
	for _, holds := range []int{1, 3} {
		clk := clock.NewVirtual()
		for range holds {
			clk.Hold()
		}
		done := make(chan error, 1)
		go func() { done <- clk.WaitIdle(context.Background(), 5*time.Second) }()

		for i := range holds {
			select {
			case err := <-done:
				require.FailNow(t, "WaitIdle returned early", "WaitIdle returned (%v) with %d hold(s) left", err, holds-i)
			case <-time.After(20 * time.Millisecond):
			}
			clk.Release()
		}
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(2 * time.Second):
			require.FailNow(t, "WaitIdle did not return after the last Release")
		}
	}
}

func TestVirtualWaitIdleContext(t *testing.T) {
	clk := clock.NewVirtual()
	clk.Hold()
	defer clk.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := clk.WaitIdle(ctx, 5*time.Second)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NotErrorIs(t, err, clock.ErrStalled)
}

func TestVirtualStalled(t *testing.T) {
	for _, stall := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond} {
		clk := clock.NewVirtual()
		clk.Hold()
		start := time.Now()
		err := clk.WaitIdle(context.Background(), stall)
		elapsed := time.Since(start)
		require.ErrorIs(t, err, clock.ErrStalled)
		assert.GreaterOrEqual(t, elapsed, stall, "gave up early")
		assert.Less(t, elapsed, stall+time.Second, "gave up late")
		clk.Release()
		require.NoError(t, clk.WaitIdle(context.Background(), stall))
	}
}

// TestVirtualBusyAccounting follows one stage through a sleep: asleep it
// does not hold the clock, woken it does until it releases.
func TestVirtualBusyAccounting(t *testing.T) {
	const stall = 50 * time.Millisecond
	clk := clock.NewVirtual()
	proceed := make(chan struct{})
	done := make(chan struct{})
	clk.Hold()
	go func() {
		defer close(done)
		assert.NoError(t, clk.Sleep(context.Background(), 10*time.Millisecond))
		<-proceed // woken, working
		clk.Release()
	}()
	waitSleeping(t, clk)
	require.NoError(t, clk.WaitIdle(context.Background(), stall), "a sleeper is not busy")

	clk.Advance(5 * time.Millisecond)
	require.NoError(t, clk.WaitIdle(context.Background(), stall), "still asleep")

	clk.Advance(5 * time.Millisecond)
	require.ErrorIs(t, clk.WaitIdle(context.Background(), stall), clock.ErrStalled, "a woken sleeper is busy")

	close(proceed)
	require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
	<-done
}

// TestVirtualCancelledSleeperIsBusy: once a sleeper's context is done it
// is about to run, so WaitIdle must not return before it has finished,
// even though it has not taken its hold back yet.
func TestVirtualCancelledSleeperIsBusy(t *testing.T) {
	for iter := range 100 {
		clk := clock.NewVirtual()
		ctx, cancel := context.WithCancel(context.Background())
		var finished atomic.Bool
		done := make(chan struct{})
		clk.Hold()
		go func() {
			defer close(done)
			err := clk.Sleep(ctx, time.Hour)
			assert.ErrorIs(t, err, context.Canceled)
			finished.Store(true)
			clk.Release()
		}()
		waitSleeping(t, clk)
		require.NoError(t, clk.WaitIdle(context.Background(), time.Second))

		cancel()
		require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
		require.True(t, finished.Load(), "iteration %d: WaitIdle returned while the cancelled sleeper was still running", iter)
		<-done
	}

	t.Run("busy until it releases", func(t *testing.T) {
		clk := clock.NewVirtual()
		ctx, cancel := context.WithCancel(context.Background())
		proceed := make(chan struct{})
		done := make(chan struct{})
		clk.Hold()
		go func() {
			defer close(done)
			_ = clk.Sleep(ctx, time.Hour)
			<-proceed
			clk.Release()
		}()
		waitSleeping(t, clk)
		cancel()
		require.ErrorIs(t, clk.WaitIdle(context.Background(), 50*time.Millisecond), clock.ErrStalled)
		close(proceed)
		require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
		<-done
		_, pending := clk.NextWake()
		assert.False(t, pending, "a cancelled sleeper leaves the queue")
	})
}

func TestVirtualReleaseWithoutHoldPanics(t *testing.T) {
	clk := clock.NewVirtual()
	assert.PanicsWithValue(t, "clock: Release without Hold", clk.Release)

	clk.Hold()
	assert.NotPanics(t, clk.Release)
	assert.Panics(t, clk.Release, "holds are counted, not remembered as a flag")
}

func TestVirtualAdvance(t *testing.T) {
	clk := clock.NewVirtual()
	assert.Zero(t, clk.Now())
	for _, step := range []time.Duration{10 * time.Millisecond, 0, time.Nanosecond, 3 * time.Second} {
		before := clk.Now()
		clk.Advance(step)
		assert.Equal(t, before+step, clk.Now())
	}
	// Holding work does not stop Advance itself; it is the driver's job to
	// wait for idleness first.
	clk.Hold()
	clk.Advance(time.Millisecond)
	assert.Equal(t, 3*time.Second+10*time.Millisecond+time.Nanosecond+time.Millisecond, clk.Now())
	clk.Release()
}

func TestStream(t *testing.T) {
	tests := []struct {
		rate    int
		advance []int
		want    time.Duration
	}{
		{16000, nil, 0},
		{16000, []int{160}, 10 * time.Millisecond},
		{16000, []int{160, 160, 16000}, 1020 * time.Millisecond},
		{48000, []int{480, 1}, 10*time.Millisecond + time.Second/48000},
		{44100, []int{44100 * 3}, 3 * time.Second},
	}
	for _, tc := range tests {
		s := clock.NewStream(tc.rate)
		for _, n := range tc.advance {
			s.Advance(n)
		}
		assert.Equal(t, tc.want, s.Now(), "rate %d after %v", tc.rate, tc.advance)
	}

	t.Run("concurrent advances", func(t *testing.T) {
		s := clock.NewStream(16000)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 1000 {
					s.Advance(4)
					_ = s.Now()
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, time.Second, s.Now())
	})

	t.Run("hold and release are no-ops", func(t *testing.T) {
		s := clock.NewStream(16000)
		assert.NotPanics(t, s.Release)
		assert.NotPanics(t, s.Hold)
	})

	t.Run("sleep is wall time", func(t *testing.T) {
		s := clock.NewStream(16000)
		start := time.Now()
		require.NoError(t, s.Sleep(context.Background(), 20*time.Millisecond))
		assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
		assert.Zero(t, s.Now(), "sleeping does not move the stream clock")

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start = time.Now()
		assert.ErrorIs(t, s.Sleep(ctx, time.Hour), context.Canceled)
		assert.Less(t, time.Since(start), time.Second)
	})
}

func TestSleepWall(t *testing.T) {
	bg := context.Background()
	cancelled, cancel := context.WithCancel(bg)
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		wantErr error
		minWait time.Duration
	}{
		{"zero", bg, 0, nil, 0},
		{"negative", bg, -time.Second, nil, 0},
		{"short", bg, 15 * time.Millisecond, nil, 15 * time.Millisecond},
		{"cancelled long", cancelled, time.Hour, context.Canceled, 0},
		{"cancelled zero", cancelled, 0, context.Canceled, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := clock.SleepWall(tc.ctx, tc.d)
			if tc.wantErr != nil {
				assert.ErrorIs(t, err, tc.wantErr)
			} else {
				assert.NoError(t, err)
			}
			assert.GreaterOrEqual(t, time.Since(start), tc.minWait)
			assert.Less(t, time.Since(start), time.Second)
		})
	}

	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
		defer cancel()
		start := time.Now()
		assert.ErrorIs(t, clock.SleepWall(ctx, time.Hour), context.DeadlineExceeded)
		assert.Less(t, time.Since(start), time.Second)
	})
}
