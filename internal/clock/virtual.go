package clock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Virtual is a manually advanced clock for replay. Time stands still until
// the driver calls Advance, and WaitIdle lets the driver wait until every
// piece of held work has finished or is sleeping on this clock, so the
// pipeline's reactions to each frame complete at the same audio time on
// every run, whatever the machine's speed.
type Virtual struct {
	mu       sync.Mutex
	now      time.Duration
	held     int
	sleepers []*sleeper
	changed  chan struct{} // made by a waiter, closed on the next state change
	poll     *time.Timer   // WaitIdle's; it has one caller, the device
}

type sleeper struct {
	ctx   context.Context
	until time.Duration
	wake  chan struct{}
}

// NewVirtual returns a virtual clock at time zero.
func NewVirtual() *Virtual { return &Virtual{} }

func (v *Virtual) Now() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

func (v *Virtual) Hold() {
	v.mu.Lock()
	v.held++
	v.mu.Unlock()
}

func (v *Virtual) Release() {
	v.mu.Lock()
	if v.held == 0 {
		v.mu.Unlock()
		panic("clock: Release without Hold")
	}
	v.held--
	v.notifyLocked()
	v.mu.Unlock()
}

// Sleep gives back the caller's hold while it waits, and takes it back on
// waking, so a stage sleeping on the clock does not stop time.
func (v *Virtual) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	v.mu.Lock()
	s := &sleeper{ctx: ctx, until: v.now + d, wake: make(chan struct{})}
	v.sleepers = append(v.sleepers, s)
	v.held--
	v.notifyLocked()
	v.mu.Unlock()

	// A cancelled sleeper is about to run again; tell WaitIdle at once
	// rather than letting it find out on its next poll.
	stop := context.AfterFunc(ctx, func() {
		v.mu.Lock()
		v.notifyLocked()
		v.mu.Unlock()
	})
	defer stop()

	select {
	case <-s.wake: // Advance removed us and took the hold back for us.
		return nil
	case <-ctx.Done():
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, o := range v.sleepers {
		if o == s {
			v.sleepers = append(v.sleepers[:i], v.sleepers[i+1:]...)
			v.held++
			v.notifyLocked()
			return ctx.Err()
		}
	}
	return nil // woken by Advance in the same instant; the hold is ours.
}

// Advance moves time forward by d and wakes the sleepers that are due, in
// deadline order, taking a hold on behalf of each.
func (v *Virtual) Advance(d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.now += d
	kept := v.sleepers[:0]
	for _, s := range v.sleepers {
		if s.until <= v.now {
			v.held++
			close(s.wake)
			continue
		}
		kept = append(kept, s)
	}
	clear(v.sleepers[len(kept):])
	v.sleepers = kept
	v.notifyLocked()
}

// NextWake is the earliest deadline among sleepers, if any.
func (v *Virtual) NextWake() (time.Duration, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var next time.Duration
	for i, s := range v.sleepers {
		if i == 0 || s.until < next {
			next = s.until
		}
	}
	return next, len(v.sleepers) > 0
}

// ErrStalled is returned by WaitIdle when held work does not finish in time.
var ErrStalled = fmt.Errorf("clock: replay stalled")

// WaitIdle (for one goroutine, the replay driver) blocks until no work is held (sleepers do not count unless their
// context is done), ctx is done, or the held work has not finished within
// stall of wall time, which means a stage is blocked on something other
// than the clock and the replay would otherwise hang.
func (v *Virtual) WaitIdle(ctx context.Context, stall time.Duration) error {
	busy, changed := v.busy()
	if busy == 0 {
		return nil
	}
	start := time.Now()
	// Cancelled sleepers do not notify through Release until they run, and
	// AfterFunc runs asynchronously, so a slow poll backs up the signal.
	// The timer is reused: this runs twice per replayed period.
	if v.poll == nil {
		v.poll = time.NewTimer(time.Millisecond)
	} else {
		v.poll.Reset(time.Millisecond)
	}
	defer v.poll.Stop()
	for busy > 0 {
		select {
		case <-changed:
		case <-v.poll.C:
			if time.Since(start) > stall {
				return fmt.Errorf("%w: %d unit(s) of work still running after %v", ErrStalled, busy, stall)
			}
			v.poll.Reset(time.Millisecond)
		case <-ctx.Done():
			return ctx.Err()
		}
		busy, changed = v.busy()
	}
	return nil
}

// busy counts held work plus sleepers whose context is done (they are
// about to run), and returns the channel closed on the next change.
func (v *Virtual) busy() (int, <-chan struct{}) {
	v.mu.Lock()
	defer v.mu.Unlock()
	busy := v.held
	for _, s := range v.sleepers {
		if s.ctx.Err() != nil {
			busy++
		}
	}
	if busy > 0 && v.changed == nil {
		v.changed = make(chan struct{})
	}
	return busy, v.changed
}

func (v *Virtual) notifyLocked() {
	if v.changed != nil {
		close(v.changed)
		v.changed = nil
	}
}
