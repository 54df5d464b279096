// Package dsp holds the signal-processing steps of Smart Turn's Whisper
// log-mel features: one FFT, the power spectrum of real frames, and sparse
// filterbanks, in float64. The recognizer's Kaldi fbank (asr/fbank) has an
// FFT of its own: it must match kaldi-native-fbank's float32 one bit for
// bit.
package dsp

import "math"

// RealPower computes power spectra of real n-sample frames as an
// n/2-point complex FFT of the samples packed in pairs, then a split
// step: half the work of a complex transform. Its tables are read-only and
// may be shared; each user brings its own scratch (NewScratch).
type RealPower struct {
	n      int
	fft    *FFT
	unpack []complex128 // exp(-2πik/n), k = 0..n/4
}

// NewRealPower plans n-point power spectra; n/2 must factor into 2, 4 and
// 5 (see NewFFT).
func NewRealPower(n int) *RealPower {
	return &RealPower{n: n, fft: NewFFT(n / 2), unpack: unpackTwiddles(n)}
}

// Scratch is one user's working memory for RealPower.
type Scratch struct{ z, work []complex128 }

// NewScratch returns working memory for r.
func (r *RealPower) NewScratch() *Scratch {
	return &Scratch{z: make([]complex128, r.n/2), work: make([]complex128, r.n/2)}
}

// Power sets p[k] = |X[k]|², k = 0..n/2, for X the n-point DFT of x times
// win (nil: no window). x may be shorter than n: the missing samples are
// zeros.
func (r *RealPower) Power(x, win []float64, p []float64, s *Scratch) {
	half := r.n / 2
	z := s.z[:half]
	x = x[:min(len(x), r.n)]
	pairs := len(x) / 2
	if win == nil {
		for i := range pairs {
			z[i] = complex(x[2*i], x[2*i+1])
		}
	} else {
		win = win[:len(x)]
		for i := range pairs {
			z[i] = complex(x[2*i]*win[2*i], x[2*i+1]*win[2*i+1])
		}
	}
	i := pairs
	if 2*i < len(x) { // odd length: the last sample pairs with a zero
		v := x[2*i]
		if win != nil {
			v *= win[2*i]
		}
		z[i] = complex(v, 0)
		i++
	}
	clear(z[i:])
	packedPower(r.fft.Transform(z, s.work), r.unpack, p[:half+1])
}

// unpackTwiddles returns exp(-2πik/n) for k = 0..n/4, the factors
// packedPower needs for an n-point real transform.
func unpackTwiddles(n int) []complex128 {
	w := make([]complex128, n/4+1)
	for k := range w {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		w[k] = complex(c, s)
	}
	return w
}

// packedPower turns the n/2-point complex DFT z of a real signal packed as
// z[k] = x[2k] + i·x[2k+1] into the power spectrum p[k] = |X[k]|², k =
// 0..n/2, of the n-point real DFT X, using tw from unpackTwiddles(n).
func packedPower(z []complex128, tw []complex128, p []float64) {
	half := len(z)
	z0 := z[0]
	p[0] = sq(real(z0) + imag(z0))
	p[half] = sq(real(z0) - imag(z0))
	for k := 1; k <= half/2; k++ {
		a, b := z[k], z[half-k]
		// X[k] = E + W^k O with E = (a + conj b)/2, O = -i(a - conj b)/2;
		// X[n/2-k] = conj(E) - conj(W^k O), from the same a and b.
		er, ei := (real(a)+real(b))/2, (imag(a)-imag(b))/2
		or, oi := (imag(a)+imag(b))/2, (real(b)-real(a))/2
		w := tw[k]
		wr, wi := real(w), imag(w)
		tr, ti := wr*or-wi*oi, wr*oi+wi*or
		p[k] = sq(er+tr) + sq(ei+ti)
		p[half-k] = sq(er-tr) + sq(ti-ei)
	}
}

func sq(v float64) float64 { return v * v }

// Nonzero returns the index of w's first nonzero weight and the span up to
// its last one (empty if all are zero): a filterbank keeps only that, so
// applying it skips the zeros.
func Nonzero(w []float64) (first int, span []float64) {
	first, last := -1, -1
	for k, v := range w {
		if v != 0 {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return 0, w[:0:0]
	}
	return first, w[first : last+1 : last+1]
}
