// Package compute charges the stages' compute to the session clock. A
// replay normally gives the stages free compute: the virtual clock stands
// still while they work, so its latencies are the policy's alone and the
// same on every machine. With a scale > 0 each stage's measured compute,
// times the scale (1: this machine; 20: a device twenty times slower),
// passes on the clock as well, so a replay's figures are end to end on the
// machine at hand.
//
// One Charger does it, wrapped around the stages once where they are
// wired (pipeline.New), in two ways by where the stage runs:
//
//   - the listening path (VAD, ASR, the turn model) runs on one goroutine
//     that falls behind the audio by what it spends (Listen): its
//     decisions, and the response a commit starts (or lets play, if
//     speculated), come that much later (Charger.Now, Charger.CatchUp); a
//     barge-in still acts at once, so its figures leave the listening
//     path's compute out;
//   - a stage that runs beside it (generation, synthesis, the early final's
//     copy of the recognizer) hands each result over only once its compute
//     has passed on the clock (Handed, Once), while the rest of the
//     pipeline runs meanwhile, so a user can interrupt a reply that is
//     still being generated, as on a device.
//
// Each path's figures go to its Account; a turn reports them
// (event.TurnMetrics.Compute).
package compute

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline/event"
)

// Account takes the compute a path spent, for its turn's figures: each
// call's of the listening path, and each result's of a stage beside it,
// the compute since the stage started or handed over the one before.
type Account interface {
	Spent(s event.Stage, d time.Duration)
}

// Charger puts compute on the clock. Its listening side (Listen, Now,
// CatchUp) belongs to the listening path's goroutine; Handed and Once may
// run on any.
type Charger struct {
	clk clock.Clock
	// measure is what compute is measured on: the wall clock, or in a
	// test, one that only the stages' calls move.
	measure   func() time.Time
	scale     float64
	listening Account
	// busyUntil is when the listening path is done with the compute it
	// has been charged.
	busyUntil time.Duration
}

// New is the charger for a compute scale, charging the listening path's
// compute, measured on measure (nil: the wall clock), to listening; nil
// when the scale is 0 and compute is free.
func New(clk clock.Clock, measure func() time.Time, scale float64, listening Account) (*Charger, error) {
	switch {
	case scale < 0 || scale > 1e4:
		return nil, fmt.Errorf("compute scale %v is not between 0 (compute is free) and 10000", scale)
	case scale == 0:
		return nil, nil
	}
	if measure == nil {
		measure = time.Now
	}
	return &Charger{clk: clk, measure: measure, scale: scale, listening: listening}, nil
}

func (c *Charger) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.scale)
}

// grain is the least compute waited for on the clock: half a replay
// device period. Smaller amounts add up until they reach it, so a charge
// is off by at most half a period instead of up to a whole one.
const grain = 5 * time.Millisecond

// Listen makes a call to a listening-path stage and charges its compute:
// to the listening account, and to the clock by moving the listening
// path's next decisions later.
func Listen[T any](c *Charger, s event.Stage, call func() (T, error)) (T, error) {
	start := c.measure()
	v, err := call()
	d := c.measure().Sub(start)
	c.listening.Spent(s, d)
	c.busyUntil = c.Now(c.clk) + c.scaled(d)
	return v, err
}

// Now is the listening path's time: the clock's, or later while it is
// still busy with the compute it has been charged. A nil charger's is the
// clock's.
func (c *Charger) Now(clk clock.Clock) time.Duration {
	if c == nil {
		return clk.Now()
	}
	return max(clk.Now(), c.busyUntil)
}

// CatchUp waits on clk until until, a time the listening path has been
// charged up to (a response starts, or a speculated one plays, only once
// its commit is due), unless that is less than a grain away.
func CatchUp(ctx context.Context, clk clock.Clock, until time.Duration) error {
	if lag := until - clk.Now(); lag >= grain {
		return clk.Sleep(ctx, lag)
	}
	return ctx.Err()
}

type accountKey struct{}

// WithAccount is ctx for calls whose compute goes to a: a reply's, an
// early final's.
func WithAccount(ctx context.Context, a Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// meter measures what a stage computes between the results it hands
// over, charges it to the account of the call's context, and holds each
// result back until that compute has passed on the clock.
type meter struct {
	c     *Charger
	acct  Account
	stage event.Stage
	last  time.Time
	// owed is scaled compute not yet passed on the clock. A replay's clock
	// moves a device period (10 ms) at a time, so a wait wakes at the next
	// period, later than asked; what it overshot is credit against the
	// next, which keeps the time charged right on average.
	owed time.Duration
}

func (c *Charger) meter(ctx context.Context, s event.Stage) (*meter, bool) {
	acct, ok := ctx.Value(accountKey{}).(Account)
	return &meter{c: c, acct: acct, stage: s, last: c.measure()}, ok
}

// handOver records the compute since the stage started or last got
// control back, and returns once that much (scaled) has passed.
func (m *meter) handOver(ctx context.Context) error {
	d := m.c.measure().Sub(m.last)
	m.acct.Spent(m.stage, d)
	m.owed += m.c.scaled(d)
	if m.owed < grain {
		return nil
	}
	before := m.c.clk.Now()
	err := m.c.clk.Sleep(ctx, m.owed)
	m.owed -= m.c.clk.Now() - before
	return err
}

// Handed wraps emit, through which a stage hands over its results, so
// that each result goes on only once the compute before it has passed;
// the stage runs again, on the meter, once emit has returned.
func Handed[T any](c *Charger, ctx context.Context, s event.Stage, emit func(T) error) func(T) error {
	m, ok := c.meter(ctx, s)
	if !ok {
		return emit
	}
	return func(v T) error {
		defer func() { m.last = c.measure() }()
		if err := m.handOver(ctx); err != nil {
			return err
		}
		return emit(v)
	}
}

// Once makes a call that returns one result, which goes on once its
// compute has passed.
func Once[T any](c *Charger, ctx context.Context, s event.Stage, call func() (T, error)) (T, error) {
	m, ok := c.meter(ctx, s)
	v, err := call()
	if ok {
		// The result is the call's: a wait cut short by ctx only hands it
		// over sooner, to a caller that has stopped waiting for it.
		_ = m.handOver(ctx)
	}
	return v, err
}
