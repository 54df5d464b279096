package device

// The real-time side: the device callback, which fills the capture ring,
// the far ring and the speaker, and the two ways a lost device is
// noticed, the stop callback and the watchdog.

import (
	"fmt"
	"time"
	"unsafe"
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
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// capture writes a period into the ring and returns how many of its
// samples (a prefix) went in; the rest were dropped.
func (d *Duplex) capture(in []float32) int {
	if d.pendingDrop > 0 {
		// Publish the earlier drop before writing anything after it, so
		// the reader can put the silence exactly where the audio was lost.
		// Until both the ring and the gap list have room, keep dropping.
		if d.ring.Free() == 0 || d.gapTail.Load()-d.gapHead.Load() >= maxGaps {
			d.pendingDrop += uint64(len(in))
			d.overruns.Add(uint64(len(in)))
			return 0
		}
		t := d.gapTail.Load()
		d.gaps[t%maxGaps] = gap{at: d.ring.Written(), n: d.pendingDrop}
		d.gapTail.Store(t + 1)
		d.pendingDrop = 0
	}
	n := d.ring.Write(in)
	if n < len(in) {
		d.pendingDrop += uint64(len(in) - n)
		d.overruns.Add(uint64(len(in) - n))
	}
	return n
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
