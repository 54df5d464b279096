package fbank

import "math"

// The FFT kaldi-native-fbank computes with, reproduced operation for
// operation in float32 so the spectrum is the reference's to the bit:
// kaldi-native-fbank (v1.22.3 in sherpa-onnx 1.13) calls kissfft's real
// transform once per frame (kaldi-native-fbank/csrc/rfft.cc:61-77),
// kissfft at febd4caeed32e33ad8b2e0bb5ea77542c40f18ec with
// kiss_fft_scalar float. A mathematically equal FFT in another order (the
// float64 one this package used before) moves near-floor mel bins by up to
// 1e-3, enough to flip tokens of a 4-bit encoder.
//
// kissfft's CMakeLists.txt:98-101 builds it with -ffast-math, so the
// compiler may reassociate its sums, and it does: in sherpa-onnx 1.13.8's
// linux-x64 library (gcc 10.2.1, LTO) the real parts of the complex
// products are never formed; their two terms are added to and subtracted
// from the other operand one at a time (kf_work.constprop.0 at 0x32beb0,
// kf_work.constprop.1 at 0x327512 and kiss_fftr at 0x2721b0 in
// libsherpa-onnx-c-api.so, read with objdump). bfly4 and transform follow
// that code, not the C source, where the two differ; the source's order
// gives different bits.
//
// Every product is rounded to float32 on its own (the explicit
// conversions): Go may fuse x*y+z into one rounding on arm64, and the
// reference, built for x86-64 without FMA, never does.

// cpx is kiss_fft_cpx.
type cpx struct{ r, i float32 }

// cmul is kissfft's C_MUL (_kiss_fft_guts.h, float case).
func cmul(a, b cpx) cpx {
	return cpx{float32(a.r*b.r) - float32(a.i*b.i), float32(a.r*b.i) + float32(a.i*b.r)}
}

// kissReal is kiss_fftr_alloc(n, 0) for n = 2·half: a half-point complex
// FFT of the samples packed in pairs (factors and twiddles as kiss_fft_alloc
// makes them, kiss_fft.c:337-368), then the split into the real spectrum
// with super twiddles (kiss_fftr.c:53-59). Read-only once made.
//
// kf_work's recursion (kiss_fft.c:236-300) is unrolled: the leaves' copies
// become one gather (order), and each level's butterflies run over all its
// blocks at once, with the twiddles each level reads laid out in a row.
// Every butterfly sees the values it sees in the recursion.
type kissReal struct {
	half   int
	order  []int       // the input pair each leaf copies
	stages []kissStage // deepest level first
	super  []cpx       // exp(-iπ((k+1)/half + 1/2)), k < half/2
}

// kissStage is one level of kf_work: butterflies over blocks of 4m values
// with twiddles tw[j·stride], tw[2j·stride], tw[3j·stride], j < m, stored
// as tw[3j], tw[3j+1], tw[3j+2].
type kissStage struct {
	m  int
	tw []cpx
}

func newKissReal(n int) *kissReal {
	half := n / 2
	k := &kissReal{half: half, order: make([]int, half), super: make([]cpx, half/2)}
	tw := make([]cpx, half)
	for i := range tw {
		tw[i] = cexp(-2 * math.Pi * float64(i) / float64(half))
	}
	for i := range k.super {
		k.super[i] = cexp(-3.14159265358979323846264338327 * (float64(i+1)/float64(half) + .5))
	}
	// kf_factor (kiss_fft.c:307-328): powers of 4 first, then 2, then odd
	// primes. The frames here are 512 samples, 256 = 4^4, so only the
	// radix-4 butterfly is needed.
	var ms []int
	for rest := half; rest > 1; {
		if rest%4 != 0 {
			panic("fbank: kissfft port only has the radix-4 butterfly")
		}
		rest /= 4
		ms = append(ms, rest)
	}
	leafOrder(k.order, 0, 1, ms)
	for d := len(ms) - 1; d >= 0; d-- {
		stride, m := half/(4*ms[d]), ms[d]
		st := kissStage{m: m, tw: make([]cpx, 0, 3*m)}
		for j := range m {
			st.tw = append(st.tw, tw[j*stride], tw[2*j*stride], tw[3*j*stride])
		}
		k.stages = append(k.stages, st)
	}
	return k
}

