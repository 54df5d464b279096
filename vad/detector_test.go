package vad

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
)

// script is a Prober answering the i-th window since the last Reset with
// probs[i] (0 past the end).
type script struct {
	probs  []float32
	n      int
	resets int
	failAt int // window index that fails; -1 for none
}

// scripted is the default configuration for scripted probabilities, which
// come with silent frames: the floor would keep those from the prober.
func scripted() Config {
	c := DefaultConfig()
	c.FloorDBFS = 0
	return c
}

func newScript(probs []float32) *script { return &script{probs: probs, failAt: -1} }

func (s *script) Window(w []float32) (float32, error) {
	if len(w) != WindowSize {
		return 0, fmt.Errorf("window of %d samples", len(w))
	}
	i := s.n
	s.n++
	if i == s.failAt {
		return 0, errors.New("scripted failure")
	}
	if i < len(s.probs) {
		return s.probs[i], nil
	}
	return 0, nil
}

func (s *script) Reset() { s.n = 0; s.resets++ }

// posProber checks that windows are cut exactly: it is fed audio whose
// sample k holds the value k, so each window tells where it came from, and
// answers with the probability scripted for that position.
type posProber struct{ probs []float32 }

func (p *posProber) Window(w []float32) (float32, error) {
	if len(w) != WindowSize {
		return 0, fmt.Errorf("window of %d samples", len(w))
	}
	at := int(w[0])
	if at%WindowSize != 0 {
		return 0, fmt.Errorf("window starts at sample %d, not on the window grid", at)
	}
	for i := 1; i < len(w); i++ {
		// The flushed tail is zero-padded.
		if w[i] != float32(at+i) && w[i] != 0 {
			return 0, fmt.Errorf("window at %d: sample %d is %v", at, i, w[i])
		}
	}
	if i := at / WindowSize; i < len(p.probs) {
		return p.probs[i], nil
	}
	return 0, nil
}

func (p *posProber) Reset() {}

func rampPCM(n int) []float32 {
	pcm := make([]float32, n)
	for i := range pcm {
		pcm[i] = float32(i)
	}
	return pcm
}

// rep builds a probability script from (probability, windows) pairs.
func rep(pairs ...any) []float32 {
	var out []float32
	for i := 0; i < len(pairs); i += 2 {
		p := float32(pairs[i].(float64))
		for range pairs[i+1].(int) {
			out = append(out, p)
		}
	}
	return out
}

// flushed marks events reported by Flush.
const flushed = -1

type eventAt struct {
	Kind   Kind
	Pos    int64
	Window int // index of the window whose frame reported it, or flushed
}

func start(pos int64, at int) eventAt { return eventAt{SpeechStart, pos, at} }
func end(pos int64, at int) eventAt   { return eventAt{SpeechEnd, pos, at} }

// runWindows feeds one window-sized frame per scripted probability (the
// last len(probs)-windows of which may be the flushed tail), then tail
// samples, then flushes.
func runWindows(t *testing.T, cfg Config, probs []float32, tail int) []eventAt {
	t.Helper()
	d, err := NewDetector(newScript(probs), cfg)
	require.NoError(t, err)
	windows := len(probs)
	if tail > 0 {
		windows--
	}
	var got []eventAt
	for i := range windows {
		res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: int64(i * WindowSize), Samples: make([]float32, WindowSize)})
		require.NoError(t, err)
		for _, ev := range res.Events {
			got = append(got, eventAt{ev.Kind, ev.Pos, i})
		}
	}
	if tail > 0 {
		_, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: int64(windows * WindowSize), Samples: make([]float32, tail)})
		require.NoError(t, err)
	}
	res, err := d.Flush()
	require.NoError(t, err)
	for _, ev := range res.Events {
		got = append(got, eventAt{ev.Kind, ev.Pos, flushed})
	}
	return got
}

