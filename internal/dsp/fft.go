package dsp

import "math"

// FFT is a mixed-radix (2, 4, 5) Stockham autosort complex FFT,
// forward (exp(-2πi jk/n)), unscaled. Stage s splits the current length n
// into p sub-sequences of length m = n/p (decimation in frequency):
//
//	y[q + s(p·i + k)] = w_n^(i·k) · Σ_r x[q + s(i + r·m)] · w_p^(r·k)
//
// for i < m, k < p and the s interleaved sequences q < s; the next stage
// transforms the m-point sequences at stride s·p. Output is in natural
// order, with no bit reversal.
type FFT struct {
	n      int
	stages []fftStage
}

type fftStage struct {
	p, m, s int
	tw      []complex128 // tw[i*(p-1)+k-1] = w_n^(i·k), k = 1..p-1
}

// NewFFT plans an n-point transform. n is a constant of the caller's
// feature definition; one that does not factor into 2, 4 and 5 is a
// programming error, and panics.
func NewFFT(n int) *FFT {
	var radices []int
	for r := n; r > 1; {
		switch {
		case r%4 == 0:
			radices = append(radices, 4)
			r /= 4
		case r%5 == 0:
			radices = append(radices, 5)
			r /= 5
		case r%2 == 0:
			radices = append(radices, 2)
			r /= 2
		default:
			panic("dsp: FFT length must factor into 2, 4 and 5")
		}
	}
	plan := &FFT{n: n}
	length, stride := n, 1
	for _, p := range radices {
		m := length / p
		st := fftStage{p: p, m: m, s: stride, tw: make([]complex128, m*(p-1))}
		for i := range m {
			for k := 1; k < p; k++ {
				s, c := math.Sincos(-2 * math.Pi * float64(i*k) / float64(length))
				st.tw[i*(p-1)+k-1] = complex(c, s)
			}
		}
		plan.stages = append(plan.stages, st)
		length, stride = m, stride*p
	}
	return plan
}

// Transform computes the FFT of x using work (both of length n) as
// scratch and returns the slice holding the result (x or work).
func (p *FFT) Transform(x, work []complex128) []complex128 {
	x, work = x[:p.n], work[:p.n]
	for _, st := range p.stages {
		switch st.p {
		case 2:
			radix2(st, x, work)
		case 4:
			radix4(st, x, work)
		case 5:
			radix5(st, x, work)
		}
		x, work = work, x
	}
	return x
}

func radix2(st fftStage, x, y []complex128) {
	m, s := st.m, st.s
	for i := range m {
		w := st.tw[i]
		for q := range s {
			a, b := x[q+s*i], x[q+s*(i+m)]
			o := q + s*2*i
			y[o] = a + b
			y[o+s] = (a - b) * w
		}
	}
}

// scale returns c·v for a real c (a complex product would cost twice).
func scale(c float64, v complex128) complex128 { return complex(c*real(v), c*imag(v)) }

// mulNegI returns -i·v.
func mulNegI(v complex128) complex128 { return complex(imag(v), -real(v)) }

func radix4(st fftStage, x, y []complex128) {
	m, s := st.m, st.s
	for i := range m {
		tw := st.tw[i*3 : i*3+3]
		w1, w2, w3 := tw[0], tw[1], tw[2]
		for q := range s {
			in := q + s*i
			a0, a1, a2, a3 := x[in], x[in+s*m], x[in+2*s*m], x[in+3*s*m]
			t0, t1 := a0+a2, a0-a2
			t2, t3 := a1+a3, mulNegI(a1-a3)
			o := q + s*4*i
			y[o] = t0 + t2
			y[o+s] = (t1 + t3) * w1
			y[o+2*s] = (t0 - t2) * w2
			y[o+3*s] = (t1 - t3) * w3
		}
	}
}

var (
	c5a = math.Cos(2 * math.Pi / 5)
	c5b = math.Cos(4 * math.Pi / 5)
	s5a = math.Sin(2 * math.Pi / 5)
	s5b = math.Sin(4 * math.Pi / 5)
)

func radix5(st fftStage, x, y []complex128) {
	m, s := st.m, st.s
	c1, c2, s1, s2 := c5a, c5b, s5a, s5b
	for i := range m {
		tw := st.tw[i*4 : i*4+4]
		w1, w2, w3, w4 := tw[0], tw[1], tw[2], tw[3]
		for q := range s {
			in := q + s*i
			a0, a1, a2, a3, a4 := x[in], x[in+s*m], x[in+2*s*m], x[in+3*s*m], x[in+4*s*m]
			t1, t2 := a1+a4, a2+a3
			t3, t4 := a1-a4, a2-a3
			r1 := a0 + scale(c1, t1) + scale(c2, t2)
			r2 := a0 + scale(c2, t1) + scale(c1, t2)
			// i1 = -i(s1 t3 + s2 t4), i2 = -i(s2 t3 - s1 t4)
			i1 := mulNegI(scale(s1, t3) + scale(s2, t4))
			i2 := mulNegI(scale(s2, t3) - scale(s1, t4))
			o := q + s*5*i
			y[o] = a0 + t1 + t2
			y[o+s] = (r1 + i1) * w1
			y[o+2*s] = (r2 + i2) * w2
			y[o+3*s] = (r2 - i2) * w3
			y[o+4*s] = (r1 - i1) * w4
		}
	}
}
