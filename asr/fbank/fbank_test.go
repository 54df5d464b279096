package fbank

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// ---- fixtures (scripts/models/fbank_golden.py) ----

type goldenCase struct {
	Name            string             `json:"name"`
	Input           string             `json:"input"`
	Offset          int                `json:"offset"`
	Samples         int                `json:"samples"`
	Frames          int                `json:"frames"`
	InputSum        float64            `json:"input_sum"`
	InputSumSquares float64            `json:"input_sum_squares"`
	Options         map[string]float64 `json:"options"`
	File            string             `json:"file"`
	FileF64         string             `json:"file_f64"`
}

type goldenIndex struct {
	Options map[string]any `json:"options"`
	Cases   []goldenCase   `json:"cases"`
}

func readGoldenIndex(t testing.TB) goldenIndex {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fbank_golden.json"))
	require.NoError(t, err, "regenerate with /usr/bin/python3 scripts/models/fbank_golden.py")
	var idx goldenIndex
	require.NoError(t, json.Unmarshal(raw, &idx))
	require.NotEmpty(t, idx.Cases)
	return idx
}

// readWav16 reads a mono 16-bit PCM RIFF/WAVE file as samples / 32768.
func readWav16(t testing.TB, name string) []float32 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.True(t, len(raw) >= 12 && string(raw[:4]) == "RIFF" && string(raw[8:12]) == "WAVE", "not a WAVE file")
	var pcm []float32
	fmtSeen := false
	for p := 12; p+8 <= len(raw); {
		id, size := string(raw[p:p+4]), int(binary.LittleEndian.Uint32(raw[p+4:p+8]))
		body := raw[p+8 : min(len(raw), p+8+size)]
		switch id {
		case "fmt ":
			require.GreaterOrEqual(t, len(body), 16)
			require.EqualValues(t, 1, binary.LittleEndian.Uint16(body[0:2]), "PCM")
			require.EqualValues(t, 1, binary.LittleEndian.Uint16(body[2:4]), "mono")
			require.EqualValues(t, SampleRate, binary.LittleEndian.Uint32(body[4:8]), "rate")
			require.EqualValues(t, 16, binary.LittleEndian.Uint16(body[14:16]), "bits")
			fmtSeen = true
		case "data":
			pcm = make([]float32, len(body)/2)
			for i := range pcm {
				pcm[i] = float32(int16(binary.LittleEndian.Uint16(body[2*i:]))) / 32768
			}
		}
		p += 8 + size + size&1
	}
	require.True(t, fmtSeen)
	require.NotNil(t, pcm, "no data chunk")
	return pcm
}

func goldenInput(t testing.TB, c goldenCase) []float32 {
	t.Helper()
	var pcm []float32
	switch {
	case c.Input == "":
		pcm = make([]float32, c.Offset+c.Samples) // silence
	case filepath.Ext(c.Input) == ".wav":
		pcm = readWav16(t, c.Input)
	default:
		data := testenv.Gunzip(t, filepath.Join("testdata", c.Input))
		pcm = make([]float32, len(data)/4)
		require.NoError(t, binary.Read(bytes.NewReader(data), binary.LittleEndian, pcm))
	}
	require.GreaterOrEqual(t, len(pcm), c.Offset+c.Samples)
	pcm = pcm[c.Offset : c.Offset+c.Samples]
	var sum, ss float64
	for _, v := range pcm {
		sum += float64(v)
		ss += float64(v) * float64(v)
	}
	require.InDelta(t, c.InputSum, sum, 1e-9*float64(len(pcm)+1), "input drifted from the script's")
	require.InDelta(t, c.InputSumSquares, ss, 1e-9*float64(len(pcm)+1), "input drifted from the script's")
	return pcm
}

func maxDiff(t testing.TB, got [][]float32, want []float32) (worst float64, frame, bin int) {
	t.Helper()
	require.Len(t, want, len(got)*NumBins)
	for i, f := range got {
		require.Len(t, f, NumBins)
		for m, v := range f {
			if d := math.Abs(float64(v) - float64(want[i*NumBins+m])); d > worst || math.IsNaN(d) {
				worst, frame, bin = d, i, m
			}
		}
	}
	return worst, frame, bin
}

// caseOptions is the golden case's mel range: XASR unless the case
// overrides it.
func caseOptions(t testing.TB, c goldenCase) Options {
	t.Helper()
	opts := XASR
	for k, v := range c.Options {
		switch k {
		case "low_freq":
			opts.LowFreq = v
		case "high_freq":
			opts.HighFreq = v
		default:
			require.Failf(t, "fixture overrides an option this package does not take", "%s", k)
		}
	}
	return opts
}

