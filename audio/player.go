package audio

import (
	"context"
	"math"
	"slices"
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
// makes barge-in go silent within one device period. Pause holds the queue
// where it is (Resume plays on from there) and Duck lowers the level: what
// the assistant does while it decides whether the user is interrupting.
// SetVolume is the user's level, kept apart from that gain so that barge-in
// (and the Flush that ends it) never undoes it.
type Player struct {
	format Format
	ring   *Ring
	sleep  Sleeper
	ramp   int // sample frames a gain change takes (no click)

	// gain is the level asked for, as float32 bits: 1 plays normally, 0
	// pauses. volume (float32 bits, 0..1) scales it without pausing: muted
	// playback still consumes the queue, so a muted reply ends on time.
	// level is gain*volume as the callback has reached it; only Fill
	// touches it.
	gain   atomic.Uint32
	volume atomic.Uint32
	level  float32

	// mu orders producer-side operations (Write against Flush); the
	// callback never takes it.
	mu      sync.Mutex
	flushTo atomic.Uint64

	// active is set while a reply is being queued: running dry then is an
	// underrun, not the end of speech. It changes under mu, so a Write for
	// a cancelled reply cannot re-mark the player after Flush.
	active    atomic.Bool
	underruns atomic.Uint64
	// The gap playing now (Fill's alone: dry, gap), and the first maxGaps
	// that ended, each written once before gapsN counts it.
	dry   bool
	gap   Gap
	gaps  [maxGaps]Gap
	gapsN atomic.Uint64

	// soundC is the queue position just past the newest sample played and
	// soundD the device position (sample frames, silence included) it
	// ended at, published with a sequence lock so readers get a consistent
	// pair without the callback blocking.
	seq       atomic.Uint64
	soundC    atomic.Uint64
	soundD    atomic.Int64
	devicePos atomic.Int64 // sample frames output so far, silence included
}

// NewPlayer returns a queue for the given playback format holding up to
// capacity of audio; Write waits on sleeper for room beyond that.
func NewPlayer(f Format, capacity time.Duration, sleeper Sleeper) *Player {
	p := &Player{
		format: f,
		ring:   NewRing(int(f.Samples(capacity)) * f.Channels),
		sleep:  sleeper,
		ramp:   max(1, int(f.Samples(rampTime))),
		level:  1,
	}
	p.gain.Store(math.Float32bits(1))
	p.volume.Store(math.Float32bits(1))
	return p
}

// rampTime is how long a change of level takes: a few milliseconds fade
// instead of a click, well inside one device period.
const rampTime = 2500 * time.Microsecond

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

// Flush drops everything queued and ends a pause or ducking; the next
// Fill plays silence. It returns the queue position the listener had heard
// up to.
func (p *Player) Flush() (heard uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active.Store(false)
	p.flushTo.Store(p.ring.Written())
	p.gain.Store(math.Float32bits(1))
	return p.ring.Consumed()
}

// Pause holds playback: after a fade of a few milliseconds the queue stops
// being consumed, and what is left waits for Resume (or Flush).
func (p *Player) Pause() { p.gain.Store(math.Float32bits(0)) }

// Duck plays on at a lower level, gain in (0, 1).
func (p *Player) Duck(gain float32) { p.gain.Store(math.Float32bits(min(max(gain, 0.001), 1))) }

// Resume plays on at full level from where Pause held the queue.
func (p *Player) Resume() { p.gain.Store(math.Float32bits(1)) }

// SetVolume sets the master volume, clamped to 0..1 (NaN is 0). The
// change ramps like a gain change, in the next period.
func (p *Player) SetVolume(v float32) {
	if !(v >= 0) {
		v = 0
	}
	p.volume.Store(math.Float32bits(min(v, 1)))
}

// Volume is the master volume, 0..1.
func (p *Player) Volume() float32 { return math.Float32frombits(p.volume.Load()) }

// Fill writes the next period of playback into out (interleaved, in the
// player's format), padding with silence. Called from the device callback.
func (p *Player) Fill(out []float32) {
	p.ring.SkipTo(p.flushTo.Load())
	c0 := p.ring.Consumed()
	d0 := p.devicePos.Load()
	gain := math.Float32frombits(p.gain.Load())
	want := len(out)
	if gain == 0 {
		// Pausing: only the fade-out is played; the rest stays queued.
		want = min(want, (p.ramp-1)*p.format.Channels)
		if p.level == 0 {
			want = 0
		}
	}
	got := p.ring.Read(out[:want])
	clear(out[got:])
	p.applyGain(out[:got], gain*p.Volume())
	short := got < len(out) && gain != 0 && p.active.Load()
	if p.dry && (got > 0 || !short) {
		p.endGap()
	}
	if short {
		p.underruns.Add(1)
		if !p.dry {
			p.dry, p.gap = true, Gap{At: c0 + uint64(got)}
		}
		p.gap.Frames += int64((len(out) - got) / p.format.Channels)
	}
	p.devicePos.Store(d0 + int64(len(out)/p.format.Channels))
	if got > 0 {
		p.seq.Add(1) // odd: writing
		p.soundC.Store(c0 + uint64(got))
		p.soundD.Store(d0 + int64(got/p.format.Channels))
		p.seq.Add(1)
	}
}

// applyGain ramps the level from where the last period left it to gain
// (the barge-in gain times the volume) over the first few milliseconds of
// samples, then holds it.
func (p *Player) applyGain(samples []float32, gain float32) {
	from := p.level
	p.level = gain
	if from == 1 && gain == 1 {
		return
	}
	ch := p.format.Channels
	for i := 0; i < len(samples)/ch; i++ {
		g := gain
		if i < p.ramp {
			g = from + (gain-from)*float32(i+1)/float32(p.ramp)
		}
		for c := range ch {
			samples[i*ch+c] *= g
		}
	}
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

// Gap is a stretch of playback that ran dry while a reply was being
// queued: the audio ran out at queue position At, and Frames sample
// frames of silence played before more came (or the reply ended).
type Gap struct {
	At     uint64
	Frames int64
}

// maxGaps is how many gaps the player keeps: the first ones, which say
// where a reply's audio runs dry; Underruns counts them all.
const maxGaps = 64

func (p *Player) endGap() {
	if n := p.gapsN.Load(); n < maxGaps {
		p.gaps[n] = p.gap
		p.gapsN.Store(n + 1)
	}
	p.dry = false
}

// Gaps are the gaps that ended so far (the first maxGaps), in order.
func (p *Player) Gaps() []Gap {
	return slices.Clone(p.gaps[:p.gapsN.Load()])
}

// DeviceTime is the audio time at which the sample at queue position q
// was (or started being) played, and false if it has not been played yet.
// Exact for any q in the last period that played something; for earlier
// positions it assumes playback was continuous from q to that period.
func (p *Player) DeviceTime(q uint64) (time.Duration, bool) {
	for {
		s := p.seq.Load()
		if s&1 == 1 {
			continue
		}
		soundC, soundD := p.soundC.Load(), p.soundD.Load()
		if p.seq.Load() != s {
			continue
		}
		if q >= soundC {
			return 0, false
		}
		ch := uint64(p.format.Channels)
		return p.format.Duration(soundD - int64((soundC-q+ch-1)/ch)), true
	}
}
