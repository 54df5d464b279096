// Package fbank computes Kaldi-compatible 80-bin log-mel filterbank
// features, the input of the X-ASR streaming zipformer (shared/MODELS.md),
// as kaldi-native-fbank computes them for sherpa-onnx, X-ASR's reference
// runtime: the same values to the bit, float32 where it is float32 and in
// its order of operations, so the encoder sees the reference's input (a
// 4-bit encoder flips tokens on differences of 1e-3 in near-floor bins).
//
// The options are torchaudio.compliance.kaldi.fbank's and Kaldi's
// compute-fbank-feats': sample_frequency 16000, frame_length 25 ms (400
// samples), frame_shift 10 ms (160), window_type povey, dither 0,
// snip_edges false, preemphasis_coefficient 0.97, remove_dc_offset true,
// round_to_power_of_two true (512-point FFT), num_mel_bins 80,
// use_energy false, use_log_fbank true, use_power true. The filterbank's
// frequency range is the model's (Options): X-ASR was trained on 20-7600 Hz
// (low_freq 20, high_freq -400). Samples are used as given, floats in
// [-1, 1] (no int16 scaling), as sherpa-onnx passes them (its
// normalize_samples default, sherpa-onnx/csrc/features.h:53).
//
// Per frame t (0-based) of n samples, with snip_edges false, in float32
// (kaldi-native-fbank's csrc, file:line below as of v1.21.5, commit
// 6aaa1f2; sherpa-onnx 1.13 builds v1.22.3, whose output this is checked
// against: TestSherpaOnnxFeatures):
//
//  1. the 400 samples starting at t*160 - 120 (frames are centred on
//     t*160 + 80), indices outside [0, n) reflected with the edge sample
//     repeated: -1 -> 0, -2 -> 1, ..., n -> n-1, n+1 -> n-2 (repeated
//     until inside; feature-window.cc:145-198);
//  2. minus the frame's mean, summed in order (feature-window.cc:203-214);
//  3. pre-emphasis x[j] -= 0.97f x[j-1] from the end, x[0] -= 0.97f x[0]
//     (feature-window.cc:235-246);
//  4. times the povey window (0.5 - 0.5 cos(2πj/399))^0.85, computed in
//     double and stored as float (feature-window.cc:24-67, 81-87);
//  5. zero-padded to 512, kissfft's real FFT (kissfft.go), |X|^2 for bins
//     0..256 (rfft.cc:61-77, feature-functions.cc:28-47);
//  6. 80 triangular filters in the mel domain (mel = 1127 logf(1 +
//     f/700)), edges evenly spaced from mel(low) to mel(high) in 81 steps,
//     over FFT bins 0..255, not area-normalized, weights and sums in float
//     (mel-computations.cc:121-239, 415-439);
//  7. logf(max(energy, FLT_EPSILON)), FLT_EPSILON = 2^-23, with glibc's
//     logf (logf.go; feature-fbank.cc:98-104).
//
// There are (n + 80) / 160 frames (n/160 rounded half up).
package fbank

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// Feature geometry.
const (
	SampleRate  = 16000 // input rate, mono
	FrameLength = 400   // samples per frame (25 ms)
	FrameShift  = 160   // samples between frames (10 ms)
	NumBins     = 80    // mel bins per frame
)

const (
	fftSize     = 512 // FrameLength rounded up to a power of two
	numFFTBins  = fftSize/2 + 1
	nyquist     = SampleRate / 2.0
	frameOffset = (FrameLength - FrameShift) / 2 // frame t starts at t*FrameShift - frameOffset
	fltEpsilon  = 1.1920928955078125e-07         // numeric_limits<float>::epsilon()
)

// Options are the mel filterbank's frequency range, the one setting in
// which the Kaldi-style recipes of the models this package feeds differ.
type Options struct {
	// LowFreq is the lowest filter's lower edge, in Hz.
	LowFreq float64
	// HighFreq is the highest filter's upper edge, in Hz; zero or
	// negative counts back from the Nyquist frequency, as Kaldi's
	// MelBanksOptions does (-400 is 7600 Hz).
	HighFreq float64
}

// XASR is what X-ASR was trained on and what its own and sherpa-onnx's
// inference use: lhotse's FbankConfig defaults (low_freq 20, high_freq
// -400), the same as kaldifeat's low_freq and the high_freq its streaming
// script sets. A filterbank up to Nyquist moves every mel bin.
var XASR = Options{LowFreq: 20, HighFreq: -400}

