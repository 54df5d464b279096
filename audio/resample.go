package audio

// Resampling is implemented here in pure Go because no suitable maintained
// library is reachable through the module proxy: github.com/zaf/resample
// (a cgo binding to libsoxr) and github.com/tphakala/go-audio-resampler are
// not available, and the capture path must not depend on cgo anyway.
//
// The design is the textbook polyphase windowed-sinc interpolator: one
// Kaiser-windowed low-pass prototype, sampled at every fractional offset the
// rational ratio can produce, precomputed once so the per-sample work is a
// single dot product.

import (
	"fmt"
	"math"
	"slices"
)

const (
	// resampleCutoff places the -6 dB point at 90% of the lower Nyquist
	// frequency; the transition band is symmetric around it, so the
	// stopband starts exactly at the lower Nyquist and nothing that would
	// alias gets through, while speech (< 7 kHz at 16 kHz) stays flat.
	resampleCutoff = 0.9
	// resampleAttenuationDB is the design target. It leaves ~20 dB of
	// margin over the 60 dB the pipeline needs, absorbing the Kaiser
	// formula's approximation and float32 coefficient rounding.
	resampleAttenuationDB = 80
	// maxFilterCoeffs bounds the polyphase table (16 MiB of float32).
	// Common rate pairs need a few thousand to ~30k coefficients; only
	// pathological ratios such as 767999:768000 come near it.
	maxFilterCoeffs = 1 << 22
	// resampleBlockFrames is how many input frames are staged per step. It
	// bounds the internal buffer so Process never allocates, while keeping
	// the history shuffle (taps frames per block) a small overhead.
	resampleBlockFrames = 4096
)

// Resampler converts interleaved float32 audio between two sample rates,
// streaming: chunks may be any size (even split mid-frame) and the output
// is bit-identical to processing everything at once. The output is time
// aligned with the input (the filter delay is compensated), so output
// sample n corresponds to input time n*from/to.
// A Resampler is not safe for concurrent use.
type Resampler struct {
	from, to, channels int
	bypass             bool // from == to: filtering would only cost band

	l, m     int // reduced ratio: l output samples per m input samples
	step     int64
	stepFrac int // m = step*l + stepFrac
	half     int // taps reach half-1 frames back and half frames ahead
	taps     int // 2*half
	table    []float32

	// buf holds interleaved input frames starting at absolute frame index
	// start; it may end in an incomplete frame awaiting its other samples.
	buf   []float32
	start int64
	// The next output sits at input time base + phase/l.
	base     int64
	phase    int
	produced int64 // output frames emitted since the last Reset
	// audible is one past the last frame with a sample that is not zero:
	// an output whose taps all fall at or after it is silence, and costs
	// no filtering (a capture's far end is silent whenever nothing plays,
	// most of a day).
	audible int64
}

// NewResampler prepares a resampler from one rate to another for
// interleaved audio with the given channel count.
func NewResampler(from, to, channels int) (*Resampler, error) {
	if err := checkResample(from, to, channels); err != nil {
		return nil, err
	}
	r := &Resampler{from: from, to: to, channels: channels}
	if from == to {
		r.bypass = true
		return r, nil
	}
	g := gcd(from, to)
	r.l, r.m = to/g, from/g
	r.step, r.stepFrac = int64(r.m/r.l), r.m%r.l

	table, half, err := designPolyphase(from, to, r.l)
	if err != nil {
		return nil, err
	}
	r.table, r.half, r.taps = table, half, 2*half
	r.buf = make([]float32, 0, (r.taps+resampleBlockFrames+1)*channels)
	r.Reset()
	return r, nil
}

