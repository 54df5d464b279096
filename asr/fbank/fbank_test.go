package fbank

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testSignal(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	pcm := make([]float32, n)
	for i := range pcm {
		ti := float64(i) / SampleRate
		pcm[i] = float32(0.3*math.Sin(2*math.Pi*(150+900*ti)*ti) + 0.02*rng.NormFloat64() + 0.01)
	}
	return pcm
}

func TestErrorsAndEdges(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name    string
		pcm     []float32
		frames  int
		wantErr error
	}{
		{"nil", nil, 0, nil},
		{"empty", []float32{}, 0, nil},
		{"one sample", []float32{0.5}, 0, nil},
		{"80 samples", make([]float32, 80), 1, nil},
		{"NaN", []float32{0, nan, 0}, 0, ErrNonFinite},
		{"+Inf", append(make([]float32, 500), inf), 0, ErrNonFinite},
		{"-Inf", []float32{-inf}, 0, ErrNonFinite},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(tc.pcm, XASR)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Nil(t, got)
				o := mustOnline(t, XASR)
				require.NoError(t, o.Accept(make([]float32, 1000)))
				before := o.Ready()
				require.ErrorIs(t, o.Accept(tc.pcm), tc.wantErr)
				assert.Equal(t, before, o.Ready(), "a bad chunk is dropped")
				assert.Equal(t, 1000, o.received)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got, tc.frames)
			o := mustOnline(t, XASR)
			require.NoError(t, o.Accept(tc.pcm))
			o.InputFinished()
			assert.Equal(t, tc.frames, o.Ready())
		})
	}
}

func TestNumFrames(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{-1, 0}, {0, 0}, {79, 0}, {80, 1}, {239, 1}, {240, 2}, {400, 3}, {16000, 100}, {16079, 100}, {16080, 101},
	} {
		assert.Equal(t, tc.want, NumFrames(tc.n), "n=%d", tc.n)
	}
}

func TestReflect(t *testing.T) {
	for _, tc := range []struct{ i, n, want int }{
		{0, 10, 0}, {9, 10, 9}, {-1, 10, 0}, {-2, 10, 1}, {-10, 10, 9}, {10, 10, 9}, {11, 10, 8}, {19, 10, 0},
		{-11, 10, 9}, // -11 -> 10 -> 9
		{-3, 1, 0}, {5, 1, 0},
		{-5, 3, 1}, // -5 -> 4 -> 1
	} {
		assert.Equal(t, tc.want, reflect(tc.i, tc.n), "reflect(%d, %d)", tc.i, tc.n)
	}
}

// naiveFbank is an independent, slow reference (direct DFT), also for
// inputs shorter than torchaudio's 400-sample minimum.
func naiveFbank(pcm []float32, lowHz, highHz float64) [][]float32 {
	n := len(pcm)
	out := make([][]float32, NumFrames(n))
	for t := range out {
		x := make([]float64, fftSize)
		for j := range FrameLength {
			k := t*FrameShift - (FrameLength-FrameShift)/2 + j
			for k < 0 || k >= n {
				if k < 0 {
					k = -k - 1
				} else {
					k = 2*n - 1 - k
				}
			}
			x[j] = float64(pcm[k])
		}
		var mean float64
		for j := range FrameLength {
			mean += x[j] / FrameLength
		}
		y := make([]float64, FrameLength)
		for j := range FrameLength {
			y[j] = x[j] - mean
		}
		for j := range FrameLength {
			prev := y[max(j-1, 0)]
			w := math.Pow(0.5-0.5*math.Cos(2*math.Pi*float64(j)/(FrameLength-1)), 0.85)
			x[j] = (y[j] - 0.97*prev) * w
		}
		power := make([]float64, fftSize/2+1)
		for k := range power {
			var s complex128
			for j := range FrameLength {
				s += complex(x[j], 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%fftSize)/fftSize))
			}
			power[k] = real(s)*real(s) + imag(s)*imag(s)
		}
		mel := func(f float64) float64 { return 1127 * math.Log(1+f/700) }
		lo, hi := mel(lowHz), mel(highHz)
		d := (hi - lo) / 81
		out[t] = make([]float32, NumBins)
		for m := range NumBins {
			l, c, r := lo+float64(m)*d, lo+float64(m+1)*d, lo+float64(m+2)*d
			var e float64
			for k := range fftSize / 2 {
				f := mel(float64(k) * SampleRate / fftSize)
				if f > l && f < r {
					if f <= c {
						e += power[k] * (f - l) / (c - l)
					} else {
						e += power[k] * (r - f) / (r - c)
					}
				}
			}
			out[t][m] = float32(math.Log(max(e, float64(math.Nextafter32(1, 2)-1))))
		}
	}
	return out
}

func TestMatchesNaiveReference(t *testing.T) {
	for _, r := range []struct {
		opts          Options
		lowHz, highHz float64
	}{
		{XASR, 20, 7600},
		{Options{LowFreq: 20, HighFreq: 0}, 20, 8000},
		{Options{LowFreq: 0, HighFreq: 8000}, 0, 8000},
		{Options{LowFreq: 100, HighFreq: 4000}, 100, 4000},
	} {
		for _, n := range []int{80, 100, 150, 279, 300, 399, 400, 401, 1000, 2345} {
			pcm := testSignal(n, uint64(n)+1000)
			got, err := Compute(pcm, r.opts)
			require.NoError(t, err)
			want := naiveFbank(pcm, r.lowHz, r.highHz)
			require.Len(t, got, len(want))
			worst := 0.0
			for i := range want {
				for m := range want[i] {
					worst = max(worst, math.Abs(float64(got[i][m]-want[i][m])))
				}
			}
			// The package computes in float32, the reference in float64.
			assert.LessOrEqual(t, worst, 1e-3, "%+v n=%d", r.opts, n)
		}
	}
}

