package xasr

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
)

// TestCachesAreFedBack checks that each chunk's input caches are the
// previous chunk's new_* outputs, and that those are not zero.
func TestCachesAreFedBack(t *testing.T) {
	r := openTiny(t)
	var prevOut [][]float64 // copies of the new_* outputs of the last run
	runs := 0
	r.afterEncoder = func() {
		runs++
		var cur [][]float64
		for i, s := range r.states {
			in, out := values(s.in), values(s.out)
			if runs > 1 {
				assert.Equal(t, prevOut[i], in, "chunk %d: %s is not chunk %d's new_%s", runs, s.spec.name, runs-1, s.spec.name)
			} else {
				assert.Equal(t, make([]float64, len(in)), in, "first chunk: %s starts at zero", s.spec.name)
			}
			assert.NotEqual(t, make([]float64, len(out)), out, "chunk %d: new_%s is all zeros", runs, s.spec.name)
			cur = append(cur, out)
		}
		prevOut = cur
	}
	src := &sliceSource{frames: patternFrames(29 + 3*16)}
	require.NoError(t, r.decode(t.Context(), src, false))
	assert.Equal(t, 4, runs)
	// processed_lens counts subsampled frames: 8 per 160 ms chunk.
	assert.Equal(t, []float64{4 * 8}, values(r.lens.in))

	// Reset zeroes them again.
	r.Reset()
	for _, s := range r.states {
		assert.Equal(t, make([]float64, len(values(s.in))), values(s.in), s.spec.name)
	}
}

func values(v ort.Value) []float64 {
	var out []float64
	switch t := v.(type) {
	case *ort.Tensor[float32]:
		for _, x := range t.GetData() {
			out = append(out, float64(x))
		}
	case *ort.Tensor[int64]:
		for _, x := range t.GetData() {
			out = append(out, float64(x))
		}
	case *ort.Tensor[int32]:
		for _, x := range t.GetData() {
			out = append(out, float64(x))
		}
	}
	return out
}

// TestCachesMatterOnAudio: the same audio decoded with the caches
// forgotten between chunks gives different tokens.
func TestCachesMatterOnAudio(t *testing.T) {
	r := openTiny(t)
	pcm := testSignal(3)
	want := recognize(t, r, pcm, fixed(320))
	r.zeroStatesEachChunk = true
	got := recognize(t, r, pcm, fixed(320))
	assert.NotEqual(t, want.Tokens, got.Tokens)
}

func TestDeterministic(t *testing.T) {
	r := openTiny(t)
	pcm := testSignal(4)
	first := recognize(t, r, pcm, fixed(320))
	t.Logf("%d tokens: %q", len(first.Tokens), first.Text)
	require.NotEmpty(t, first.Tokens, "the tiny model emits on this audio")
	require.NotEmpty(t, first.Text)

	// Finalize reset the recognizer: the same audio again gives the same.
	again := recognize(t, r, pcm, fixed(320))
	assert.Equal(t, first, again)

	// An explicit Reset mid-utterance drops everything.
	feed(t, r, testSignal(1.3), fixed(480))
	require.NotZero(t, r.chunks)
	r.Reset()
	assert.Empty(t, r.Hypothesis())
	assert.Equal(t, first, recognize(t, r, pcm, fixed(320)))

	// A second recognizer agrees.
	r2 := openTiny(t)
	assert.Equal(t, first, recognize(t, r2, pcm, fixed(1600)))
}

// TestChunkingDoesNotMatter: frames of random sizes (1..5000 samples,
// contiguous) give exactly the result of fixed 20 ms frames.
func TestChunkingDoesNotMatter(t *testing.T) {
	r := openTiny(t)
	pcm := testSignal(3.5)
	want := recognize(t, r, pcm, fixed(320))
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 99))
		got := recognize(t, r, pcm, func() int { return 1 + rng.IntN(5000) })
		assert.Equal(t, want, got, "seed %d", seed)
	}
	// All at once.
	assert.Equal(t, want, recognize(t, r, pcm, fixed(len(pcm))))
}