// edges resolves HighFreq and checks the range as Kaldi's MelBanks does.
func (o Options) edges() (low, high float64, err error) {
	high = o.HighFreq
	if high <= 0 {
		high += nyquist
	}
	if !(o.LowFreq >= 0 && o.LowFreq < nyquist && high > 0 && high <= nyquist && high > o.LowFreq) {
		return 0, 0, fmt.Errorf("fbank: mel range low_freq %g, high_freq %g (%g Hz) is not inside 0-%g Hz", o.LowFreq, o.HighFreq, high, float64(nyquist))
	}
	return o.LowFreq, high, nil
}

// ErrFinished is returned by Accept after InputFinished (until Reset).
var ErrFinished = errors.New("fbank: audio accepted after InputFinished")

// ErrNonFinite is returned for audio containing NaN or infinite samples.
var ErrNonFinite = errors.New("fbank: audio contains NaN or infinite samples")

// NumFrames returns the number of frames n samples give:
// (n + FrameShift/2) / FrameShift.
func NumFrames(n int) int {
	if n <= 0 {
		return 0
	}
	return (n + FrameShift/2) / FrameShift
}

// Compute returns the features of pcm, one 80-value frame per 10 ms.
// Empty input gives no frames; NaN or infinite samples are an error. The
// frames are the ones an Online stream produces for the same audio.
func Compute(pcm []float32, opts Options) ([][]float32, error) {
	if err := checkFinite(pcm); err != nil {
		return nil, err
	}
	o, err := NewOnline(opts)
	if err != nil {
		return nil, err
	}
	o.frames = make([][]float32, 0, NumFrames(len(pcm)))
	o.slab = make([]float32, NumFrames(len(pcm))*NumBins)
	// Feed in pieces so the sample buffer stays small.
	const piece = 16 * FrameShift
	for len(pcm) > 0 {
		n := min(piece, len(pcm))
		o.accept(pcm[:n])
		pcm = pcm[n:]
	}
	o.InputFinished()
	return o.frames, nil
}

func checkFinite(pcm []float32) error {
	// v-v is 0 for finite v and NaN for NaN and ±Inf; summing keeps the
	// loop branch-free.
	var bad float32
	for _, v := range pcm {
		bad += v - v
	}
	if bad != 0 || math.IsNaN(float64(bad)) {
		return ErrNonFinite
	}
	return nil
}

// tables are the constants every extractor with the same Options shares.
type tables struct {
	window []float32   // povey, FrameLength
	mel    [][]float32 // per bin, weights for FFT bins melLo[m]...
	melLo  []int
	fft    *kissReal
}

var (
	tablesMu sync.Mutex
	shared   = map[Options]*tables{}
)

func getTables(opts Options) (*tables, error) {
	low, high, err := opts.edges()
	if err != nil {
		return nil, err
	}
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if t, ok := shared[opts]; ok {
		return t, nil
	}
	t := &tables{window: poveyWindow(), fft: newKissReal(fftSize)}
	t.mel, t.melLo = melBanks(float32(low), float32(high))
	shared[opts] = t
	return t, nil
}

// poveyWindow is GetWindow's povey case (feature-window.cc:33, 52-54):
// double arithmetic, stored as float. The conversion after the product
// keeps arm64 from fusing it into the subtraction, which x86-64 never does.
func poveyWindow() []float32 {
	w := make([]float32, FrameLength)
	a := 2 * math.Pi / (FrameLength - 1)
	for j := range w {
		w[j] = float32(math.Pow(0.5-float64(0.5*math.Cos(a*float64(j))), 0.85))
	}
	return w
}

// melScale is MelBanks::MelScale, in float (mel-computations.h). The
// product is rounded before it is returned: inlined, arm64 would fuse it
// with the subtractions melBanks makes of it.
func melScale(hz float32) float32 { return float32(1127 * logf(1+hz/700)) }

