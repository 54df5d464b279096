// Package clock is the time source of a session. Latency is measured in
// audio time, so in live mode "now" is the capture stream position of the
// device, and in replay it is a virtual clock that only moves when the
// pipeline has finished reacting to the audio it was given, which makes a
// replay deterministic however fast it runs.
package clock

import (
	"context"
	"sync/atomic"
	"time"
)

// Clock is what stages use for time: reading it, waiting on it, and (in
// replay) telling it that work is in flight so it does not move past it.
type Clock interface {
	// Now is the audio time since the session started.
	Now() time.Duration
	// Sleep waits for d of clock time or until ctx is done.
	Sleep(ctx context.Context, d time.Duration) error
	// Hold marks one unit of work in flight; Release ends it. A virtual
	// clock does not advance while work is held. Live clocks ignore both.
	Hold()
	Release()
}

// Stream is the live clock: now is the number of samples the capture
// device has delivered, so events line up with the frame positions the
// VAD reports. Waiting uses wall-clock timers.
type Stream struct {
	rate    int64
	samples atomic.Int64
}

// NewStream returns a live clock for a device running at rate Hz.
func NewStream(rate int) *Stream { return &Stream{rate: int64(rate)} }

// Advance is called by the device for every block of n captured samples.
func (s *Stream) Advance(n int) { s.samples.Add(int64(n)) }

func (s *Stream) Now() time.Duration {
	return time.Duration(s.samples.Load() * int64(time.Second) / s.rate)
}

func (s *Stream) Sleep(ctx context.Context, d time.Duration) error { return SleepWall(ctx, d) }
func (*Stream) Hold()                                              {}
func (*Stream) Release()                                           {}

// Wall is the wall clock since it was made, for what runs without a
// device (the text chat): its time moves whether or not audio does.
type Wall struct{ start time.Time }

// NewWall returns a clock at zero now.
func NewWall() *Wall { return &Wall{start: time.Now()} }

func (w *Wall) Now() time.Duration                             { return time.Since(w.start) }
func (*Wall) Sleep(ctx context.Context, d time.Duration) error { return SleepWall(ctx, d) }
func (*Wall) Hold()                                            {}
func (*Wall) Release()                                         {}

// SleepWall waits d of wall time or until ctx is done.
func SleepWall(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
