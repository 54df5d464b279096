//go:build webrtcapm

package frontend

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fs = SampleRate

// speech synthesises a speech-like signal: a harmonic series on f0 (with a
// little vibrato) shaped by a syllable envelope: syllables of syl seconds
// separated by gaps of gap seconds. It returns the signal and a per-sample
// activity mask. Peak amplitude is about amp.
func speech(n int, f0 float64, syl, gap float64, amp float64, seed int64) ([]float32, []bool) {
	r := rand.New(rand.NewSource(seed))
	x := make([]float32, n)
	act := make([]bool, n)
	period := syl + gap
	var ph float64
	// Formant-ish spectral tilt with random per-syllable colour.
	var weights [20]float64
	lastSyl := -1
	for i := 0; i < n; i++ {
		t := float64(i) / fs
		k := int(t / period)
		if k != lastSyl {
			lastSyl = k
			for h := range weights {
				weights[h] = (0.5 + r.Float64()) / float64(h+1)
			}
		}
		pos := t - float64(k)*period
		env := 0.0
		if pos < syl {
			env = math.Sin(math.Pi * pos / syl)
			env *= env
		}
		f := f0 * (1 + 0.05*math.Sin(2*math.Pi*3*t) + 0.08*math.Sin(math.Pi*pos/period))
		ph += 2 * math.Pi * f / fs
		var v float64
		for h := 1; h <= 20; h++ {
			if float64(h)*f > fs/2-500 {
				break
			}
			v += weights[h-1] * math.Sin(float64(h)*ph)
		}
		x[i] = float32(amp * 0.35 * env * v)
		act[i] = env > 0.05
	}
	return x, act
}

// room returns an impulse response: pure delay, then an exponentially
// decaying random tail (time constant tau seconds, ~5*tau long) scaled so the
// whole response has the given broadband gain.
func room(delayMS int, tau, gain float64, seed int64) []float64 {
	r := rand.New(rand.NewSource(seed))
	d := delayMS * fs / 1000
	l := int(5 * tau * fs)
	h := make([]float64, d+l)
	var e float64
	for i := 0; i < l; i++ {
		v := r.NormFloat64() * math.Exp(-float64(i)/(tau*fs))
		if i == 0 {
			v = 3 // direct path
		}
		h[d+i] = v
		e += v * v
	}
	s := gain / math.Sqrt(e)
	for i := range h {
		h[i] *= s
	}
	return h
}

func convolve(x []float32, h []float64) []float32 {
	y := make([]float32, len(x))
	first := 0
	for first < len(h) && h[first] == 0 {
		first++
	}
	for i := range y {
		var acc float64
		for j := first; j < len(h) && j <= i; j++ {
			acc += h[j] * float64(x[i-j])
		}
		y[i] = float32(acc)
	}
	return y
}

func energy(x []float32, mask func(i int) bool) float64 {
	var e float64
	for i, v := range x {
		if mask(i) {
			e += float64(v) * float64(v)
		}
	}
	return e
}

func db(r float64) float64 { return 10 * math.Log10(r) }

// run feeds far/near through p frame by frame and returns the output.
func run(t testing.TB, p *Processor, far, near []float32) []float32 {
	out := make([]float32, 0, len(near))
	for i := 0; i+FrameSize <= len(near); i += FrameSize {
		if far != nil {
			require.NoError(t, p.Far(far[i:i+FrameSize]))
		}
		o, err := p.Near(near[i : i+FrameSize])
		require.NoError(t, err)
		out = append(out, o...)
	}
	return out
}

func TestFrameSizeAndConfigErrors(t *testing.T) {
	_, err := New(Config{NSLevel: 4})
	require.Error(t, err)
	_, err = New(Config{AGCTargetDBFS: 40})
	require.Error(t, err)
	p, err := New(Config{AEC: true, NS: true, AGC: true})
	require.NoError(t, err)
	require.ErrorContains(t, p.Far(make([]float32, 100)), "want exactly 160")
	_, err = p.Near(make([]float32, 320))
	require.ErrorContains(t, err, "want exactly 160")
	p.SetDelay(40)
	p.Close()
	p.Close()
	require.ErrorIs(t, p.Far(make([]float32, FrameSize)), ErrClosed)
	_, err = p.Near(make([]float32, FrameSize))
	require.ErrorIs(t, err, ErrClosed)
}

