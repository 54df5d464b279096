// Package dsp holds the signal-processing steps the feature extractors
// (Kaldi fbank for the recognizer, Whisper log-mel for Smart Turn) share.
package dsp

import "math"

// UnpackTwiddles returns exp(-2πik/n) for k = 0..n/4, the factors
// PackedPower needs for an n-point real transform.
func UnpackTwiddles(n int) []complex128 {
	w := make([]complex128, n/4+1)
	for k := range w {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		w[k] = complex(c, s)
	}
	return w
}

// PackedPower turns the n/2-point complex DFT z of a real signal packed as
// z[k] = x[2k] + i·x[2k+1] into the power spectrum p[k] = |X[k]|², k =
// 0..n/2, of the n-point real DFT X, using tw from UnpackTwiddles(n).
// Computing a real transform this way costs half a complex one.
func PackedPower(z []complex128, tw []complex128, p []float64) {
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