func checkResample(from, to, channels int) error {
	if from <= 0 || from > formatMaxRate {
		return fmt.Errorf("audio: resample %d->%d Hz: invalid input rate %d", from, to, from)
	}
	if to <= 0 || to > formatMaxRate {
		return fmt.Errorf("audio: resample %d->%d Hz: invalid output rate %d", from, to, to)
	}
	if channels < 1 || channels > formatMaxChannels {
		return fmt.Errorf("audio: resample %d->%d Hz: invalid channel count %d", from, to, channels)
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// designPolyphase returns l rows of 2*half taps. Row p is the prototype
// low-pass sampled at offsets p/l - j for j = -half+1..half (in input
// samples), i.e. the interpolation kernel for an output that falls p/l of
// the way between two input samples.
func designPolyphase(from, to, l int) ([]float32, int, error) {
	lowNyquist := float64(min(from, to)) / 2
	fc := resampleCutoff * lowNyquist / float64(from)           // cycles per input sample
	tw := 2 * (1 - resampleCutoff) * lowNyquist / float64(from) // transition width
	// Kaiser's estimates for length and shape at the target attenuation.
	a := float64(resampleAttenuationDB)
	beta := 0.1102 * (a - 8.7)
	n := (a-7.95)/(2.285*2*math.Pi*tw) + 1
	half := max(int(math.Ceil(n/2)), 2)
	taps := 2 * half
	if int64(l)*int64(taps) > maxFilterCoeffs {
		return nil, 0, fmt.Errorf("audio: resample %d->%d Hz: ratio needs a %d x %d filter table, over the %d limit; resample via an intermediate rate",
			from, to, l, taps, maxFilterCoeffs)
	}

	i0beta := besselI0(beta)
	table := make([]float32, l*taps)
	row := make([]float64, taps)
	for p := range l {
		frac := float64(p) / float64(l)
		sum := 0.0
		for k := range taps {
			tau := frac - float64(k-half+1)
			u := tau / float64(half)
			w := 0.0
			if u > -1 && u < 1 {
				w = besselI0(beta*math.Sqrt(1-u*u)) / i0beta
			}
			row[k] = 2 * fc * sinc(2*fc*tau) * w
			sum += row[k]
		}
		// Normalising every phase to unity DC gain removes the small
		// phase-dependent gain ripple truncation would otherwise leave,
		// which shows up as a tone at the ratio's period.
		for k := range taps {
			table[p*taps+k] = float32(row[k] / sum)
		}
	}
	return table, half, nil
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the zeroth-order modified Bessel function of the first kind,
// by its power series (converges quickly for the betas used here).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 500; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < 1e-16*sum {
			break
		}
	}
	return sum
}

// Reset discards all buffered input so the next Process starts a new
// stream, as if freshly constructed.
func (r *Resampler) Reset() {
	if r.bypass {
		return
	}
	// The first outputs reach half-1 frames before the stream starts;
	// those are silence.
	pre := (r.half - 1) * r.channels
	r.buf = r.buf[:pre]
	clear(r.buf)
	r.start = -int64(r.half - 1)
	r.base, r.phase, r.produced = 0, 0, 0
	r.audible = r.start
}

// Process consumes in and appends every output sample that can already be
// computed to out, returning the extended slice. Output lags input by the
// filter's look-ahead (about half the filter length); Flush emits the rest.
// Process does not allocate unless out has to grow.
func (r *Resampler) Process(in []float32, out []float32) []float32 {
	if r.bypass {
		return append(out, in...)
	}
	for len(in) > 0 {
		// After drain+compact at most taps-1 frames (plus a partial one)
		// remain, so there is always room for at least a block here.
		n := min(len(in), cap(r.buf)-len(r.buf))
		r.buf = append(r.buf, in[:n]...)
		for i := len(r.buf) - 1; i >= len(r.buf)-n; i-- {
			if r.buf[i] != 0 {
				r.audible = r.start + int64(i/r.channels) + 1
				break
			}
		}
		in = in[n:]
		out = r.drain(out, math.MaxInt64)
		r.compact()
	}
	return out
}

// ResampledFrames is how many frames a stream of frames at rate from
// becomes at rate to: round(frames*to/from), halves rounding up.
func ResampledFrames(frames, from, to int64) int64 {
	return (2*frames*to + from) / (2 * from)
}

// Flush ends the stream: it emits the remaining output so the total is
// round(inputFrames*to/from) frames, then resets the resampler for a new
// stream. A trailing incomplete frame is dropped, since its missing
// channels have no defined value.
func (r *Resampler) Flush(out []float32) []float32 {
	if r.bypass {
		return out
	}
	ch := r.channels
	r.buf = r.buf[:len(r.buf)/ch*ch]
	total := ResampledFrames(r.start+int64(len(r.buf)/ch), int64(r.m), int64(r.l))
	// Outputs up to the rounded total need at most half frames of
	// look-ahead past the end of the input; the stream continues in
	// silence.
	for pad := r.half; pad > 0 && r.produced < total; {
		k := min(pad, (cap(r.buf)-len(r.buf))/ch)
		n := len(r.buf)
		r.buf = r.buf[:n+k*ch]
		clear(r.buf[n:])
		pad -= k
		out = r.drain(out, total)
		r.compact()
	}
	r.Reset()
	return out
}

// drain appends every output (up to limit in total) whose taps are all in
// buf.
func (r *Resampler) drain(out []float32, limit int64) []float32 {
	ch := r.channels
	last := r.start + int64(len(r.buf)/ch) - 1
	half := int64(r.half)
	if r.base+half <= last && r.produced < limit {
		// Grow once for everything this call can produce rather than
		// letting append double its way there.
		ready := ((last-half-r.base)*int64(r.l)+int64(r.l-1-r.phase))/int64(r.m) + 1
		ready = min(ready, limit-r.produced)
		out = slices.Grow(out, int(ready)*ch)
	}
	for r.base+half <= last && r.produced < limit {
		row := r.table[r.phase*r.taps : (r.phase+1)*r.taps]
		first := int(r.base - half + 1 - r.start)
		switch {
		case r.start+int64(first) >= r.audible:
			for range ch {
				out = append(out, 0)
			}
		case ch == 1:
			out = append(out, dot(row, r.buf[first:first+r.taps]))
		default:
			seg := r.buf[first*ch : (first+r.taps)*ch]
			for c := range ch {
				var s float32
				for k, h := range row {
					s += h * seg[k*ch+c]
				}
				out = append(out, s)
			}
		}
		r.produced++
		r.base += r.step
		r.phase += r.stepFrac
		if r.phase >= r.l {
			r.phase -= r.l
			r.base++
		}
	}
	return out
}