func TestGoldenTorchaudio(t *testing.T) {
	idx := readGoldenIndex(t)
	// The fixture must have been made with the options this package
	// implements, and with X-ASR's mel range by default: the one
	// Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:410-417
	// gives kaldifeat (high_freq -400; kaldifeat's low_freq default 20) and
	// k2-fsa/sherpa-onnx sherpa-onnx/csrc/features.h:28,38 defaults to.
	for k, v := range map[string]any{
		"sample_frequency": 16000.0, "frame_length": 25.0, "frame_shift": 10.0, "window_type": "povey",
		"dither": 0.0, "snip_edges": false, "preemphasis_coefficient": 0.97, "remove_dc_offset": true,
		"round_to_power_of_two": true, "num_mel_bins": float64(NumBins), "low_freq": XASR.LowFreq, "high_freq": XASR.HighFreq,
		"use_energy": false, "use_log_fbank": true, "use_power": true, "vtln_warp": 1.0, "subtract_mean": false,
	} {
		assert.Equal(t, v, idx.Options[k], "fixture option %s", k)
	}
	// Against torchaudio in float32 (its default): up to ~4e-4 in bins
	// whose energy is near the floor, from float32 rounding in torch (the
	// mel weights, the FFT). Against torchaudio run in float64, which is
	// what this package computes: float32 output rounding only.
	const tol, tolF64 = 1e-2, 1e-5
	for _, c := range idx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			pcm := goldenInput(t, c)
			want := testenv.Float32Gz(t, filepath.Join("testdata", c.File))
			require.Equal(t, c.Frames, NumFrames(len(pcm)))

			opts := caseOptions(t, c)
			got, err := Compute(pcm, opts)
			require.NoError(t, err)
			require.Len(t, got, c.Frames)
			worst, fr, bin := maxDiff(t, got, want)
			t.Logf("%s: %d samples, %d frames, max |Go - torchaudio| = %.3g (frame %d, bin %d: %g vs %g)",
				c.Name, len(pcm), len(got), worst, fr, bin, got[fr][bin], want[fr*NumBins+bin])
			assert.LessOrEqual(t, worst, tol)

			worst64, fr, bin := maxDiff(t, got, testenv.Float32Gz(t, filepath.Join("testdata", c.FileF64)))
			t.Logf("%s: max |Go - torchaudio float64| = %.3g (frame %d, bin %d)", c.Name, worst64, fr, bin)
			assert.LessOrEqual(t, worst64, tolF64)

			// The streaming path gives the same frames, bit for bit.
			rng := rand.New(rand.NewPCG(uint64(len(pcm)), 7))
			on := streamAll(t, opts, pcm, func() int { return 1 + rng.IntN(3000) })
			requireSameFrames(t, got, on)

			if c.Name == "silence" {
				floor := float32(math.Log(fltEpsilon))
				for _, f := range got {
					for _, v := range f {
						require.Equal(t, floor, v)
					}
				}
				for _, v := range want {
					require.Equal(t, floor, v, "torchaudio's floor is log(FLT_EPSILON) too")
				}
			}
		})
	}
}

// ---- streaming ----

// streamAll feeds pcm to a fresh Online in chunks of next() samples,
// checking after every Accept that exactly the frames whose samples have
// all arrived are ready and that little audio is buffered, and returns all
// frames after InputFinished.
func streamAll(t testing.TB, opts Options, pcm []float32, next func() int) [][]float32 {
	t.Helper()
	o, err := NewOnline(opts)
	require.NoError(t, err)
	return streamInto(t, o, pcm, next)
}

func mustOnline(t testing.TB, opts Options) *Online {
	t.Helper()
	o, err := NewOnline(opts)
	require.NoError(t, err)
	return o
}

func streamInto(t testing.TB, o *Online, pcm []float32, next func() int) [][]float32 {
	t.Helper()
	for fed := 0; fed < len(pcm); {
		n := min(next(), len(pcm)-fed)
		require.NoError(t, o.Accept(pcm[fed:fed+n]))
		fed += n
		require.Equal(t, readyBeforeEnd(fed), o.Ready(), "after %d samples", fed)
		require.Less(t, len(o.buf), FrameLength, "buffered samples after %d", fed)
	}
	o.InputFinished()
	require.Equal(t, NumFrames(len(pcm)), o.Ready())
	out := make([][]float32, o.Ready())
	for i := range out {
		out[i] = o.Frame(i)
	}
	return out
}

// readyBeforeEnd is the number of frames computable from n samples
// without knowing where the audio ends: frame t needs samples up to
// t*160 + 279.
func readyBeforeEnd(n int) int {
	if n < FrameLength-frameOffset {
		return 0
	}
	return (n-(FrameLength-frameOffset))/FrameShift + 1
}

