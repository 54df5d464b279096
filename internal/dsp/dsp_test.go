package dsp

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPackedPowerMatchesDFT(t *testing.T) {
	for _, n := range []int{8, 16, 400, 512} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		x := make([]float64, n)
		for i := range x {
			x[i] = r.Float64()*2 - 1
		}
		z := make([]complex128, n/2)
		for k := range z { // the packed signal's DFT, computed directly
			for j := range n / 2 {
				z[k] += complex(x[2*j], x[2*j+1]) * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n/2)))
			}
		}
		p := make([]float64, n/2+1)
		PackedPower(z, UnpackTwiddles(n), p)
		for k := range p {
			var X complex128
			for j := range n {
				X += complex(x[j], 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k)/float64(n)))
			}
			assert.InDelta(t, sq(cmplx.Abs(X)), p[k], 1e-9*float64(n), "n=%d k=%d", n, k)
		}
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
