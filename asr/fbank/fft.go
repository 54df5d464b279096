package fbank

import (
	"math"

	"github.com/voiceassistant/voice/internal/dsp"
)

// realFFT computes the power spectrum of a real frame of length n (a power
// of two) as an n/2-point complex radix-2 FFT of the even/odd samples
// packed as real/imaginary parts, followed by the usual split step.
type realFFT struct {
	n      int
	half   int
	rev    []int32      // bit reversal of 0..half-1
	tw     []complex128 // exp(-2πik/half), k < half/2: the complex FFT's twiddles
	unpack []complex128 // exp(-2πik/n), k <= half/2: the split step's twiddles
	z      []complex128 // scratch, half
}

func newRealFFT(n int) *realFFT {
	if n < 4 || n&(n-1) != 0 {
		panic("fbank: FFT length must be a power of two >= 4")
	}
	half := n / 2
	f := &realFFT{
		n:      n,
		half:   half,
		rev:    make([]int32, half),
		tw:     make([]complex128, half/2),
		unpack: dsp.UnpackTwiddles(n),
		z:      make([]complex128, half),
	}
	bits := 0
	for 1<<bits < half {
		bits++
	}
	for i := range f.rev {
		r := 0
		for b := range bits {
			if i&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		f.rev[i] = int32(r)
	}
	for k := range f.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(half))
		f.tw[k] = complex(c, s)
	}
	return f
}

// clone returns a realFFT sharing the read-only tables with its own scratch.
func (f *realFFT) clone() *realFFT {
	g := *f
	g.z = make([]complex128, f.half)
	return &g
}

// transform computes the forward (exp(-2πi jk/N)), unscaled FFT of z in
// place: iterative decimation in time after a bit-reversal permutation.
func (f *realFFT) transform(z []complex128) {
	n := f.half
	z = z[:n]
	for i, r := range f.rev[:n] {
		if j := int(r); i < j {
			z[i], z[j] = z[j], z[i]
		}
	}
	// First stage (size 2) needs no twiddles.
	for i := 0; i < n; i += 2 {
		a, b := z[i], z[i+1]
		z[i], z[i+1] = a+b, a-b
	}
	for size := 4; size <= n; size <<= 1 {
		h := size / 2
		step := n / size
		for start := 0; start < n; start += size {
			lo := z[start : start+h : start+h]
			hi := z[start+h : start+size : start+size]
			for k := range lo {
				w := f.tw[k*step]
				b := hi[k]
				br, bi := real(b), imag(b)
				wr, wi := real(w), imag(w)
				t := complex(br*wr-bi*wi, br*wi+bi*wr)
				a := lo[k]
				lo[k], hi[k] = a+t, a-t
			}
		}
	}
}

// power sets p[k] = |X[k]|^2, k = 0..n/2, for X the n-point DFT of x
// (len(x) <= n; missing samples are zeros).
func (f *realFFT) power(x []float64, p []float64) {
	half := f.half
	z := f.z[:half]
	p = p[:half+1]
	m := min(len(x)/2, half)
	for i := range m {
		z[i] = complex(x[2*i], x[2*i+1])
	}
	i := m
	if i < half && 2*i < len(x) { // odd length: last sample pairs with a zero
		z[i] = complex(x[2*i], 0)
		i++
	}
	clear(z[i:])
	f.transform(z)
	dsp.PackedPower(z, f.unpack, p)
}
