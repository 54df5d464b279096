package audio

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sine returns frames of a sine at freq Hz, duplicated on every channel.
// The phase offset keeps a tone at exactly Nyquist from being sampled only
// at its zero crossings.
func sine(freq, amp float64, rate, channels, frames int) []float32 {
	out := make([]float32, 0, frames*channels)
	for i := range frames {
		v := float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)+1))
		for range channels {
			out = append(out, v)
		}
	}
	return out
}

// rms of x, skipping edge samples at both ends where the filter sees the
// silence outside the signal.
func rms(x []float32, edge int) float64 {
	x = x[edge : len(x)-edge]
	s := 0.0
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func db(ratio float64) float64 { return 20 * math.Log10(ratio) }

// toneAmplitude measures the amplitude of the component at freq with a
// Hann-windowed single-bin DFT; the window's fast sidelobe decay keeps a
// strong tone elsewhere in the spectrum from leaking into the bin.
func toneAmplitude(x []float32, freq float64, rate int) float64 {
	var re, im, wsum float64
	n := len(x)
	for i, v := range x {
		w := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1))
		s, c := math.Sincos(2 * math.Pi * freq * float64(i) / float64(rate))
		re += w * float64(v) * c
		im -= w * float64(v) * s
		wsum += w
	}
	return 2 * math.Hypot(re, im) / wsum
}

func TestResamplePassband(t *testing.T) {
	for _, from := range []int{48000, 44100, 24000, 22050} {
		for _, freq := range []float64{100, 1000, 3000, 6000} {
			t.Run(fmt.Sprintf("%d-%gHz", from, freq), func(t *testing.T) {
				in := sine(freq, 0.5, from, 1, from/2)
				out, err := Resample(in, from, ProcessingRate, 1)
				require.NoError(t, err)
				gain := db(rms(out, 400) / rms(in, 400*from/ProcessingRate))
				assert.InDelta(t, 0, gain, 0.5, "passband gain %.3f dB", gain)
			})
		}
	}
}

func TestResampleAliasRejection(t *testing.T) {
	tests := []struct {
		from int
		freq float64
	}{
		{48000, 8000}, // exactly the output Nyquist
		{48000, 8500},
		{48000, 12000},
		{48000, 20000},
		{48000, 23900},
		{44100, 8000},
		{44100, 12000},
		{44100, 21000},
		{22050, 9000},
		{24000, 11000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%gHz", tt.from, tt.freq), func(t *testing.T) {
			in := sine(tt.freq, 0.5, tt.from, 1, tt.from/2)
			out, err := Resample(in, tt.from, ProcessingRate, 1)
			require.NoError(t, err)
			// The total residual (wherever it folded to) must be small.
			atten := db(rms(out, 400) / rms(in, 400))
			t.Logf("%.1f dB", atten)
			assert.LessOrEqual(t, atten, -60.0, "alias only %.1f dB down", atten)
		})
	}
}

func TestResampleUpsample(t *testing.T) {
	const from, to = 16000, 48000
	in := sine(1000, 0.5, from, 1, from/2)
	out, err := Resample(in, from, to, 1)
	require.NoError(t, err)
	mid := out[600 : len(out)-600]

	gain := db(toneAmplitude(mid, 1000, to) / 0.5)
	assert.InDelta(t, 0, gain, 0.5, "passband gain %.3f dB", gain)
	// Zero-stuffing images sit at k*16k ± 1k.
	for _, img := range []float64{15000, 17000, 31000, 33000} {
		level := db(toneAmplitude(mid, img, to) / 0.5)
		assert.LessOrEqual(t, level, -60.0, "image at %g Hz only %.1f dB down", img, level)
	}
}

func TestResampleChunkedMatchesOneShot(t *testing.T) {
	tests := []struct{ from, to, channels int }{
		{48000, 16000, 1},
		{44100, 16000, 1},
		{16000, 48000, 1},
		{22050, 16000, 2},
		{16000, 44100, 2},
		{48000, 16000, 3},
		{16000, 16000, 2},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d-%d-%dch", tt.from, tt.to, tt.channels), func(t *testing.T) {
			in := make([]float32, 3*tt.from/4*tt.channels)
			for i := range in {
				in[i] = rng.Float32()*2 - 1
			}
			want, err := Resample(in, tt.from, tt.to, tt.channels)
			require.NoError(t, err)

			r, err := NewResampler(tt.from, tt.to, tt.channels)
			require.NoError(t, err)
			for round := range 2 { // the second round checks Flush resets
				var got []float32
				for rest := in; len(rest) > 0; {
					// Sizes span empty, mid-frame splits and more than
					// one internal block.
					n := min(len(rest), rng.IntN(10000))
					got = r.Process(rest[:n], got)
					rest = rest[n:]
				}
				got = r.Flush(got)
				require.Equal(t, want, got, "round %d", round)
			}
		})
	}
}