func requireSameFrames(t testing.TB, want, got [][]float32) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		for m := range want[i] {
			if math.Float32bits(want[i][m]) != math.Float32bits(got[i][m]) {
				require.Failf(t, "streaming differs from offline", "frame %d bin %d: %g vs %g", i, m, got[i][m], want[i][m])
			}
		}
	}
}

func testSignal(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	pcm := make([]float32, n)
	for i := range pcm {
		ti := float64(i) / SampleRate
		pcm[i] = float32(0.3*math.Sin(2*math.Pi*(150+900*ti)*ti) + 0.02*rng.NormFloat64() + 0.01)
	}
	return pcm
}

func TestOnlineMatchesCompute(t *testing.T) {
	lengths := []int{0, 1, 2, 79, 80, 81, 119, 120, 121, 199, 200, 239, 240, 279, 280, 281, 399, 400, 401,
		439, 440, 441, 559, 560, 1234, 4000, 16037, 48000}
	chunkings := []struct {
		name string
		next func(rng *rand.Rand) int
	}{
		{"1", func(*rand.Rand) int { return 1 }},
		{"160", func(*rand.Rand) int { return 160 }},
		{"161", func(*rand.Rand) int { return 161 }},
		{"random 1..3000", func(rng *rand.Rand) int { return 1 + rng.IntN(3000) }},
		{"random 1..50", func(rng *rand.Rand) int { return 1 + rng.IntN(50) }},
		{"whole", func(*rand.Rand) int { return math.MaxInt32 }},
	}
	for _, n := range lengths {
		pcm := testSignal(n, uint64(n))
		want, err := Compute(pcm, XASR)
		require.NoError(t, err)
		require.Len(t, want, NumFrames(n))
		for _, ch := range chunkings {
			if ch.name == "1" && n > 5000 {
				continue // slow under -race, covered by the others
			}
			rng := rand.New(rand.NewPCG(uint64(n), 99))
			got := streamAll(t, XASR, pcm, func() int { return ch.next(rng) })
			requireSameFrames(t, want, got)
		}
	}
}

func TestOnlineRandomChunksManySeeds(t *testing.T) {
	pcm := testSignal(3*SampleRate+123, 5)
	want, err := Compute(pcm, XASR)
	require.NoError(t, err)
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		got := streamAll(t, XASR, pcm, func() int { return 1 + rng.IntN(3000) })
		requireSameFrames(t, want, got)
	}
}

func TestOnlineDiscardAndReset(t *testing.T) {
	pcm := testSignal(2*SampleRate+77, 11)
	want, err := Compute(pcm, XASR)
	require.NoError(t, err)

	o := mustOnline(t, XASR)
	rng := rand.New(rand.NewPCG(1, 2))
	var got [][]float32
	for fed := 0; fed < len(pcm); {
		n := min(1+rng.IntN(700), len(pcm)-fed)
		require.NoError(t, o.Accept(pcm[fed:fed+n]))
		fed += n
		// Read every ready frame (some more than once, like the recognizer's
		// overlapping windows) and keep only the last 13.
		for i := o.Discarded(); i < o.Ready(); i++ {
			f := o.Frame(i)
			if i == len(got) {
				got = append(got, append([]float32(nil), f...))
			}
			require.Equal(t, got[i], f)
		}
		o.Discard(o.Ready() - 13)
		require.LessOrEqual(t, len(o.frames), 13)
	}
	o.InputFinished()
	for i := o.Discarded(); i < o.Ready(); i++ {
		if i == len(got) {
			got = append(got, o.Frame(i))
		}
	}
	requireSameFrames(t, want, got)
	first := o.Discarded()
	require.Positive(t, first)
	assert.Panics(t, func() { o.Frame(first - 1) })
	assert.Panics(t, func() { o.Frame(o.Ready()) })
	o.Discard(first - 5) // going back is a no-op
	assert.Equal(t, first, o.Discarded())
	o.Discard(1 << 30) // clamped
	assert.Equal(t, o.Ready(), o.Discarded())

	require.ErrorIs(t, o.Accept(pcm[:10]), ErrFinished)
	assert.True(t, o.InputDone())

	// A reset stream starts over, numbering from 0, with the same results.
	o.Reset()
	assert.Zero(t, o.Ready())
	assert.Zero(t, o.Discarded())
	assert.False(t, o.InputDone())
	again := streamInto(t, o, pcm, func() int { return 160 })
	requireSameFrames(t, want, again)
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

// ---- an independent, slow reference (direct DFT), also for inputs shorter
// than torchaudio's 400-sample minimum ----

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
			assert.LessOrEqual(t, worst, 1e-4, "%+v n=%d", r.opts, n)
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

// ---- benchmark ----

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