// melBanks builds MelBanks::InitKaldiMelBanks's triangular filters
// between lowHz and highHz in float (mel-computations.cc:150-222): bin m
// spans mel edges low + m·δ, low + (m+1)·δ, low + (m+2)·δ with δ =
// (mel(high) - mel(low)) / 81, weight (mel - left)/(centre - left) up to
// the centre and (right - mel)/(right - centre) after it at FFT bin k's
// frequency k·31.25 Hz for k < 256, kept where the mel lies strictly
// between the edges.
func melBanks(lowHz, highHz float32) ([][]float32, []int) {
	melLow, melHigh := melScale(lowHz), melScale(highHz)
	delta := (melHigh - melLow) / (NumBins + 1)
	const binWidth = float32(SampleRate) / fftSize
	mel := make([][]float32, NumBins)
	lo := make([]int, NumBins)
	for m := range NumBins {
		left := melLow + float32(float32(m)*delta)
		center := melLow + float32(float32(m+1)*delta)
		right := melLow + float32(float32(m+2)*delta)
		lo[m] = -1
		for k := range fftSize / 2 {
			f := melScale(binWidth * float32(k))
			if f <= left || f >= right {
				continue
			}
			if lo[m] < 0 {
				lo[m] = k
			}
			w := (right - f) / (right - center)
			if f <= center {
				w = (f - left) / (center - left)
			}
			mel[m] = append(mel[m], w)
		}
	}
	return mel, lo
}

// extractor turns one frame of raw samples into 80 log-mel energies.
type extractor struct {
	t     *tables
	frame []float32 // fftSize: FrameLength samples, then zeros
	spec  []cpx     // numFFTBins
	power []float32 // numFFTBins
}

func newExtractor(t *tables) *extractor {
	return &extractor{
		t:     t,
		frame: make([]float32, fftSize),
		spec:  make([]cpx, numFFTBins),
		power: make([]float32, numFFTBins),
	}
}

// compute processes e.frame (its first FrameLength values filled with the
// raw samples) into dst, step by step as ProcessWindow
// (feature-window.cc:248-272) and FbankComputer::Compute
// (feature-fbank.cc:69-114) do.
func (e *extractor) compute(dst []float32) {
	x := e.frame[:FrameLength]
	var sum float32
	for _, v := range x {
		sum += v
	}
	mean := sum / FrameLength
	for j := range x {
		x[j] -= mean
	}
	const preemph = float32(0.97)
	for j := FrameLength - 1; j > 0; j-- {
		x[j] -= float32(preemph * x[j-1])
	}
	x[0] -= float32(preemph * x[0])
	for j, w := range e.t.window {
		x[j] *= w
	}
	e.t.fft.transform(e.frame, e.spec)
	for k, c := range e.spec {
		e.power[k] = float32(c.r*c.r) + float32(c.i*c.i)
	}
	dst = dst[:NumBins]
	for m, w := range e.t.mel {
		p := e.power[e.t.melLo[m]:]
		p = p[:len(w)]
		var s float32
		for k, v := range w {
			s += float32(v * p[k])
		}
		dst[m] = logf(max(s, fltEpsilon))
	}
}

// reflect maps a sample index to [0, n) the way Kaldi's ExtractWindow
// does for snip_edges=false: -1 -> 0, n -> n-1, repeated until inside.
func reflect(i, n int) int {
	for i < 0 || i >= n {
		if i < 0 {
			i = -i - 1
		} else {
			i = 2*n - 1 - i
		}
	}
	return i
}

// frameStart is the index of frame t's first sample (negative for t = 0).
func frameStart(t int) int { return t*FrameShift - frameOffset }

// Online computes the same frames as Compute incrementally. A frame is
// computed as soon as all its samples have arrived (frame t needs the
// first t*160 + 280 samples); the last frames, which reach past the end of
// the audio and use the reflected tail, after InputFinished. It keeps only
// the samples future frames need (under 400), and the computed frames
// until Discard.
// An Online is not safe for concurrent use.
type Online struct {
	ex *extractor

	buf      []float32 // samples [bufStart, received)
	bufStart int
	received int
	finished bool

	frames    [][]float32 // frames [discarded, discarded+len(frames))
	discarded int
	slab      []float32 // storage the next frames are cut from
}

// NewOnline returns an empty stream with the filterbank opts gives; a
// range outside 0-8000 Hz is an error.
func NewOnline(opts Options) (*Online, error) {
	t, err := getTables(opts)
	if err != nil {
		return nil, err
	}
	return &Online{ex: newExtractor(t)}, nil
}