// TestPartialsGrow: each partial extends the previous one, the final text
// is the last hypothesis plus a closing full stop, and Finalize resets.
func TestPartialsGrow(t *testing.T) {
	r := openTiny(t)
	pcm := testSignal(4)
	partials := feed(t, r, pcm, fixed(320))
	hyp := r.Hypothesis()
	res, err := r.FinalizeResult()
	require.NoError(t, err)

	prev, changes := "", 0
	for i, p := range partials {
		require.True(t, strings.HasPrefix(p, prev), "partial %d %q does not extend %q", i, p, prev)
		if p != prev {
			changes++
		}
		prev = p
	}
	assert.Greater(t, changes, 3, "partials should grow as audio arrives")
	assert.Equal(t, r.tokens.Detokenize(hyp), prev)
	assert.True(t, slices.Equal(hyp, res.Tokens[:len(hyp)]), "the final tokens extend the partial hypothesis")
	body := r.tokens.Detokenize(res.Tokens)
	assert.True(t, strings.HasPrefix(body, prev))
	assert.Equal(t, AddFinalStop(body), res.Text)
	last := []rune(res.Text)[len([]rune(res.Text))-1]
	assert.True(t, isPunct(last), "final text %q ends in punctuation", res.Text)

	// Reset by Finalize: nothing pending, and the next utterance starts clean.
	assert.Empty(t, r.Hypothesis())
	assert.Zero(t, r.samples)
	assert.Zero(t, r.fb.Ready())
	got, err := r.Finalize()
	require.NoError(t, err)
	assert.Equal(t, "", got, "Finalize with no audio is empty")
	again := recognize(t, r, pcm, fixed(320))
	assert.Equal(t, res, again)
}

// TestFinalizeDecodesTheTail: the tail padding is decoded, in full windows
// only, while a frame past the window is ready (sherpa-onnx's IsReady,
// sherpa-onnx/csrc/online-recognizer-transducer-impl.h:248-251): more
// chunks run in Finalize than the audio alone allowed, and no padded one.
func TestFinalizeDecodesTheTail(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples int
	}{
		{"frames not a whole number of windows", 32480},
		// 32720 + 12800 samples are 285 frames, 29 + 16·16: the window at
		// frame 256 ends at the last frame, and sherpa-onnx leaves it.
		{"the last window ends at the last frame", 32720},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openTiny(t)
			pcm := testSignal(3)[:tc.samples]
			feed(t, r, pcm, fixed(320))
			before := r.chunks
			var finalChunks int
			r.afterEncoder = func() { finalChunks = r.chunks + 1 }
			_, err := r.Finalize()
			require.NoError(t, err)
			frames := fbank.NumFrames(len(pcm) + len(r.tail))
			// Windows start every shift frames while start + T < frames.
			assert.Equal(t, (frames-r.info.Window-1)/r.info.Shift+1, finalChunks, "%d frames", frames)
			assert.Greater(t, finalChunks, before)
		})
	}
}

// The decoder context before the first token is icefall's [-1, blank].
func TestDecoderContext(t *testing.T) {
	r := openTiny(t)
	for _, tc := range []struct {
		hyp  []int
		want []int64
	}{
		{nil, []int64{-1, 0}},
		{[]int{5}, []int64{0, 5}},
		{[]int{5, 7}, []int64{5, 7}},
		{[]int{5, 7, 9}, []int64{7, 9}},
	} {
		r.hyp = tc.hyp
		require.NoError(t, r.runDecoder())
		assert.Equal(t, tc.want, r.y.GetData(), "hyp %v", tc.hyp)
	}
	id, ok := r.tokens.ID("<unk>")
	require.True(t, ok)
	assert.Equal(t, id, r.unk, "<unk> is treated as blank")
}