func TestEchoCancellation(t *testing.T) {
	for _, delay := range []int{20, 60, 120} {
		t.Run(time.Duration(delay*int(time.Millisecond)).String(), func(t *testing.T) {
			n := 12 * fs
			far, _ := speech(n, 140, 0.25, 0.08, 0.5, 1)
			h := room(delay, 0.010, 0.5, 2) // tau 10 ms: tail ~50 ms
			echo := convolve(far, h)
			// Near-end talker (different voice) during 8..10 s only.
			nearTalk, nact := speech(n, 210, 0.3, 0.1, 0.3, 3)
			dtStart, dtEnd := 8*fs, 10*fs
			mic := make([]float32, n)
			for i := range mic {
				mic[i] = echo[i]
				if i >= dtStart && i < dtEnd {
					mic[i] += nearTalk[i]
				}
			}
			p, err := New(Config{AEC: true, DelayMS: delay})
			require.NoError(t, err)
			defer p.Close()
			out := run(t, p, far, mic)

			echoOnly := func(i int) bool { return i >= 2*fs && i < dtStart }
			erle := db(energy(echo, echoOnly) / energy(out, echoOnly))
			post := func(i int) bool { return i >= dtEnd+fs/2 && i < len(out) }
			erlePost := db(energy(echo, post) / energy(out, post))
			t.Logf("delay %d ms: ERLE %.1f dB (2-8 s), %.1f dB after double talk", delay, erle, erlePost)

			dt := func(i int) bool { return i >= dtStart && i < dtEnd && nact[i] }
			keep := db(energy(out, dt) / energy(nearTalk, dt))
			t.Logf("delay %d ms: double talk near-end level %.1f dB relative to original", delay, keep)

			assert.GreaterOrEqual(t, erle, 20.0, "ERLE")
			assert.InDelta(t, 0, keep, 6, "near-end speech level during double talk")
		})
	}
}

func TestNoiseSuppression(t *testing.T) {
	n := 10 * fs
	s, act := speech(n, 140, 0.3, 0.3, 0.3, 5)
	r := rand.New(rand.NewSource(6))
	noise := make([]float32, n)
	for i := range noise {
		noise[i] = float32(r.NormFloat64())
	}
	// Scale noise to 5 dB SNR over speech-active samples.
	isAct := func(i int) bool { return act[i] }
	ps := energy(s, isAct) / float64(count(act))
	pn := energy(noise, func(int) bool { return true }) / float64(n)
	g := float32(math.Sqrt(ps / pn / math.Pow(10, 0.5)))
	mix := make([]float32, n)
	for i := range mix {
		noise[i] *= g
		mix[i] = s[i] + noise[i]
	}
	snr := func(x []float32) float64 {
		// Measured after 2 s of adaptation: noise power from speech gaps,
		// speech power = active power - noise power.
		on := func(i int) bool { return i >= 2*fs && act[i] }
		off := func(i int) bool { return i >= 2*fs && !act[i] && !near(act, i, 400) }
		pOn := energy(x, on) / float64(countf(n, on))
		pOff := energy(x, off) / float64(countf(n, off))
		return db((pOn - pOff) / pOff)
	}
	in := snr(mix)
	for lvl := 0; lvl <= 3; lvl++ {
		p, err := New(Config{NS: true, NSLevel: lvl})
		require.NoError(t, err)
		out := run(t, p, nil, mix)
		p.Close()
		got := snr(out)
		t.Logf("NS level %d: input SNR %.1f dB -> output SNR %.1f dB (improvement %.1f dB)", lvl, in, got, got-in)
		assert.Greater(t, got-in, 3.0)
	}
}

func near(act []bool, i, w int) bool {
	for j := i - w; j <= i+w; j++ {
		if j >= 0 && j < len(act) && act[j] {
			return true
		}
	}
	return false
}

func count(b []bool) int {
	c := 0
	for _, v := range b {
		if v {
			c++
		}
	}
	return c
}

func countf(n int, f func(int) bool) int {
	c := 0
	for i := 0; i < n; i++ {
		if f(i) {
			c++
		}
	}
	return c
}

func TestAGC(t *testing.T) {
	n := 12 * fs
	s, act := speech(n, 140, 0.3, 0.1, 1, 7)
	// Scale to -40 dBFS RMS over speech-active samples.
	isAct := func(i int) bool { return act[i] }
	rms := math.Sqrt(energy(s, isAct) / float64(count(act)))
	k := float32(math.Pow(10, -40.0/20) / rms)
	for i := range s {
		s[i] *= k
	}
	p, err := New(Config{AGC: true})
	require.NoError(t, err)
	defer p.Close()
	out := run(t, p, nil, s)
	late := func(i int) bool { return i >= 8*fs && act[i] }
	rmsIn := db(energy(s, late) / float64(countf(n, late)))
	rmsOut := db(energy(out, late) / float64(countf(n, late)))
	// WebRTC's target is a peak/envelope level: compare per-10ms-frame peaks.
	var peaks []float64
	for i := 8 * fs; i+FrameSize <= len(out); i += FrameSize {
		var m float64
		for _, v := range out[i : i+FrameSize] {
			m = math.Max(m, math.Abs(float64(v)))
		}
		if act[i] {
			peaks = append(peaks, m)
		}
	}
	var pk float64
	for _, v := range peaks {
		pk += v * v
	}
	peakDB := db(pk / float64(len(peaks)))
	target := -float64(DefaultAGCTargetDBFS)
	t.Logf("AGC: input %.1f dBFS RMS -> output %.1f dBFS RMS, %.1f dBFS mean frame peak (target %.0f dBFS)", rmsIn, rmsOut, peakDB, target)
	assert.InDelta(t, target, peakDB, 10)
}

