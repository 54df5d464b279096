package device

// The real-time side: the device callback, which fills the capture ring,
// the far ring and the speaker and notices capture lost before it, and
// the two ways a lost device is noticed, the stop callback and the
// watchdog.

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/voiceassistant/voice/audio"
)

// process is the device callback body. It runs on miniaudio's real-time
// thread: no allocation, no locks, no blocking.
func (d *Duplex) process(out, in []byte, _ uint32) {
	d.callbacks.Add(1)
	captured := 0
	if len(in) >= 4 {
		captured = d.capture(unsafe.Slice((*float32)(unsafe.Pointer(&in[0])), len(in)/4))
	}
	var played []float32
	if len(out) >= 4 {
		played = unsafe.Slice((*float32)(unsafe.Pointer(&out[0])), len(out)/4)
		d.player.Fill(played)
	}
	if d.farRing != nil {
		d.writeFar(played, captured)
	}
	if int64(d.ring.Len()) < d.wakeBatch.Load() {
		return
	}
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// capture writes a period into the ring and returns how many of its
// samples (a prefix) went in; the rest were dropped. Audio the server lost
// before this period is owed as silence ahead of it.
func (d *Duplex) capture(in []float32) int {
	if lost := d.detect.observe(d.now(), len(in)); lost > 0 {
		d.captureGaps.Add(1)
		d.captureLost.Add(lost)
		// Silence in place of what was lost keeps every later position
		// (the session clock, event times, where the player's audio is
		// heard) at the device time it was captured, and keeps the echo
		// canceller's near and far streams aligned: the far side gets
		// the same silence, which is also what the callback rendered
		// while it did not run. The cap is for a stall of the whole
		// process (SIGSTOP, a paused VM), which the watchdog, stopped
		// too, does not end: silence for all of it would flood the
		// pipeline with audio to work through before it hears the user
		// again. The stream stays late by the rest.
		d.pending.n += min(lost, maxGapFillSeconds*uint64(d.cfg.Rate))
		d.pending.lost += lost
	}
	if d.pending.n > 0 {
		// Publish the owed silence before writing anything after it, so
		// the reader can put it exactly where the audio was lost.
		// Until both the ring and the gap list have room, keep dropping.
		if d.ring.Free() == 0 || d.gapTail.Load()-d.gapHead.Load() >= maxGaps {
			d.pending.n += uint64(len(in))
			d.overruns.Add(uint64(len(in)))
			return 0
		}
		t := d.gapTail.Load()
		d.pending.at = d.ring.Written()
		d.gaps[t%maxGaps] = d.pending
		d.gapTail.Store(t + 1)
		d.pending = gap{}
	}
	n := d.ring.Write(in)
	if n < len(in) {
		d.pending.n += uint64(len(in) - n)
		d.overruns.Add(uint64(len(in) - n))
	}
	return n
}

// gapDetector notices capture lost before it reached the callback, which
// no counter of ours or miniaudio's sees: a starved PulseAudio server
// drops what overflows its record buffer, and miniaudio's duplex ring
// drops what the playback side does not collect in time. Either way,
// fewer samples arrive than the time that passed. The detector keeps the
// lag, how far the audio received trails the time elapsed; over the
// threshold, what the lag holds was lost. It runs in the callback: no
// allocation, no locks.
type gapDetector struct {
	format audio.Format
	// threshold is what the lag may reach without counting: callbacks
	// arrive in bursts (late, then back to back) by a few periods.
	threshold time.Duration
	started   bool
	last      time.Time // the previous callback
	lag       time.Duration
}

const (
	// gapPeriods and minGapThreshold make the threshold: three periods
	// of burst, but never less than 50 ms, since short periods come in
	// bursts of the server's own.
	gapPeriods      = 3
	minGapThreshold = 50 * time.Millisecond
	// maxClockSkewPPM is the drift allowance. The sound card's clock and
	// the system's differ by some tens of ppm, so a card running slow
	// trails the system clock for ever: 180 ms an hour at 50 ppm, a
	// false gap every quarter hour. The lag is therefore let down by
	// this share of the audio received (a card running fast needs
	// nothing: the lag never goes below zero). 1000 ppm is twenty times
	// what crystals are specified to; a real gap, which comes all at
	// once, is hardly touched by it, and only a loss spread thinner than
	// 1 ms a second would go unseen.
	maxClockSkewPPM = 1000
)

func newGapDetector(rate int, period time.Duration) gapDetector {
	// miniaudio calls back with exactly a period (its fixed-size
	// callback), so bursts are counted in the configured period.
	return gapDetector{format: audio.Format{Rate: rate}, threshold: max(gapPeriods*period, minGapThreshold)}
}

// observe takes a callback at now delivering n samples and returns how
// many samples were lost before them. The first callback sets the
// reference: its samples were captured before it.
func (g *gapDetector) observe(now time.Time, n int) uint64 {
	if !g.started {
		g.started, g.last = true, now
		return 0
	}
	got := g.format.Duration(int64(n))
	g.lag = max(0, g.lag+now.Sub(g.last)-got-got*maxClockSkewPPM/1e6)
	g.last = now
	if g.lag <= g.threshold {
		return 0
	}
	// The lost samples are accounted for from here on (as silence), so
	// the lag starts again from this callback and the loss is counted
	// once.
	lost := g.format.Samples(g.lag)
	g.lag = 0
	return uint64(lost)
}

// writeFar puts the first n frames of what was just rendered into the far
// ring, downmixed to mono: exactly as many samples as capture kept, so
// both rings hold the same stretch of device time at the same positions.
// What capture dropped is dropped here too and becomes silence on both
// sides (the gap list is shared). A duplex callback renders as many
// frames as it captures; should it render fewer, the rest is silence.
//
// The far write cannot come up short: the rings have equal capacities,
// equal write positions after every callback, and the reader consumes
// the far ring first, so it never has less room than the capture ring.
func (d *Duplex) writeFar(played []float32, n int) {
	ch := d.cfg.PlaybackChannels
	frames := len(played) / ch
	scale := 1 / float32(ch)
	for off := 0; off < n; {
		s := d.farScratch[:min(n-off, len(d.farScratch))]
		for i := range s {
			f := off + i
			switch {
			case f >= frames:
				s[i] = 0
			case ch == 1:
				s[i] = played[f]
			default:
				var sum float32
				for _, v := range played[f*ch : f*ch+ch] {
					sum += v
				}
				s[i] = sum * scale
			}
		}
		d.farRing.Write(s)
		off += len(s)
	}
}

// onStop runs on miniaudio's thread whenever the device stops. Unless we
// are closing, that means the device went away: the PulseAudio backend
// reports a suspended device this way, other backends a failed stream.
func (d *Duplex) onStop() {
	if d.closing.Load() {
		return
	}
	d.fail(fmt.Errorf("audio device %q stopped unexpectedly (disconnected?): check the device and open it again: %w", d.name, ErrDeviceLost))
}

// watchdog catches devices that die silently. When PulseAudio drops a
// stream (its sink or source was unloaded or unplugged), miniaudio gets
// no stop notification: its main loop just waits for a server that will
// never write again. A device that goes quiet is therefore declared dead:
// after stallTimeout once audio flowed, after startTimeout if it never
// started.
func (d *Duplex) watchdog() {
	defer d.wg.Done()
	t := time.NewTicker(d.stallTimeout / 4)
	defer t.Stop()
	last, since, flowing := d.callbacks.Load(), time.Now(), false
	for {
		select {
		case <-d.quit:
			return
		case <-d.failed:
			return
		case now := <-t.C:
			if c := d.callbacks.Load(); c != last {
				last, since, flowing = c, now, true
				continue
			}
			quiet := now.Sub(since)
			switch {
			case flowing && quiet > d.stallTimeout:
				d.fail(fmt.Errorf("audio device %q stopped delivering audio (no callback for %v; disconnected?): check the device and open it again: %w",
					d.name, quiet.Round(time.Millisecond), ErrDeviceLost))
				return
			case !flowing && quiet > d.startTimeout:
				d.fail(fmt.Errorf("audio device %q started but delivered no audio within %v: check that it is connected and not suspended, then open it again: %w",
					d.name, d.startTimeout, ErrDeviceLost))
				return
			}
		}
	}
}