// compact drops the frames no future output needs.
func (r *Resampler) compact() {
	ch := r.channels
	keep := r.base - int64(r.half) + 1
	drop := min(keep-r.start, int64(len(r.buf)/ch))
	if drop <= 0 {
		return
	}
	n := copy(r.buf, r.buf[int(drop)*ch:])
	r.buf = r.buf[:n]
	r.start += drop
}

// dot is the mono inner loop; four accumulators break the dependency chain
// so the adds pipeline. The summation order is fixed, which is what makes
// chunked and one-shot output bit-identical.
func dot(h, x []float32) float32 {
	x = x[:len(h)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(h); i += 4 {
		s0 += h[i] * x[i]
		s1 += h[i+1] * x[i+1]
		s2 += h[i+2] * x[i+2]
		s3 += h[i+3] * x[i+3]
	}
	for ; i < len(h); i++ {
		s0 += h[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Resample converts a whole interleaved signal from one rate to another.
// The result has round(frames*to/from) frames.
func Resample(in []float32, from, to, channels int) ([]float32, error) {
	r, err := NewResampler(from, to, channels)
	if err != nil {
		return nil, err
	}
	if len(in)%channels != 0 {
		return nil, fmt.Errorf("audio: resample %d->%d Hz: %d samples is not a whole number of %d-channel frames", from, to, len(in), channels)
	}
	frames := int64(len(in) / channels)
	want := (2*frames*int64(to) + int64(from)) / (2 * int64(from))
	out := make([]float32, 0, int(want)*channels)
	out = r.Process(in, out)
	return r.Flush(out), nil
}

// Downmix averages each frame of interleaved audio to one sample and
// appends the mono result to out. Averaging (rather than summing) keeps a
// full-scale signal in range; anti-phase content cancels, which is the
// accepted cost of a fixed mono mix. A trailing incomplete frame and a
// channel count below 1 contribute nothing.
func Downmix(in []float32, channels int, out []float32) []float32 {
	if channels < 1 {
		return out
	}
	if channels == 1 {
		return append(out, in...)
	}
	frames := len(in) / channels
	out = slices.Grow(out, frames)
	scale := 1 / float32(channels)
	for i := range frames {
		var s float32
		for _, v := range in[i*channels : (i+1)*channels] {
			s += v
		}
		out = append(out, s*scale)
	}
	return out
}

// Upmix copies every mono sample to all channels and appends the
// interleaved result to out. A channel count below 1 contributes nothing.
func Upmix(mono []float32, channels int, out []float32) []float32 {
	if channels < 1 {
		return out
	}
	out = slices.Grow(out, len(mono)*channels)
	for _, v := range mono {
		for range channels {
			out = append(out, v)
		}
	}
	return out
}

// Convert changes interleaved audio from one format to another. Channel
// counts may stay the same or go to or from mono; other layouts have no
// single obvious mapping and are rejected. Channels are reduced before
// resampling and added after it, so the filter runs on as few channels as
// possible. The result never aliases in.
func Convert(in []float32, from Format, to Format) ([]float32, error) {
	if from.Validate() != nil {
		return nil, fmt.Errorf("audio: convert %v to %v: invalid source format", from, to)
	}
	if to.Validate() != nil {
		return nil, fmt.Errorf("audio: convert %v to %v: invalid target format", from, to)
	}
	if len(in)%from.Channels != 0 {
		return nil, fmt.Errorf("audio: convert %v to %v: %d samples is not a whole number of %d-channel frames", from, to, len(in), from.Channels)
	}
	x := in
	ch := from.Channels
	switch {
	case from.Channels == to.Channels:
	case to.Channels == 1:
		x = Downmix(in, from.Channels, nil)
		ch = 1
	case from.Channels == 1:
		// Upmixed after resampling.
	default:
		return nil, fmt.Errorf("audio: convert %v to %v: no channel mapping from %d to %d channels (only to or from mono)", from, to, from.Channels, to.Channels)
	}
	if from.Rate != to.Rate {
		var err error
		if x, err = Resample(x, from.Rate, to.Rate, ch); err != nil {
			return nil, err
		}
	} else if len(x) > 0 && &x[0] == &in[0] {
		x = slices.Clone(in) // never hand back the caller's slice
	}
	if ch != to.Channels {
		x = Upmix(x, to.Channels, nil)
	}
	return x, nil
}