// Clone returns a stream in o's state that goes on apart from it. The
// frames computed so far are shared: neither stream ever changes one.
func (o *Online) Clone() *Online {
	return &Online{ex: newExtractor(o.ex.t), buf: slices.Clone(o.buf), bufStart: o.bufStart, received: o.received,
		finished: o.finished, frames: slices.Clone(o.frames), discarded: o.discarded}
}

// Accept appends samples (any number, any chunking) and computes every
// frame they complete. NaN or infinite samples are an error and the chunk
// is dropped; so is audio after InputFinished (ErrFinished).
func (o *Online) Accept(pcm []float32) error {
	if o.finished {
		return ErrFinished
	}
	if err := checkFinite(pcm); err != nil {
		return fmt.Errorf("%w (chunk of %d dropped)", err, len(pcm))
	}
	o.accept(pcm)
	return nil
}

func (o *Online) accept(pcm []float32) {
	if len(pcm) == 0 {
		return
	}
	o.buf = append(o.buf, pcm...)
	o.received += len(pcm)
	for t := o.Ready(); frameStart(t)+FrameLength <= o.received; t++ {
		o.computeFrame(t, o.received)
	}
	// Frames from Ready() on start at or after keep (frame 0 needs samples
	// 0..279, reflected at the start). At most FrameLength-1 samples stay.
	keep := max(0, frameStart(o.Ready()))
	if drop := keep - o.bufStart; drop > 0 {
		n := copy(o.buf, o.buf[drop:])
		o.buf = o.buf[:n]
		o.bufStart = keep
	}
}

// InputFinished marks the end of the audio and computes the remaining
// frames, reflecting the end of the signal. Later Accepts fail until Reset.
func (o *Online) InputFinished() {
	if o.finished {
		return
	}
	o.finished = true
	for t := o.Ready(); t < NumFrames(o.received); t++ {
		o.computeFrame(t, o.received)
	}
	o.buf = o.buf[:0]
	o.bufStart = o.received
}

// computeFrame appends frame t for a signal of n samples (the reflection
// at the end only matters once n is the final length).
func (o *Online) computeFrame(t, n int) {
	x := o.ex.frame[:FrameLength]
	start := frameStart(t)
	if start >= 0 && start+FrameLength <= n {
		copy(x, o.buf[start-o.bufStart:start-o.bufStart+FrameLength])
	} else {
		for j := range x {
			x[j] = o.buf[reflect(start+j, n)-o.bufStart]
		}
	}
	if len(o.slab) < NumBins {
		o.slab = make([]float32, 32*NumBins)
	}
	dst := o.slab[:NumBins:NumBins]
	o.slab = o.slab[NumBins:]
	o.ex.compute(dst)
	o.frames = append(o.frames, dst)
}

// Ready returns the number of frames computed since the last Reset
// (including discarded ones): frames 0..Ready()-1 exist.
func (o *Online) Ready() int { return o.discarded + len(o.frames) }

// Frame returns frame i (0-based since Reset), NumBins values. It stays
// valid (and unchanged) until Reset; callers must not modify it. i must
// be in [Discarded(), Ready()).
func (o *Online) Frame(i int) []float32 {
	if i < o.discarded || i >= o.Ready() {
		panic(fmt.Sprintf("fbank: frame %d not available (have %d..%d)", i, o.discarded, o.Ready()-1))
	}
	return o.frames[i-o.discarded]
}

// Discard releases the frames before index before (clamped to Ready());
// Frame may no longer be called for them.
func (o *Online) Discard(before int) {
	before = min(before, o.Ready())
	k := before - o.discarded
	if k <= 0 {
		return
	}
	// Shift the live frames down (a few dozen pointers) so the array is
	// reused rather than resliced forward and reallocated.
	n := copy(o.frames, o.frames[k:])
	clear(o.frames[n:])
	o.frames = o.frames[:n]
	o.discarded = before
}

// Discarded returns the index of the first frame still held.
func (o *Online) Discarded() int { return o.discarded }

// InputDone reports whether InputFinished was called since the last Reset.
func (o *Online) InputDone() bool { return o.finished }

// Reset starts a new stream: no audio, no frames, numbering from 0.
func (o *Online) Reset() {
	o.buf = o.buf[:0]
	o.bufStart = 0
	o.received = 0
	o.finished = false
	clear(o.frames)
	o.frames = o.frames[:0]
	o.discarded = 0
	o.slab = nil
}
