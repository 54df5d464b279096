package smartturn

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/voiceassistant/voice/internal/dsp"
)

// The Whisper feature geometry Smart Turn v3 was trained with (an 8 s
// chunk of the Whisper feature extractor).
const (
	SampleRate    = 16000               // input rate, mono
	WindowSamples = 8 * SampleRate      // the last 8 s are analysed
	NFFT          = 400                 // 25 ms periodic Hann window
	HopLength     = 160                 // 10 ms
	NumMels       = 80                  // Slaney mel filters, 0-8000 Hz
	NumFrames     = 800                 // STFT frames kept (801 - 1)
	FeatureLen    = NumMels * NumFrames // WhisperFeatures' output length
)

const (
	numBins   = NFFT/2 + 1 // 201 rfft bins
	padSide   = NFFT / 2   // centered STFT: reflect-pad 200 each side
	paddedLen = WindowSamples + 2*padSide
)

var errNoAudio = errors.New("whisper features: no audio")

// WhisperFeatures returns the 80 x 800 log-mel matrix Smart Turn v3 takes
// as input_features, mel-major (out[m*800+t]), from 16 kHz mono audio. It
// follows the Whisper feature extractor with an 8 s chunk: keep the last
// 8 s, left-pad shorter audio with zeros, normalize the padded buffer to
// zero mean and unit variance, centered STFT (reflect padding, periodic
// Hann 400, hop 160, |rfft|^2), 80 Slaney mel filters, log10 floored at
// 1e-10, last frame dropped, dynamic range limited to 8 (log10 units)
// below the maximum, then (x+4)/4.
//
// Empty input and non-finite samples are errors. It is safe for
// concurrent use; a Featurizer avoids its per-call scratch allocation.
func WhisperFeatures(pcm []float32) ([]float32, error) {
	f := featurizers.Get().(*Featurizer)
	defer featurizers.Put(f)
	out := make([]float32, FeatureLen)
	if err := f.Compute(out, pcm); err != nil {
		return nil, err
	}
	return out, nil
}

var featurizers = sync.Pool{New: func() any { return NewFeaturizer() }}

// Featurizer computes WhisperFeatures into a caller's buffer, reusing
// its scratch space. It is not safe for concurrent use.
type Featurizer struct {
	t      *featureTables
	padded []float64 // normalized, reflect-padded 8 s buffer
	fft    *dsp.Scratch
	power  []float64
}

// NewFeaturizer returns a Featurizer; the window, mel filters and FFT
// twiddles are computed once per process and shared.
func NewFeaturizer() *Featurizer {
	t := tables()
	return &Featurizer{
		t:      t,
		padded: make([]float64, paddedLen),
		fft:    t.power.NewScratch(),
		power:  make([]float64, numBins),
	}
}