func TestStateMachine(t *testing.T) {
	// Defaults in samples: pad 480, min speech 4000 (so 8 windows), min
	// silence 1600 (confirmed at the 5th silent window, 2048 samples on).
	def := scripted()
	with := func(f func(*Config)) Config { c := def; f(&c); return c }
	for _, tc := range []struct {
		name  string
		cfg   Config
		probs []float32
		tail  int
		want  []eventAt
	}{
		{"start confirmed after min speech, end after min silence", def,
			rep(0.0, 10, 0.9, 20, 0.0, 10), 0,
			[]eventAt{start(10*512-480, 17), end(30*512+480, 34)}},
		{"seven windows are too short to count", def,
			rep(0.0, 10, 0.9, 7, 0.0, 10), 0, nil},
		{"eight windows count", def,
			rep(0.0, 10, 0.9, 8, 0.0, 10), 0,
			[]eventAt{start(10*512-480, 17), end(18*512+480, 22)}},
		{"short blips are ignored", def,
			rep(0.0, 5, 0.9, 2, 0.0, 5, 0.9, 1, 0.0, 5, 0.9, 6, 0.0, 5), 0, nil},
		{"a dip under the exit threshold shorter than min silence does not end speech", def,
			rep(0.0, 10, 0.9, 10, 0.1, 4, 0.9, 10, 0.0, 10), 0,
			[]eventAt{start(10*512-480, 17), end(34*512+480, 38)}},
		{"a dip as long as min silence ends speech", def,
			rep(0.0, 10, 0.9, 10, 0.1, 5, 0.9, 10, 0.0, 10), 0,
			[]eventAt{start(10*512-480, 17), end(20*512+480, 24), start(25*512-480, 32), end(35*512+480, 39)}},
		{"probabilities between the thresholds do not start a tentative end", def,
			rep(0.0, 10, 0.9, 10, 0.4, 20, 0.0, 10), 0,
			[]eventAt{start(10*512-480, 17), end(40*512+480, 44)}},
		{"probabilities between the thresholds neither clear nor complete a tentative end", def,
			rep(0.0, 10, 0.9, 10, 0.1, 1, 0.4, 10, 0.1, 1, 0.0, 5), 0,
			[]eventAt{start(10*512-480, 17), end(20*512+480, 31)}},
		{"the start pad stops at the start of the stream", def,
			rep(0.9, 10, 0.0, 10), 0,
			[]eventAt{start(0, 7), end(10*512+480, 14)}},
		{"the end pad stops at the window that confirms the end",
			with(func(c *Config) { c.MinSilence = 0; c.SpeechPad = 100 * time.Millisecond }),
			rep(0.0, 10, 0.9, 10, 0.0, 5), 0,
			[]eventAt{start(10*512-1600, 17), end(21*512, 20)}},
		{"a start is never reported before the previous end",
			with(func(c *Config) { c.MinSpeech = 0; c.MinSilence = 0; c.SpeechPad = 100 * time.Millisecond }),
			rep(0.9, 2, 0.0, 1, 0.9, 2, 0.0, 3), 0,
			[]eventAt{start(0, 0), end(3*512, 2), start(3*512, 3), end(6*512, 5)}},
		{"flush closes an open segment at the end of the audio", def,
			rep(0.0, 10, 0.9, 21), 100,
			[]eventAt{start(10*512-480, 17), end(30*512+100, flushed)}},
		{"flush closes a segment with a tentative end at the end of the audio", def,
			rep(0.0, 10, 0.9, 10, 0.0, 3), 0,
			[]eventAt{start(10*512-480, 17), end(23*512, flushed)}},
		{"flush keeps a segment only the end of the audio makes long enough", def,
			rep(0.9, 7, 0.0, 2), 0,
			[]eventAt{start(0, flushed), end(9*512, flushed)}},
		{"flush drops a short open segment", def,
			rep(0.0, 5, 0.9, 5), 0, nil},
		{"flush judges the zero-padded tail window",
			with(func(c *Config) { c.MinSpeech = 0 }),
			rep(0.0, 10, 0.9, 1), 300,
			[]eventAt{start(10*512-480, flushed), end(10*512+300, flushed)}},
		{"a higher threshold moves the exit threshold with it",
			with(func(c *Config) { c.Threshold = 0.8 }),
			rep(0.7, 10, 0.9, 10, 0.7, 10, 0.6, 5), 0,
			[]eventAt{start(10*512-480, 17), end(30*512+480, 34)}},
		{"an explicit exit threshold",
			with(func(c *Config) { c.ExitThreshold = 0.05 }),
			rep(0.0, 10, 0.9, 10, 0.1, 10, 0.9, 10, 0.01, 5), 0,
			[]eventAt{start(10*512-480, 17), end(40*512+480, 44)}},
		{"nothing but silence", def, rep(0.0, 100), 17, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, runWindows(t, tc.cfg, tc.probs, tc.tail))
		})
	}
}

