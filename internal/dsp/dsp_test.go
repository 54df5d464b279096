package dsp

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 4, 5, 8, 10, 20, 25, 40, 100, 200, 256, 400} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		got := NewFFT(n).Transform(append([]complex128(nil), x...), make([]complex128, n))
		for k := range n {
			var want complex128
			for j, v := range x {
				want += v * cmplx.Rect(1, -2*math.Pi*float64(j*k%n)/float64(n))
			}
			assert.InDelta(t, 0, cmplx.Abs(got[k]-want), 1e-9*float64(n), "n=%d k=%d", n, k)
		}
	}
}

// The power spectrum of a windowed frame, shorter than the transform
// (zero-padded) or as long, even or odd, is the direct DFT's.
func TestRealPowerMatchesDFT(t *testing.T) {
	for _, tc := range []struct {
		n, samples int
		window     bool
	}{
		{8, 8, false}, {16, 16, true}, {512, 0, false}, {512, 1, true}, {400, 400, true}, {512, 400, false}, {512, 511, true}, {40, 7, false},
	} {
		r := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.samples)))
		x := make([]float64, tc.samples)
		var win []float64
		for i := range x {
			x[i] = r.Float64()*2 - 1
		}
		if tc.window {
			win = make([]float64, tc.samples)
			for i := range win {
				win[i] = r.Float64()
			}
		}
		rp := NewRealPower(tc.n)
		p := make([]float64, tc.n/2+1)
		rp.Power(x, win, p, rp.NewScratch())
		for k := range p {
			var X complex128
			for j, v := range x {
				if win != nil {
					v *= win[j]
				}
				X += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(tc.n)))
			}
			assert.InDelta(t, sq(cmplx.Abs(X)), p[k], 1e-9*float64(tc.n), "%+v k=%d", tc, k)
		}
	}
}

func BenchmarkRealPower(b *testing.B) {
	for _, n := range []int{400, 512} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			rp := NewRealPower(n)
			x := make([]float64, n)
			for i := range x {
				x[i] = math.Sin(float64(i))
			}
			p := make([]float64, n/2+1)
			s := rp.NewScratch()
			b.ReportAllocs()
			for b.Loop() {
				rp.Power(x, nil, p, s)
			}
		})
	}
}

func TestNonzero(t *testing.T) {
	first, span := Nonzero([]float64{0, 0, 1, 0, 2, 0})
	assert.Equal(t, 2, first)
	assert.Equal(t, []float64{1, 0, 2}, span)
	first, span = Nonzero([]float64{0, 0})
	assert.Equal(t, 0, first)
	assert.Empty(t, span)
}