// Silence skips the filter (Resampler.audible): bursts between silences
// must come out as a filter that never skips makes them. Offsetting the
// whole signal by a constant leaves no window silent, and by linearity
// the offset's own output comes off again.
func TestResampleSilenceBetweenBursts(t *testing.T) {
	for _, tt := range []struct{ from, to, channels int }{{48000, 16000, 1}, {22050, 16000, 2}} {
		t.Run(fmt.Sprintf("%d-%d-%dch", tt.from, tt.to, tt.channels), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			in := make([]float32, tt.from*tt.channels)
			for i := range in {
				if frame := i / tt.channels; frame%9000 < 2000 {
					in[i] = rng.Float32()*2 - 1
				}
			}
			got, err := Resample(in, tt.from, tt.to, tt.channels)
			require.NoError(t, err)
			offset := make([]float32, len(in))
			ones := make([]float32, len(in))
			for i, v := range in {
				offset[i], ones[i] = v+1, 1
			}
			shifted, err := Resample(offset, tt.from, tt.to, tt.channels)
			require.NoError(t, err)
			dc, err := Resample(ones, tt.from, tt.to, tt.channels)
			require.NoError(t, err)
			require.Len(t, got, len(shifted))
			silent := 0
			for i := range got {
				require.InDelta(t, shifted[i]-dc[i], got[i], 1e-5, "sample %d", i)
				if got[i] == 0 {
					silent++
				}
			}
			assert.Greater(t, silent, len(got)/2, "the silences come out as silence")
		})
	}
}

func TestResampleOutputLength(t *testing.T) {
	pairs := [][2]int{
		{48000, 16000}, {44100, 16000}, {22050, 16000}, {24000, 16000},
		{16000, 48000}, {16000, 44100}, {8000, 48000}, {96000, 8000},
		{11025, 16000}, {16000, 16000},
	}
	for _, p := range pairs {
		for _, ch := range []int{1, 2} {
			// One resampler for every length also checks that Flush
			// leaves it ready for the next stream.
			r, err := NewResampler(p[0], p[1], ch)
			require.NoError(t, err)
			for _, frames := range []int{0, 1, 2, 3, 7, 100, 441, 1000, 4801, 20000} {
				out := r.Flush(r.Process(make([]float32, frames*ch), nil))
				want := int(math.Round(float64(frames) * float64(p[1]) / float64(p[0])))
				require.Len(t, out, want*ch, "%d->%d, %d frames, %dch", p[0], p[1], frames, ch)
			}
		}
	}
}

func TestResampleTimeAlignment(t *testing.T) {
	pairs := [][2]int{{48000, 16000}, {44100, 16000}, {16000, 48000}, {22050, 16000}, {16000, 44100}}
	for _, p := range pairs {
		for _, at := range []int{0, 1, 5, 777, 1500, 3999} {
			t.Run(fmt.Sprintf("%d-%d@%d", p[0], p[1], at), func(t *testing.T) {
				in := make([]float32, 4000)
				in[at] = 1
				out, err := Resample(in, p[0], p[1], 1)
				require.NoError(t, err)
				peak := 0
				for i, v := range out {
					if v > out[peak] {
						peak = i
					}
				}
				want := float64(at) * float64(p[1]) / float64(p[0])
				assert.InDelta(t, want, float64(peak), 1, "click at input %d lands at output %d", at, peak)
			})
		}
	}
}

func TestResampleDCGain(t *testing.T) {
	// Every polyphase row is normalised, so a constant passes through
	// exactly, with no ripple at the ratio's period.
	in := make([]float32, 44100)
	for i := range in {
		in[i] = 0.25
	}
	out, err := Resample(in, 44100, 16000, 1)
	require.NoError(t, err)
	for i, v := range out[100 : len(out)-100] {
		require.InDelta(t, 0.25, v, 1e-5, "sample %d", i+100)
	}
}