// The quiet after the speech, given to Accept, is padding the recognizer
// need not add again: the encoder sees the same audio, so the same
// transcript, in fewer calls at the end.
func TestFinalizeAfterQuiet(t *testing.T) {
	const quiet = 400 * time.Millisecond
	speech := testSignal(2.03)
	r := openTiny(t)
	calls := 0
	r.afterEncoder = func() { calls++ }

	feed(t, r, speech, fixed(320))
	calls = 0
	padded, err := r.Finalize()
	require.NoError(t, err)
	paddedCalls := calls

	feed(t, r, append(slices.Clone(speech), make([]float32, audio.Mono16k.Samples(quiet))...), fixed(320))
	calls = 0
	afterQuiet, err := r.FinalizeAfter(t.Context(), quiet)
	require.NoError(t, err)
	require.NotEmpty(t, padded, "the tiny model decodes the test signal to something")
	assert.Equal(t, padded, afterQuiet, "transcript")
	// 400 ms are 40 feature frames: two and a half windows' shift fewer.
	assert.InDelta(t, float64(paddedCalls)-2.5, float64(calls), 0.5, "encoder calls at the end (%d with the whole padding)", paddedCalls)

	// More quiet than the padding pads nothing, and a negative quiet all of it.
	for _, q := range []time.Duration{-time.Second, 10 * time.Second} {
		feed(t, r, speech, fixed(320))
		_, err := r.FinalizeAfter(t.Context(), q)
		require.NoError(t, err, "quiet %v", q)
	}
}

// A final whose context is cancelled stops before the next encoder call,
// with the context's error, and leaves the recognizer reset for the next
// utterance.
func TestFinalizeStopsWhenCancelled(t *testing.T) {
	speech := testSignal(2.03)
	r := openTiny(t)
	feed(t, r, speech, fixed(320))
	calls := 0
	r.afterEncoder = func() { calls++ }
	_, err := r.Finalize()
	require.NoError(t, err)
	whole := calls
	require.Greater(t, whole, 2, "the padding takes several encoder calls")

	feed(t, r, speech, fixed(320))
	ctx, cancel := context.WithCancel(t.Context())
	calls = 0
	r.afterEncoder = func() {
		calls++
		cancel()
	}
	_, err = r.FinalizeAfter(ctx, 0)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls, "encoder calls after the cancel")

	r.afterEncoder = nil
	feed(t, r, speech, fixed(320))
	again, err := r.FinalizeAfter(t.Context(), 0)
	require.NoError(t, err)
	assert.NotEmpty(t, again)
}

// A fork finalized mid-utterance gives the final a commit then would, and
// the recognizer it came from goes on as if it had never been forked, even
// with the fork decoding at the same time.
func TestForkFinalizesACopy(t *testing.T) {
	speech, more := testSignal(2.03), testSignal(1.21)
	want := openTiny(t)
	feed(t, want, speech, fixed(320))
	wantNow, err := want.Finalize()
	require.NoError(t, err)
	require.NotEmpty(t, wantNow)
	feed(t, want, append(slices.Clone(speech), more...), fixed(320))
	wantLater, err := want.Finalize()
	require.NoError(t, err)

	r := openTiny(t)
	feed(t, r, speech, fixed(320))
	fork, err := r.Fork()
	require.NoError(t, err)
	done := make(chan string, 1)
	go func() {
		now, err := fork.Finalize()
		assert.NoError(t, err)
		done <- now
	}()
	feed(t, r, more, fixed(320))
	assert.Equal(t, wantNow, <-done, "the fork's final")
	require.NoError(t, fork.Close())
	later, err := r.Finalize()
	require.NoError(t, err)
	assert.Equal(t, wantLater, later, "the recognizer's final")

	// Closing the fork left the sessions to r.
	feed(t, r, speech, fixed(320))
	again, err := r.Finalize()
	require.NoError(t, err)
	assert.Equal(t, wantNow, again)
}