func TestVoicedAndProb(t *testing.T) {
	d, err := NewDetector(newScript(rep(0.2, 1, 0.7, 1, 0.5, 1)), scripted())
	require.NoError(t, err)
	feed := func(pos, n int) Result {
		res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: make([]float32, n)})
		require.NoError(t, err)
		return res
	}
	res := feed(0, 100) // no window yet
	assert.Equal(t, Result{}, res)
	res = feed(100, 412) // completes window 0
	assert.Equal(t, float32(0.2), res.Prob)
	assert.False(t, res.Voiced)
	res = feed(512, 600) // window 1
	assert.Equal(t, float32(0.7), res.Prob)
	assert.True(t, res.Voiced)
	res = feed(1112, 10) // no new window: the latest verdict stands
	assert.Equal(t, float32(0.7), res.Prob)
	assert.True(t, res.Voiced)
	res = feed(1122, 500) // window 2, exactly at the threshold
	assert.Equal(t, float32(0.5), res.Prob)
	assert.True(t, res.Voiced)
}

// Pausing is reported from the first quiet window of a confirmed segment
// until the silence ends it or the speech goes on; not for a segment too
// short to have been reported, nor for the hysteresis band.
func TestPausing(t *testing.T) {
	// Default config: MinSpeech 250 ms (8 windows), MinSilence 100 ms (an
	// end is confirmed at the fifth quiet window), exit threshold 0.35.
	probs := rep(0.9, 3, 0.1, 2, // too short to count: no pause
		0.9, 10, 0.4, 1, 0.1, 2, 0.9, 1, // a pause the speech resumes after
		0.1, 5, 0.0, 3) // a pause that ends the segment
	want := []bool{false, false, false, false, false,
		false, false, false, false, false, false, false, false, false, false, false, true, true, false,
		true, true, true, true, false, false, false, false}
	d, err := NewDetector(newScript(probs), scripted())
	require.NoError(t, err)
	var got []bool
	for i := range probs {
		res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: int64(i * WindowSize), Samples: make([]float32, WindowSize)})
		require.NoError(t, err)
		got = append(got, res.Pausing)
	}
	assert.Equal(t, want, got)
}

func TestDetectorErrors(t *testing.T) {
	_, err := NewDetector(nil, scripted())
	require.Error(t, err)
	for _, bad := range []func(*Config){
		func(c *Config) { c.Threshold = 0 },
		func(c *Config) { c.Threshold = 1.5 },
		func(c *Config) { c.Threshold = float32(nan()) },
		func(c *Config) { c.ExitThreshold = 0.6 },
		func(c *Config) { c.ExitThreshold = -0.1 },
		func(c *Config) { c.MinSpeech = -time.Millisecond },
		func(c *Config) { c.SpeechPad = 2 * time.Hour },
	} {
		cfg := scripted()
		bad(&cfg)
		_, err := NewDetector(newScript(nil), cfg)
		assert.Error(t, err, "%+v", cfg)
	}

	s := newScript(rep(0.9, 20))
	d, err := NewDetector(s, scripted())
	require.NoError(t, err)
	for _, f := range []audio.Frame{
		{Format: audio.Format{Rate: 8000, Channels: 1}, Samples: make([]float32, 256)},
		{Format: audio.Format{Rate: 16000, Channels: 2}, Samples: make([]float32, 1024)},
		{Format: audio.Format{Rate: 48000, Channels: 1}, Samples: make([]float32, 480)},
		{Format: audio.Format{}, Samples: make([]float32, 480)},
	} {
		_, err := d.Process(f)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "16000 Hz/1ch only")
	}
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: -5, Samples: make([]float32, 10)})
	require.Error(t, err)

	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 1000, Samples: make([]float32, 100)})
	require.NoError(t, err)
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 1200, Samples: make([]float32, 100)})
	require.ErrorContains(t, err, "does not continue the stream, which is at 1100")
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 1050, Samples: make([]float32, 100)})
	require.ErrorContains(t, err, "does not continue the stream")

	// A Prober failure makes the detector refuse audio until Reset,
	// since a window is missing from its view of the stream.
	s.failAt = 1
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 1100, Samples: make([]float32, 2000)})
	require.ErrorContains(t, err, "scripted failure")
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 3100, Samples: make([]float32, 10)})
	require.ErrorContains(t, err, "Reset it")
	_, err = d.Flush()
	require.Error(t, err)
	d.Reset()
	s.failAt = -1
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 0, Samples: make([]float32, 10)})
	require.NoError(t, err)
}