// leafOrder records which input each output of kf_work's leaves copies:
// the recursion into p = 4 sub-transforms of the input decimated by 4.
func leafOrder(out []int, in, stride int, ms []int) {
	m := ms[0]
	if m == 1 {
		for j := range 4 {
			out[j] = in + j*stride
		}
		return
	}
	for q := range 4 {
		leafOrder(out[q*m:], in+q*stride, stride*4, ms[1:])
	}
}

// cexp is kf_cexp: cos and sin in double, rounded to float.
func cexp(phase float64) cpx {
	return cpx{float32(math.Cos(phase)), float32(math.Sin(phase))}
}

// transform is kiss_fftr (kiss_fftr.c:63-117) on the n real samples in x,
// writing the spectrum X[0..half] to out (len half+1).
func (k *kissReal) transform(x []float32, out []cpx) {
	tmp := out[:k.half]
	for i, j := range k.order {
		tmp[i] = cpx{x[2*j], x[2*j+1]}
	}
	for _, st := range k.stages {
		for b := 0; b < k.half; b += 4 * st.m {
			st.bfly4(tmp[b : b+4*st.m])
		}
	}

	n := k.half
	tdc := tmp[0]
	out[0], out[n] = cpx{tdc.r + tdc.i, 0}, cpx{tdc.r - tdc.i, 0}
	// out aliases tmp: bins k and n-k are read before either is written,
	// as the loop pairs them (kiss_fftr writes a separate freqdata).
	for j := 1; j <= n/2; j++ {
		a, b := tmp[n-j], tmp[j]
		s := k.super[j-1]
		f1r, f1i := a.r+b.r, b.i-a.i // fpk + conj(fpnk)
		f2r, f2i := b.r-a.r, a.i+b.i // fpk - conj(fpnk)
		p1, p2 := float32(f2r*s.r), float32(f2i*s.i)
		twi := float32(f2r*s.i) + float32(f2i*s.r)
		out[j] = cpx{(f1r + p1 - p2) * .5, (f1i + twi) * .5}
		out[n-j] = cpx{(f1r + p2 - p1) * .5, (a.i - b.i + twi) * .5}
	}
}

// bfly4 is kf_bfly4 for a forward transform (kiss_fft.c:38-84) as the
// reference binary computes it: s1 = F2·tw2 and s2 = F3·tw3 keep their
// real parts as two products each (rr, ii), added in one at a time.
func (st kissStage) bfly4(f []cpx) {
	m := st.m
	f0, f1, f2, f3 := f[:m], f[m:2*m], f[2*m:3*m], f[3*m:4*m]
	tw := st.tw[:3*m]
	for j := range m {
		w1, w2, w3 := tw[3*j], tw[3*j+1], tw[3*j+2]
		s0 := cmul(f1[j], w1)
		a, c, d := f0[j], f2[j], f3[j]
		s1rr, s1ii := float32(c.r*w2.r), float32(c.i*w2.i)
		s1i := float32(c.r*w2.i) + float32(c.i*w2.r)
		s2rr, s2ii := float32(d.r*w3.r), float32(d.i*w3.i)
		s2i := float32(d.r*w3.i) + float32(d.i*w3.r)

		f0r, f0i := a.r+s1rr-s1ii, a.i+s1i // F0 + s1
		s5r, s5i := a.r+s1ii-s1rr, a.i-s1i // F0 - s1
		s3r, s3i := s0.r-s2ii+s2rr, s0.i+s2i
		s4r := s0.r - s2rr + s2ii
		f2[j] = cpx{f0r - s3r, f0i - s3i}
		f0[j] = cpx{f0r + s3r, f0i + s3i}
		f1[j] = cpx{s5r + s0.i - s2i, s5i - s4r}
		f3[j] = cpx{s5r + s2i - s0.i, s5i + s4r}
	}
}
