package audio

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Sleeper is the part of a clock the player waits on when its buffer is
// full (a virtual clock in replay, wall time live).
type Sleeper interface {
	Sleep(ctx context.Context, d time.Duration) error
}

// Player is the playback queue between the pipeline and a device callback.
//
// The callback side (Fill) never allocates, locks or blocks. Positions are
// absolute sample counts in the queue (Written/Consumed), so the pipeline can
// tell which reply and which chunk the listener has heard, and Flush drops
// everything queued at once instead of letting it drain, which is what
// makes barge-in go silent within one device period.
type Player struct {
	format Format
	ring   *Ring
	sleep  Sleeper

	// mu orders producer-side operations (Write against Flush); the
	// callback never takes it.
	mu      sync.Mutex
	flushTo atomic.Uint64

	// active is set while a reply is being queued: running dry then is an
	// underrun, not the end of speech. It changes under mu, so a Write for
	// a cancelled reply cannot re-mark the player after Flush.
	active    atomic.Bool
	underruns atomic.Uint64

	// last is the most recent Fill period, published with a sequence lock
	// so readers get a consistent snapshot without the callback blocking.
	seq            atomic.Uint64
	lastC0, lastC1 atomic.Uint64 // queue positions consumed in the period
	lastD0         atomic.Int64  // device position (sample frames) where it began
	devicePos      atomic.Int64  // sample frames output so far, silence included
}

// NewPlayer returns a queue for the given playback format holding up to
// capacity of audio; Write waits on sleeper for room beyond that.
func NewPlayer(f Format, capacity time.Duration, sleeper Sleeper) *Player {
	return &Player{
		format: f,
		ring:   NewRing(int(f.Samples(capacity)) * f.Channels),
		sleep:  sleeper,
	}
}

// Format is the playback format Write expects and Fill produces.
func (p *Player) Format() Format { return p.format }

// Write queues interleaved samples and returns their queue position range
// [start, end). It stops early, returning ctx's error, when ctx is done;
// callers cancel ctx before calling Flush, so nothing written for a
// cancelled reply can slip in after the flush.
func (p *Player) Write(ctx context.Context, samples []float32) (start, end uint64, err error) {
	p.mu.Lock()
	start = p.ring.Written()
	p.mu.Unlock()
	for len(samples) > 0 {
		p.mu.Lock()
		if err := ctx.Err(); err != nil {
			p.mu.Unlock()
			return start, p.ring.Written(), err
		}
		n := p.ring.Write(samples)
		p.active.Store(true)
		p.mu.Unlock()
		samples = samples[n:]
		if len(samples) == 0 {
			break
		}
		// Full: wait about one device period for the callback to drain.
		if err := p.sleep.Sleep(ctx, 5*time.Millisecond); err != nil {
			return start, p.ring.Written(), err
		}
	}
	return start, p.ring.Written(), nil
}

// EndOfReply tells the player the reply being written is complete, so
// running dry from now on is the end of speech, not an underrun. (Write
// marks a reply active; Flush ends it too.)
func (p *Player) EndOfReply() {
	p.mu.Lock()
	p.active.Store(false)
	p.mu.Unlock()
}

// Flush drops everything queued; the next Fill plays silence. It returns
// the queue position the listener had heard up to.
func (p *Player) Flush() (heard uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active.Store(false)
	p.flushTo.Store(p.ring.Written())
	return p.ring.Consumed()
}

// Fill writes the next period of playback into out (interleaved, in the
// player's format), padding with silence. Called from the device callback.
func (p *Player) Fill(out []float32) {
	p.ring.SkipTo(p.flushTo.Load())
	c0 := p.ring.Consumed()
	d0 := p.devicePos.Load()
	got := p.ring.Read(out)
	clear(out[got:])
	if got < len(out) && p.active.Load() {
		p.underruns.Add(1)
	}
	d1 := d0 + int64(len(out)/p.format.Channels)
	p.devicePos.Store(d1)

	p.seq.Add(1) // odd: writing
	p.lastC0.Store(c0)
	p.lastC1.Store(c0 + uint64(got))
	p.lastD0.Store(d0)
	p.seq.Add(1)
}

// Written is the queue position just past the last sample queued.
func (p *Player) Written() uint64 { return p.ring.Written() }

// Consumed is the queue position up to which audio has been played (or
// flushed).
func (p *Player) Consumed() uint64 { return p.ring.Consumed() }

// Queued is the amount of audio waiting to be played.
func (p *Player) Queued() time.Duration {
	return p.format.Duration(int64(p.ring.Len() / p.format.Channels))
}

// Underruns counts periods that ran dry while a reply was being queued.
func (p *Player) Underruns() uint64 { return p.underruns.Load() }

// DeviceTime is the audio time at which the sample at queue position q
// was (or started being) played, and false if it has not been played yet.
// Exact for any q in the last Fill period; for earlier positions it assumes
// playback was continuous from q to the start of that period.
func (p *Player) DeviceTime(q uint64) (time.Duration, bool) {
	for {
		s := p.seq.Load()
		if s&1 == 1 {
			continue
		}
		c0, c1 := p.lastC0.Load(), p.lastC1.Load()
		d0 := p.lastD0.Load()
		if p.seq.Load() != s {
			continue
		}
		ch := uint64(p.format.Channels)
		switch {
		case q >= c1:
			return 0, false
		case q >= c0:
			return p.format.Duration(d0 + int64((q-c0)/ch)), true
		default:
			return p.format.Duration(d0 - int64((c0-q)/ch)), true
		}
	}
}
