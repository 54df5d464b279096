package device

// The capture reader: it drains the rings, fills gaps (overruns and
// capture lost before the callback) with silence, resamples to 16 kHz,
// runs the front end, and sends the frames.

import (
	"fmt"

	"github.com/voiceassistant/voice/audio"
)

// reader turns the ring into 16 kHz frames. It may block on a slow
// consumer; the callback never waits for it.
func (d *Duplex) reader() {
	defer d.wg.Done()
	defer close(d.frames)
	for {
		select {
		case <-d.quit:
			return
		case <-d.failed:
			// Deliver what was captured before the device went away.
			d.drain()
			return
		case <-d.wake:
			if !d.drain() {
				return
			}
		}
	}
}

// drain processes everything captured so far; false means Close was
// called while it waited on the consumer.
func (d *Duplex) drain() bool {
	for {
		// Load the fill level before the gap list: a gap below the write
		// position seen here was published before that write, so it is
		// visible below.
		avail := uint64(d.ring.Len())
		if d.farRing != nil {
			// The callback writes the far ring just after the capture
			// ring; take only what both hold.
			avail = min(avail, uint64(d.farRing.Len()))
		}
		rd := d.ring.Consumed()
		if h := d.gapHead.Load(); h < d.gapTail.Load() {
			g := d.gaps[h%maxGaps]
			if g.at == rd {
				d.gapHead.Store(h + 1)
				d.reportGap(g.lost)
				if !d.silence(g.n) {
					return false
				}
				continue
			}
			avail = min(avail, g.at-rd)
		}
		if avail == 0 {
			return true
		}
		k := min(avail, uint64(len(d.readBuf)))
		var far []float32
		if d.farRing != nil {
			// Far first: the far ring must never have less free space
			// than the capture ring (see writeFar).
			far = d.farReadBuf[:d.farRing.Read(d.farReadBuf[:k])]
		}
		n := d.ring.Read(d.readBuf[:k])
		if far != nil && len(far) != n {
			d.fail(fmt.Errorf("audio device %q: internal error: far-end stream out of step with capture (%d vs %d samples)", d.name, len(far), n))
			return false
		}
		if !d.resample(d.readBuf[:n], far) {
			return false
		}
	}
}

// reportGap tells OnCaptureGap of lost device-rate samples, if any, at
// the position the next sample goes out at (give or take the resampler's
// delay), which is where their silence starts.
func (d *Duplex) reportGap(lost uint64) {
	if lost == 0 || d.cfg.OnCaptureGap == nil {
		return
	}
	at := audio.Mono16k.Duration(d.pos + int64(len(d.acc)))
	d.cfg.OnCaptureGap(at, audio.Format{Rate: d.cfg.Rate}.Duration(int64(lost)))
}

// silence stands in for n dropped or lost device-rate samples.
func (d *Duplex) silence(n uint64) bool {
	for n > 0 {
		k := min(n, uint64(len(d.zeros)))
		var far []float32
		if d.farRing != nil {
			far = d.zeros[:k]
		}
		if !d.resample(d.zeros[:k], far) {
			return false
		}
		n -= k
	}
	return true
}

// resample converts device-rate capture to 16 kHz frames and sends them.
// far, when there is a front-end, is the rendered signal for the same
// samples (equal length); it goes through its own resampler, which
// yields as many samples as the capture one, into its own frames, so
// far frame k and capture frame k cover the same stretch.
func (d *Duplex) resample(in, far []float32) bool {
	if d.rs != nil {
		d.resBuf = d.rs.Process(in, d.resBuf[:0])
		in = d.resBuf
	}
	if d.farRs != nil && far != nil {
		d.farResBuf = d.farRs.Process(far, d.farResBuf[:0])
		far = d.farResBuf
	}
	if d.farRing != nil && len(far) != len(in) {
		d.fail(fmt.Errorf("audio device %q: internal error: far-end resampler out of step with capture (%d vs %d samples)", d.name, len(far), len(in)))
		return false
	}
	for len(in) > 0 {
		at := len(d.acc)
		k := copy(d.acc[at:FrameSize], in)
		d.acc = d.acc[:at+k]
		in = in[k:]
		if d.farRing != nil {
			copy(d.farAcc[at:at+k], far)
			far = far[k:]
		}
		if len(d.acc) < FrameSize {
			break
		}
		samples := d.acc
		// Consumers keep frames, so each gets its own buffer.
		d.acc = make([]float32, 0, FrameSize)
		if fe := d.cfg.FrontEnd; fe != nil {
			farFrame := d.farAcc
			d.farAcc = make([]float32, FrameSize)
			if err := fe.Far(farFrame); err != nil {
				d.fail(fmt.Errorf("audio device %q: front-end: %w", d.name, err))
				return false
			}
			out, err := fe.Near(samples)
			if err != nil {
				d.fail(fmt.Errorf("audio device %q: front-end: %w", d.name, err))
				return false
			}
			if len(out) != FrameSize {
				d.fail(fmt.Errorf("audio device %q: front-end returned %d samples for a %d-sample frame", d.name, len(out), FrameSize))
				return false
			}
			samples = out
		}
		f := audio.Frame{Format: audio.Mono16k, Pos: d.pos, Samples: samples}
		d.pos += FrameSize
		// Advanced before the send so a consumer never holds a frame
		// that ends after the clock's now.
		d.clock.Advance(FrameSize)
		select {
		case d.frames <- f:
		case <-d.quit:
			return false
		}
	}
	return true
}