func BenchmarkFrontend(b *testing.B) {
	n := 10 * fs
	far, _ := speech(n, 140, 0.25, 0.08, 0.5, 1)
	echo := convolve(far, room(60, 0.01, 0.5, 2))
	p, err := New(Config{AEC: true, NS: true, AGC: true, DelayMS: 60, NSLevel: 2})
	require.NoError(b, err)
	defer p.Close()
	b.ResetTimer()
	frames := 0
	for i := 0; i < b.N; i++ {
		off := (i * FrameSize) % (n - FrameSize)
		require.NoError(b, p.Far(far[off:off+FrameSize]))
		_, err := p.Near(echo[off : off+FrameSize])
		require.NoError(b, err)
		frames++
	}
	el := b.Elapsed()
	b.ReportMetric(el.Seconds()/(float64(frames)*0.010), "rtf")
}

// Once nothing has played for a while the echo canceller rests (the quiet
// instance takes the capture); the next reply's echo is cancelled from its
// start, as by a canceller that never stopped, where one started afresh
// would let its first second through.
func TestEchoCancellationResumesAfterQuiet(t *testing.T) {
	const delay = 60
	n := 14 * fs
	talk, _ := speech(n, 140, 0.25, 0.08, 0.5, 1)
	far := make([]float32, n)
	copy(far[:6*fs], talk[:6*fs])       // a reply,
	copy(far[9*fs:], talk[6*fs:n-3*fs]) // three seconds of quiet, the next reply
	echo := convolve(far, room(delay, 0.010, 0.5, 2))
	p, err := New(Config{AEC: true, NS: true, DelayMS: delay})
	require.NoError(t, err)
	defer p.Close()
	split := 8*fs + fs/2
	out := run(t, p, far[:split], echo[:split])
	require.True(t, p.resting(), "the canceller rests in the quiet")
	out = append(out, run(t, p, far[split:], echo[split:])...)
	resumed := func(i int) bool { return i >= 9*fs && i < 10*fs }
	erle := db(energy(echo, resumed) / energy(out, resumed))

	fresh, err := New(Config{AEC: true, NS: true, DelayMS: delay})
	require.NoError(t, err)
	defer fresh.Close()
	freshOut := run(t, fresh, far[9*fs:], echo[9*fs:])
	first := func(i int) bool { return i < fs }
	freshERLE := db(energy(echo[9*fs:], first) / energy(freshOut, first))
	t.Logf("first second of the second reply: ERLE %.1f dB after the quiet, %.1f dB from a fresh canceller", erle, freshERLE)
	assert.GreaterOrEqual(t, erle, 20.0)
	assert.Greater(t, erle, freshERLE+6, "the canceller kept what it had learnt")
}

// The canceller rests a second after the far end went silent, plus the
// delay in effect: a longer delay keeps the echo coming for longer.
func TestEchoCancellerRestsAfterTheTail(t *testing.T) {
	p, err := New(Config{AEC: true, DelayMS: 100})
	require.NoError(t, err)
	defer p.Close()
	silence := make([]float32, FrameSize)
	far := func(frames int) {
		for range frames {
			require.NoError(t, p.Far(silence))
			_, err := p.Near(silence)
			require.NoError(t, err)
		}
	}
	far(109)
	assert.False(t, p.resting(), "1.09 s")
	far(1)
	assert.True(t, p.resting(), "1.1 s")
	p.SetDelay(300)
	assert.False(t, p.resting(), "a longer delay")
	far(20)
	assert.True(t, p.resting())
	sound := make([]float32, FrameSize)
	sound[3] = 0.1
	require.NoError(t, p.Far(sound))
	assert.False(t, p.resting(), "awake at the first sound played")

	plain, err := New(Config{NS: true})
	require.NoError(t, err)
	defer plain.Close()
	for range 200 {
		require.NoError(t, plain.Far(silence))
	}
	assert.False(t, plain.resting(), "no canceller, no rest")
}