func nan() float64 { var z float64; return z / z }

// heard is a prober that keeps the first sample of each window it is
// given, and calls a window speech once its first sample is 0.5 or more.
type heard struct{ firsts []float32 }

func (h *heard) Window(w []float32) (float32, error) {
	h.firsts = append(h.firsts, w[0])
	if w[0] >= 0.5 {
		return 0.9, nil
	}
	return 0.1, nil
}

func (*heard) Reset() {}

// Windows outside speech under the floor are silence without the model;
// the first window above it comes after the last second of them, so the
// model's state is as if it had heard them all; inside speech the model
// hears every window.
func TestFloorSkipsTheModel(t *testing.T) {
	h := &heard{}
	d, err := NewDetector(h, DefaultConfig())
	require.NoError(t, err)
	pos := 0
	window := func(first float32) Result {
		samples := make([]float32, WindowSize)
		samples[0] = first
		res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: samples})
		require.NoError(t, err)
		pos += WindowSize
		return res
	}
	// -60 dBFS is 0.001.
	assert.InDelta(t, 0.1, window(0.002).Prob, 1e-6)
	var quiet []float32
	for i := range 40 {
		q := float32(i+1) * 1e-5
		quiet = append(quiet, q)
		assert.Zero(t, window(q).Prob)
	}
	assert.Equal(t, []float32{0.002}, h.firsts, "the quiet windows did not reach the model")
	assert.InDelta(t, 0.9, window(0.5).Prob, 1e-6)
	assert.Equal(t, slices.Concat([]float32{0.002}, quiet[40-skippedReplay:], []float32{0.5}), h.firsts,
		"the last second of quiet, then the window above the floor")
	h.firsts = nil
	for range 3 {
		assert.InDelta(t, 0.1, window(1e-5).Prob, 1e-6, "inside speech the model hears the quiet")
	}
	assert.Len(t, h.firsts, 3)

	cfg := DefaultConfig()
	cfg.FloorDBFS = 3
	_, err = NewDetector(h, cfg)
	assert.ErrorContains(t, err, "floor")
}

func TestResetForgetsEverything(t *testing.T) {
	s := newScript(rep(0.9, 10, 0.0, 10))
	d, err := NewDetector(s, scripted())
	require.NoError(t, err)
	res, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: 0, Samples: make([]float32, 9*512+100)})
	require.NoError(t, err)
	require.Len(t, res.Events, 1) // speech started, not ended
	d.Reset()
	assert.Equal(t, 1, s.resets)
	assert.Zero(t, s.n)
	// A new stream may start anywhere; the pad stops at its first sample.
	res, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 5000, Samples: make([]float32, 20*512)})
	require.NoError(t, err)
	assert.Equal(t, []Event{{Kind: SpeechStart, Pos: 5000}, {Kind: SpeechEnd, Pos: 5000 + 10*512 + 480}}, res.Events)

	// Flush ends the stream and leaves the detector ready for the next.
	_, err = d.Flush()
	require.NoError(t, err)
	assert.Equal(t, 2, s.resets)
	_, err = d.Process(audio.Frame{Format: audio.Mono16k, Pos: 0, Samples: make([]float32, 10)})
	require.NoError(t, err)
}