func TestResampleBypass(t *testing.T) {
	in := []float32{0.1, -0.2, 0.3, -0.4}
	out, err := Resample(in, 16000, 16000, 2)
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

func TestResampleReset(t *testing.T) {
	in := sine(440, 0.5, 48000, 1, 4800)
	r, err := NewResampler(48000, 16000, 1)
	require.NoError(t, err)
	want := r.Process(in, nil)

	r.Process(sine(1000, 0.9, 48000, 1, 999), nil)
	r.Reset()
	assert.Equal(t, want, r.Process(in, nil))
}

func TestResampleProcessDoesNotAllocate(t *testing.T) {
	r, err := NewResampler(48000, 16000, 1)
	require.NoError(t, err)
	in := sine(440, 0.5, 48000, 1, 480)
	out := make([]float32, 0, 1024)
	allocs := testing.AllocsPerRun(100, func() {
		out = r.Process(in, out[:0])
	})
	assert.Zero(t, allocs)
}

func TestResampleErrors(t *testing.T) {
	tests := []struct {
		name               string
		from, to, channels int
		want               string
	}{
		{"zero input rate", 0, 16000, 1, "invalid input rate 0"},
		{"negative output rate", 48000, -16000, 1, "invalid output rate -16000"},
		{"huge rate", 10_000_000, 16000, 1, "invalid input rate 10000000"},
		{"zero channels", 48000, 16000, 0, "invalid channel count 0"},
		{"too many channels", 48000, 16000, 33, "invalid channel count 33"},
		{"intractable ratio", 767999, 768000, 1, "filter table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResampler(tt.from, tt.to, tt.channels)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.Contains(t, err.Error(), tt.want)

			_, err = Resample([]float32{0}, tt.from, tt.to, tt.channels)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	_, err := Resample([]float32{0, 0, 0}, 48000, 16000, 2)
	require.ErrorContains(t, err, "not a whole number of 2-channel frames")
}

func TestDownmixUpmix(t *testing.T) {
	tests := []struct {
		name     string
		in       []float32
		channels int
		down     []float32
	}{
		{"mono", []float32{0.5, -0.5}, 1, []float32{0.5, -0.5}},
		{"stereo", []float32{1, 0, 0.5, 0.5, -1, 1}, 2, []float32{0.5, 0.5, 0}},
		{"three", []float32{0.3, 0.6, 0.9}, 3, []float32{0.6}},
		{"partial frame", []float32{1, 1, 1}, 2, []float32{1}},
		{"invalid channels", []float32{1, 1}, 0, nil},
		{"empty", nil, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Downmix(tt.in, tt.channels, nil)
			require.Len(t, got, len(tt.down))
			for i := range got {
				assert.InDelta(t, tt.down[i], got[i], 1e-6)
			}
		})
	}

	assert.Equal(t, []float32{9, 1, 1, 2, 2}, Upmix([]float32{1, 2}, 2, []float32{9}))
	assert.Equal(t, []float32{1, 1, 1}, Upmix([]float32{1}, 3, nil))
	assert.Empty(t, Upmix([]float32{1}, 0, nil))
	assert.Equal(t, []float32{7, 0.5}, Downmix([]float32{0.25, 0.75}, 2, []float32{7}))
}

func TestConvert(t *testing.T) {
	stereo48 := Format{Rate: 48000, Channels: 2}
	stereo16 := Format{Rate: 16000, Channels: 2}
	mono48 := Format{Rate: 48000, Channels: 1}
	tests := []struct {
		name     string
		from, to Format
	}{
		{"stereo 48k to mono 16k", stereo48, Mono16k},
		{"mono 16k to stereo 48k", Mono16k, stereo48},
		{"stereo 48k to stereo 16k", stereo48, stereo16},
		{"mono 48k to mono 16k", mono48, Mono16k},
		{"identity", Mono16k, Mono16k},
		{"stereo to mono same rate", stereo48, mono48},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const frames = 24000
			in := sine(1000, 0.5, tt.from.Rate, tt.from.Channels, frames)
			out, err := Convert(in, tt.from, tt.to)
			require.NoError(t, err)
			wantFrames := int(math.Round(frames * float64(tt.to.Rate) / float64(tt.from.Rate)))
			require.Len(t, out, wantFrames*tt.to.Channels)
			for c := range tt.to.Channels {
				ch := make([]float32, 0, wantFrames)
				for i := c; i < len(out); i += tt.to.Channels {
					ch = append(ch, out[i])
				}
				gain := db(rms(ch, 300) / (0.5 / math.Sqrt2))
				assert.InDelta(t, 0, gain, 0.1, "channel %d gain %.3f dB", c, gain)
			}
			if len(out) > 0 && len(in) > 0 {
				assert.NotSame(t, &in[0], &out[0], "Convert must not return the caller's slice")
			}
		})
	}
}

func TestConvertErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       []float32
		from, to Format
		want     string
	}{
		{"bad source", nil, Format{Rate: 0, Channels: 1}, Mono16k, "invalid source format"},
		{"bad target", nil, Mono16k, Format{Rate: 16000, Channels: 0}, "invalid target format"},
		{"partial frame", []float32{0, 0, 0}, Format{Rate: 48000, Channels: 2}, Mono16k, "not a whole number"},
		{"no channel mapping", nil, Format{Rate: 48000, Channels: 2}, Format{Rate: 16000, Channels: 3}, "no channel mapping from 2 to 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Convert(tt.in, tt.from, tt.to)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// BenchmarkResample48kTo16k runs the capture-path conversion on 10 ms
// device periods; x_realtime is seconds of audio processed per second.
func BenchmarkResample48kTo16k(b *testing.B) {
	b.Run("tone", func(b *testing.B) { benchResample(b, sine(440, 0.5, 48000, 1, 48000)) })
	// The far end while nothing plays.
	b.Run("silence", func(b *testing.B) { benchResample(b, make([]float32, 48000)) })
}

// benchResample resamples in, a second at 48 kHz, a 10 ms period at a
// time.
func benchResample(b *testing.B, in []float32) {
	const rate, period = 48000, 480
	r, err := NewResampler(rate, ProcessingRate, 1)
	require.NoError(b, err)
	out := make([]float32, 0, 2*period)
	b.ReportAllocs()
	b.SetBytes(int64(len(in) * 4))
	iters := 0
	start := time.Now()
	for b.Loop() {
		for i := 0; i < len(in); i += period {
			out = r.Process(in[i:i+period], out[:0])
		}
		iters++
	}
	b.ReportMetric(float64(iters)/time.Since(start).Seconds(), "x_realtime")
}
