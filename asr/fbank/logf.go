package fbank

import "math"

// logf is glibc's single-precision log (sysdeps/ieee754/flt-32/e_logf.c,
// from ARM-software/optimized-routines math/logf.c and logf_data.c), with
// the fused multiply-adds the FMA build glibc picks on x86-64 CPUs that
// have them (and every arm64 build) computes: kaldi-native-fbank takes
// std::log of float energies (feature-fbank.cc:98-104) and of mel
// frequencies (mel-computations.h MelScale), and glibc's result is not
// always the correctly rounded one float32(math.Log(x)) gives (0.82 ULP
// at worst), so the two differ in the last bit of a few values in a
// hundred.
//
// x must be positive, normal and finite: the callers clamp energies at
// FLT_EPSILON first.
func logf(x float32) float32 {
	const (
		tableBits = 4
		off       = 0x3f330000
		ln2       = 0x1.62e42fefa39efp-1
		a0        = -0x1.00ea348b88334p-2
		a1        = 0x1.5575b0be00b6ap-2
		a2        = -0x1.ffffef20a4123p-2
	)
	ix := math.Float32bits(x)
	if ix == 0x3f800000 {
		return 0
	}
	tmp := ix - off
	i := (tmp >> (23 - tableBits)) % (1 << tableBits)
	k := int32(tmp) >> 23
	iz := ix - (tmp & 0xff800000)
	c := logfTable[i]
	z := float64(math.Float32frombits(iz))
	r := math.FMA(z, c.invc, -1)
	y0 := math.FMA(float64(k), ln2, c.logc)
	r2 := r * r
	y := math.FMA(a1, r, a2)
	y = math.FMA(a0, r2, y)
	y = math.FMA(y, r2, y0+r)
	return float32(y)
}

// logfTable is __logf_data.tab: 1/c and log(c) for c near the centre of
// each of 16 subintervals of [0x3f330000, 2·0x3f330000].
var logfTable = [16]struct{ invc, logc float64 }{
	{0x1.661ec79f8f3bep+0, -0x1.57bf7808caadep-2},
	{0x1.571ed4aaf883dp+0, -0x1.2bef0a7c06ddbp-2},
	{0x1.49539f0f010bp+0, -0x1.01eae7f513a67p-2},
	{0x1.3c995b0b80385p+0, -0x1.b31d8a68224e9p-3},
	{0x1.30d190c8864a5p+0, -0x1.6574f0ac07758p-3},
	{0x1.25e227b0b8eap+0, -0x1.1aa2bc79c81p-3},
	{0x1.1bb4a4a1a343fp+0, -0x1.a4e76ce8c0e5ep-4},
	{0x1.12358f08ae5bap+0, -0x1.1973c5a611cccp-4},
	{0x1.0953f419900a7p+0, -0x1.252f438e10c1ep-5},
	{0x1p+0, 0x0p+0},
	{0x1.e608cfd9a47acp-1, 0x1.aa5aa5df25984p-5},
	{0x1.ca4b31f026aap-1, 0x1.c5e53aa362eb4p-4},
	{0x1.b2036576afce6p-1, 0x1.526e57720db08p-3},
	{0x1.9c2d163a1aa2dp-1, 0x1.bc2860d22477p-3},
	{0x1.886e6037841edp-1, 0x1.1058bc8a07ee1p-2},
	{0x1.767dcf5534862p-1, 0x1.4043057b6ee09p-2},
}
