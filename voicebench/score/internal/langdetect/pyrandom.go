package langdetect

import (
	"math"
	"math/bits"
)

// pyRandom is CPython's random.Random (MT19937) as far as langdetect uses
// it: seeding with an int, gauss and choice. Go's math/rand has no Mersenne
// Twister, and only the same stream reproduces langdetect's verdicts.
type pyRandom struct {
	mt        [mtN]uint32
	i         int
	gaussNext float64
	haveGauss bool
}

const (
	mtN       = 624
	mtM       = 397
	matrixA   = 0x9908b0df
	upperMask = 0x80000000
	lowerMask = 0x7fffffff
)

// newPyRandom is random.Random(seed) for a seed below 2^32.
func newPyRandom(seed uint32) *pyRandom {
	r := &pyRandom{}
	r.initByArray([]uint32{seed})
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < mtN; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.i = mtN
}

func (r *pyRandom) initByArray(key []uint32) {
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(mtN, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			r.mt[0] = r.mt[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := mtN - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			r.mt[0] = r.mt[mtN-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRandom) uint32() uint32 {
	if r.i >= mtN {
		mag := func(y uint32) uint32 { return (y & 1) * matrixA }
		k := 0
		for ; k < mtN-mtM; k++ {
			y := r.mt[k]&upperMask | r.mt[k+1]&lowerMask
			r.mt[k] = r.mt[k+mtM] ^ y>>1 ^ mag(y)
		}
		for ; k < mtN-1; k++ {
			y := r.mt[k]&upperMask | r.mt[k+1]&lowerMask
			r.mt[k] = r.mt[k+mtM-mtN] ^ y>>1 ^ mag(y)
		}
		y := r.mt[mtN-1]&upperMask | r.mt[0]&lowerMask
		r.mt[mtN-1] = r.mt[mtM-1] ^ y>>1 ^ mag(y)
		r.i = 0
	}
	y := r.mt[r.i]
	r.i++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// random is random.random(): 53 random bits in [0, 1).
func (r *pyRandom) random() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// gauss is random.gauss(0, 1), which draws normals in pairs.
func (r *pyRandom) gauss() float64 {
	if r.haveGauss {
		r.haveGauss = false
		return r.gaussNext
	}
	x2pi := r.random() * 2 * math.Pi
	g2rad := math.Sqrt(-2.0 * math.Log(1.0-r.random()))
	r.gaussNext, r.haveGauss = math.Sin(x2pi)*g2rad, true
	return math.Cos(x2pi) * g2rad
}

// randBelow is random._randbelow(n) for 0 < n < 2^32: the index
// random.choice draws.
func (r *pyRandom) randBelow(n int) int {
	k := bits.Len(uint(n))
	for {
		if v := int(r.uint32() >> (32 - k)); v < n {
			return v
		}
	}
}