// randomProbs scripts plausible VAD output: runs of speech and silence of
// random lengths, with values that often fall between the thresholds.
func randomProbs(r *rand.Rand, windows int) []float32 {
	probs := make([]float32, 0, windows)
	speech := r.IntN(2) == 0
	for len(probs) < windows {
		run := 1 + r.IntN(20)
		for range run {
			var p float32
			switch {
			case r.IntN(6) == 0: // the hysteresis band
				p = 0.35 + 0.15*r.Float32()
			case speech:
				p = 0.5 + 0.5*r.Float32()
			default:
				p = 0.35 * r.Float32()
			}
			probs = append(probs, p)
		}
		speech = !speech
	}
	return probs[:windows]
}

// stream feeds pcm in frames of random sizes (1-2000 samples), then
// flushes, and returns every event reported.
func stream(t *testing.T, d *Detector, pcm []float32, r *rand.Rand) []Event {
	t.Helper()
	events, err := Feed(d, pcm, func() int { return 1 + r.IntN(2000) })
	require.NoError(t, err)
	return events
}

// offline feeds pcm as one frame, then flushes.
func offline(t *testing.T, d *Detector, pcm []float32) []Event {
	t.Helper()
	events, err := Feed(d, pcm, nil)
	require.NoError(t, err)
	return events
}

func TestStreamingEqualsOffline(t *testing.T) {
	configs := []Config{scripted(), {Threshold: 0.6, MinSpeech: 0, MinSilence: 0, SpeechPad: 100 * time.Millisecond},
		{Threshold: 0.5, ExitThreshold: 0.2, MinSpeech: 64 * time.Millisecond, MinSilence: 300 * time.Millisecond, SpeechPad: 0}}
	total := 0
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		cfg := configs[int(seed)%len(configs)]
		samples := r.IntN(200 * WindowSize)
		pcm := rampPCM(samples)
		d, err := NewDetector(&posProber{probs: randomProbs(r, samples/WindowSize+1)}, cfg)
		require.NoError(t, err)

		want := offline(t, d, pcm)
		segs, err := Segments(context.Background(), d, audio.SliceSource(pcm))
		require.NoError(t, err)
		require.Len(t, segs, len(want)/2)
		total += len(segs)
		for i, s := range segs {
			assert.Equal(t, want[2*i].Pos, s.Start)
			assert.Equal(t, want[2*i+1].Pos, s.End)
			assert.Less(t, s.Start, s.End)
			if i > 0 {
				assert.LessOrEqual(t, segs[i-1].End, s.Start)
			}
		}
		for range 3 {
			require.Equal(t, want, stream(t, d, pcm, r), "seed %d", seed)
		}
	}
	assert.Greater(t, total, 500, "the random scripts should make plenty of segments")
}

func TestProcessDoesNotAllocate(t *testing.T) {
	d, err := NewDetector(newScript(nil), scripted())
	require.NoError(t, err)
	frame := make([]float32, 160)
	pos := int64(0)
	allocs := testing.AllocsPerRun(200, func() {
		_, err := d.Process(audio.Frame{Format: audio.Mono16k, Pos: pos, Samples: frame})
		require.NoError(t, err)
		pos += int64(len(frame))
	})
	assert.Zero(t, allocs, "a frame without events should cost no garbage")
}

func TestSegmentsEmpty(t *testing.T) {
	d, err := NewDetector(newScript(nil), scripted())
	require.NoError(t, err)
	segs, err := Segments(context.Background(), d, audio.SliceSource(nil))
	require.NoError(t, err)
	assert.Empty(t, segs)
}

func TestPairRejectsBadSequences(t *testing.T) {
	_, err := pair([]Event{{Kind: SpeechEnd, Pos: 1}})
	require.Error(t, err)
	_, err = pair([]Event{{Kind: SpeechStart, Pos: 1}})
	require.Error(t, err)
}