// TestOptionsRange: the range checks of Kaldi's MelBanks (and torchaudio's
// get_mel_banks), where a non-positive high_freq counts back from Nyquist.
func TestOptionsRange(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		ok   bool
	}{
		{XASR, true},
		{Options{LowFreq: 20, HighFreq: 0}, true},
		{Options{LowFreq: 0, HighFreq: 8000}, true},
		{Options{LowFreq: 20, HighFreq: 8001}, false},
		{Options{LowFreq: -1, HighFreq: 0}, false},
		{Options{LowFreq: 8000, HighFreq: 0}, false},
		{Options{LowFreq: 4000, HighFreq: -4000}, false},
		{Options{LowFreq: 20, HighFreq: -8000}, false},
		{Options{LowFreq: math.NaN(), HighFreq: 0}, false},
	} {
		_, err := NewOnline(tc.opts)
		if tc.ok {
			assert.NoError(t, err, "%+v", tc.opts)
		} else {
			assert.ErrorContains(t, err, "mel range", "%+v", tc.opts)
		}
		_, err = Compute(make([]float32, 400), tc.opts)
		assert.Equal(t, tc.ok, err == nil, "%+v", tc.opts)
	}
}

func TestTables(t *testing.T) {
	tb, err := getTables(XASR)
	require.NoError(t, err)
	require.Len(t, tb.window, FrameLength)
	assert.Zero(t, tb.window[0])
	assert.InDelta(t, 0, tb.window[FrameLength-1], 1e-12)
	assert.InDelta(t, 1, tb.window[FrameLength/2], 1e-4)
	require.Len(t, tb.mel, NumBins)
	prevLo := -1
	for m, w := range tb.mel {
		require.NotEmpty(t, w, "bin %d", m)
		assert.GreaterOrEqual(t, tb.melLo[m], prevLo, "bins ascend")
		assert.Less(t, tb.melLo[m]+len(w), numFFTBins, "Nyquist bin has weight 0")
		for _, v := range w {
			assert.True(t, v > 0 && v <= 1, "bin %d weight %g", m, v)
		}
		prevLo = tb.melLo[m]
	}
	assert.Positive(t, tb.melLo[0], "nothing below 20 Hz")
	const binHz = float64(SampleRate) / fftSize
	top := len(tb.mel) - 1
	assert.Less(t, float64(tb.melLo[top]+len(tb.mel[top])-1)*binHz, 7600.0, "nothing above 7600 Hz")
	assert.Greater(t, float64(tb.melLo[top]+len(tb.mel[top])-1)*binHz, 7500.0, "the top filter reaches close to 7600 Hz")
	again, err := getTables(XASR)
	require.NoError(t, err)
	assert.Same(t, tb, again, "one set of tables per range")
}

func TestConcurrentCompute(t *testing.T) {
	pcm := testSignal(SampleRate, 9)
	want, err := Compute(pcm, XASR)
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([][][]float32, 4)
	for g := range results {
		wg.Go(func() {
			results[g], _ = Compute(pcm, XASR)
		})
	}
	wg.Wait()
	for _, r := range results {
		requireSameFrames(t, want, r)
	}
}

// BenchmarkFbank streams 10 s of audio through Online in 10 ms chunks,
// discarding old frames as a recognizer would; rtf = compute time / 10 s.
func BenchmarkFbank(b *testing.B) {
	pcm := testSignal(10*SampleRate, 1)
	o := mustOnline(b, XASR)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		o.Reset()
		for i := 0; i < len(pcm); i += FrameShift {
			require.NoError(b, o.Accept(pcm[i:min(i+FrameShift, len(pcm))]))
			o.Discard(o.Ready() - 32)
		}
		o.InputFinished()
	}
	elapsed := time.Since(start)
	rtf := elapsed.Seconds() / float64(b.N) / (float64(len(pcm)) / SampleRate)
	b.ReportMetric(rtf, "rtf")
}

// TestLogfIsGlibcs: logf gives glibc's logf, not the correctly rounded
// log: these are inputs where the two differ, with glibc 2.36's results
// (Debian 12, x86-64 with FMA, the build kaldi-native-fbank calls in
// sherpa-onnx), taken from 1e6 random floats of which 1145 differ. The
// port agreed on all 1e6.
func TestLogfIsGlibcs(t *testing.T) {
	for _, c := range [][2]uint32{
		{0x3fca02c6, 0x3ee99efc}, {0x3f74cd22, 0xbd37376b}, {0x40208c9c, 0x3f6b729f}, {0x3f80a561, 0x3ba4f686},
		{0x40929516, 0x3fc2cc08}, {0x38b4c039, 0xc115be59}, {0x3f81efc9, 0x3c760935}, {0x3f8839c1, 0x3d7f1b7f},
		{0x4020aef7, 0x3f6ba961}, {0x3fe8e7b5, 0x3f193de8}, {0x3f71f1a8, 0xbd674e6c}, {0x3f7c38dd, 0xbc739603},
		{0x3fc9ec62, 0x3ee96639}, {0x3f942a30, 0x3e15ce52}, {0x3e1ba206, 0xbff125fd}, {0x3f79ddd5, 0xbcc6a913},
	} {
		x, want := math.Float32frombits(c[0]), math.Float32frombits(c[1])
		require.NotEqual(t, want, float32(math.Log(float64(x))), "%g: a case where glibc is not correctly rounded", x)
		assert.Equal(t, want, logf(x), "logf(%g)", x)
	}
	assert.Equal(t, float32(0), logf(1))
	assert.Equal(t, float32(math.Log(fltEpsilon)), logf(fltEpsilon), "the floor")
}