// Compute writes the features of pcm (see WhisperFeatures) into dst,
// which must hold exactly FeatureLen values.
func (f *Featurizer) Compute(dst, pcm []float32) error {
	if len(dst) != FeatureLen {
		return fmt.Errorf("whisper features: output buffer holds %d values, need %d (%d x %d)", len(dst), FeatureLen, NumMels, NumFrames)
	}
	if len(pcm) == 0 {
		return errNoAudio
	}
	// Samples before the last 8 s are not analysed, but a NaN or Inf
	// anywhere means the audio is broken: v-v is NaN exactly for those.
	kept := pcm[max(0, len(pcm)-WindowSamples):]
	var bad float32
	for _, v := range pcm[:len(pcm)-len(kept)] {
		bad += v - v
	}
	var sum float64
	for _, v := range kept {
		sum += float64(v)
	}
	if bad != 0 || math.IsNaN(float64(bad)) || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return fmt.Errorf("whisper features: audio contains NaN or infinite samples")
	}

	// 1-2. Left-pad to 8 s with zeros and normalize the whole buffer.
	zeros := WindowSamples - len(kept)
	mean := sum / WindowSamples
	ss := float64(zeros) * mean * mean
	for _, v := range kept {
		d := float64(v) - mean
		ss += d * d
	}
	inv := 1 / math.Sqrt(ss/WindowSamples+1e-7)
	x := f.padded[padSide : padSide+WindowSamples]
	padValue := -mean * inv
	for i := range zeros {
		x[i] = padValue
	}
	for i, v := range kept {
		x[zeros+i] = (float64(v) - mean) * inv
	}
	// 3. Reflect padding (edge sample not repeated, like numpy's "reflect").
	for i := 1; i <= padSide; i++ {
		f.padded[padSide-i] = x[i]
		f.padded[padSide+WindowSamples-1+i] = x[WindowSamples-1-i]
	}

	// 4-6. Power spectrum, mel, log10 for frames 0..799 (frame 800 of the
	// centered STFT is dropped, before the maximum is taken).
	t := f.t
	maxLog := math.Inf(-1)
	for fr := range NumFrames {
		t.power.Power(f.padded[fr*HopLength:fr*HopLength+NFFT], t.window, f.power, f.fft)
		for m := range NumMels {
			var e float64
			w := t.mel[m]
			for k, p := range f.power[t.melLo[m] : t.melLo[m]+len(w)] {
				e += w[k] * p
			}
			l := math.Log10(max(e, 1e-10))
			maxLog = max(maxLog, l)
			dst[m*NumFrames+fr] = float32(l)
		}
	}
	// 7. Dynamic range and scaling.
	floor := float32(maxLog - 8)
	for i, v := range dst {
		dst[i] = (max(v, floor) + 4) / 4
	}
	return nil
}

// featureTables are the constants every Featurizer shares.
type featureTables struct {
	window []float64   // periodic Hann, 400
	mel    [][]float64 // per filter, weights for bins melLo[m]...
	melLo  []int
	power  *dsp.RealPower // 400-point
}

var (
	tablesOnce sync.Once
	sharedTabs *featureTables
)

func tables() *featureTables {
	tablesOnce.Do(func() {
		t := &featureTables{window: make([]float64, NFFT), power: dsp.NewRealPower(NFFT)}
		for n := range t.window {
			t.window[n] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(n)/NFFT)
		}
		t.mel, t.melLo = slaneyMelFilters()
		sharedTabs = t
	})
	return sharedTabs
}

// slaneyMelFilters builds the 80 triangular filters over the 201 rfft
// bins (0-8000 Hz) on the Slaney mel scale with Slaney area normalization,
// as librosa.filters.mel(sr=16000, n_fft=400, n_mels=80) does, keeping
// only each filter's nonzero span.
func slaneyMelFilters() ([][]float64, []int) {
	lo, hi := hzToMel(0), hzToMel(SampleRate/2)
	edges := make([]float64, NumMels+2)
	for i := range edges {
		edges[i] = melToHz(lo + (hi-lo)*float64(i)/float64(NumMels+1))
	}
	mel := make([][]float64, NumMels)
	start := make([]int, NumMels)
	for m := range NumMels {
		l, c, r := edges[m], edges[m+1], edges[m+2]
		norm := 2 / (r - l)
		w := make([]float64, numBins)
		for k := range numBins {
			hz := float64(k) * SampleRate / NFFT
			w[k] = max(0, min((hz-l)/(c-l), (r-hz)/(r-c))) * norm
		}
		start[m], mel[m] = dsp.Nonzero(w)
	}
	return mel, start
}

const (
	melFSp       = 200.0 / 3
	melMinLogHz  = 1000.0
	melMinLogMel = melMinLogHz / melFSp
)

var melLogStep = math.Log(6.4) / 27

func hzToMel(hz float64) float64 {
	if hz >= melMinLogHz {
		return melMinLogMel + math.Log(hz/melMinLogHz)/melLogStep
	}
	return hz / melFSp
}

func melToHz(mel float64) float64 {
	if mel >= melMinLogMel {
		return melMinLogHz * math.Exp(melLogStep*(mel-melMinLogMel))
	}
	return mel * melFSp
}
