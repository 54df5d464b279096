package xasr

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// The tiny model (scripts/models/make_tiny_xasr.py) has X-ASR's exact
// signature and metadata with random weights; it lives in testdata/tiny
// without a tokens.txt, so tests assemble model directories from it and
// the real token table.
var tinyDir = filepath.Join("testdata", "tiny")

// modelDir returns a temporary model directory linking the given files:
// name in the directory -> file under testdata.
func modelDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		abs, err := filepath.Abs(filepath.Join("testdata", src))
		require.NoError(t, err)
		require.NoError(t, os.Symlink(abs, filepath.Join(dir, name)))
	}
	return dir
}

func tinyFiles() map[string]string {
	return map[string]string{
		"encoder.int8.onnx": "tiny/encoder.int8.onnx",
		"decoder.onnx":      "tiny/decoder.onnx",
		"joiner.int8.onnx":  "tiny/joiner.int8.onnx",
		"tokens.txt":        "tokens.txt",
	}
}

func openTiny(t testing.TB) *Recognizer {
	t.Helper()
	testenv.ONNXRuntime(t)
	r, err := New(modelDir(t, tinyFiles()), onnx.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	return r
}

// testSignal is deterministic "real-ish" audio: a little noise, a rising
// chirp, a pause, an amplitude-modulated tone (16 kHz mono).
func testSignal(seconds float64) []float32 {
	n := int(seconds * audio.ProcessingRate)
	rng := rand.New(rand.NewPCG(7, 11))
	out := make([]float32, n)
	for i := range out {
		t := float64(i) / audio.ProcessingRate
		var v float64
		switch c := math.Mod(t, 3.2); {
		case c < 0.3:
		case c < 2.1:
			u := c - 0.3
			v = 0.3 * math.Sin(2*math.Pi*(150*u+400*u*u))
		case c < 2.4:
		default:
			v = 0.2 * (0.6 + 0.4*math.Sin(2*math.Pi*3*t)) * math.Sin(2*math.Pi*440*t)
		}
		out[i] = float32(v + 0.01*rng.NormFloat64())
	}
	return out
}

// feed passes pcm in frames of the given sizes (cycled), with contiguous
// positions, and returns every partial.
func feed(t testing.TB, r *Recognizer, pcm []float32, sizes func() int) []string {
	t.Helper()
	var partials []string
	for pos := 0; pos < len(pcm); {
		n := min(sizes(), len(pcm)-pos)
		p, err := r.Accept(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: pcm[pos : pos+n]})
		require.NoError(t, err)
		partials = append(partials, p)
		pos += n
	}
	return partials
}

func fixed(n int) func() int { return func() int { return n } }

func recognize(t testing.TB, r *Recognizer, pcm []float32, sizes func() int) Result {
	t.Helper()
	feed(t, r, pcm, sizes)
	res, err := r.FinalizeResult()
	require.NoError(t, err)
	return res
}

func TestInfoFromTheModel(t *testing.T) {
	r := openTiny(t)
	info := r.Info()
	assert.Equal(t, 29, info.Window)
	assert.Equal(t, 16, info.Shift)
	assert.Equal(t, 4, info.FramesPerChunk)
	assert.Equal(t, 19, info.Layers)
	assert.Equal(t, 19*6+2, info.Caches)
	assert.Equal(t, 2, info.ContextSize)
	assert.Equal(t, 5000, info.Vocab)
	assert.Equal(t, 16, info.Dim)
	assert.True(t, info.ProcessedLensFromModel)
	assert.Equal(t, "zipformer2", info.EncoderMeta["model_type"])
	assert.Equal(t, "2", info.DecoderMeta["context_size"])

	// Every cache is sized from its declaration, batch axis at 1.
	byName := map[string]*state{}
	for _, s := range r.states {
		byName[s.spec.name] = s
	}
	for name, want := range map[string][]int64{
		"cached_key_0":         {8, 1, 8},
		"cached_nonlin_attn_0": {1, 1, 8, 6},
		"cached_val1_9":        {1, 1, 4}, // stack 3: left context 1
		"cached_conv2_18":      {1, 8, 2},
		"cached_conv1_8":       {1, 16, 1},
		"embed_states":         {1, 128, 3, 19},
		"processed_lens":       {1},
	} {
		require.Contains(t, byName, name)
		assert.Equal(t, ort.Shape(want), byName[name].in.GetShape(), name)
	}
	assert.Equal(t, 1, byName["cached_key_3"].spec.batchAxis)
	assert.Equal(t, 0, byName["cached_conv1_3"].spec.batchAxis)
	assert.Equal(t, 0, byName["embed_states"].spec.batchAxis)
}

type golden struct {
	Frames int   `json:"frames"`
	Tokens []int `json:"tokens"`
}

// sliceSource is a frameSource over precomputed frames.
type sliceSource struct {
	frames    [][]float32
	discarded int
}

func (s *sliceSource) Ready() int            { return len(s.frames) }
func (s *sliceSource) Frame(i int) []float32 { return s.frames[i] }
func (s *sliceSource) Discard(before int)    { s.discarded = max(s.discarded, before) }

// patternFrames is the golden input: f[t][m] = 4 sin(0.3 t + 0.17 m) +
// 2 cos(0.011 t m) - 6, as make_tiny_xasr.py computes it.
func patternFrames(n int) [][]float32 {
	out := make([][]float32, n)
	for t := range out {
		out[t] = make([]float32, fbank.NumBins)
		for m := range out[t] {
			ft, fm := float64(t), float64(m)
			out[t][m] = float32(4*math.Sin(0.3*ft+0.17*fm) + 2*math.Cos(0.011*ft*fm) - 6)
		}
	}
	return out
}

func loadGolden(t *testing.T) golden {
	raw, err := os.ReadFile(filepath.Join("testdata", "tiny_golden.json"))
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.Tokens)
	return g
}

// TestTinyGolden checks windowing, cache feeding and greedy search against
// the torch reference of the same model (make_tiny_xasr.py), on features
// that bypass fbank.
func TestTinyGolden(t *testing.T) {
	r := openTiny(t)
	g := loadGolden(t)
	src := &sliceSource{frames: patternFrames(g.Frames)}
	require.NoError(t, r.decode(t.Context(), src, false))
	assert.Equal(t, g.Tokens, r.hyp)
	assert.Equal(t, (g.Frames-r.info.Window)/r.info.Shift+1, r.chunks)
	assert.Equal(t, r.next, src.discarded, "frames before the next window are released")

	// The same, with the caches forgotten before every chunk: the golden
	// tokens depend on carrying them.
	r.Reset()
	r.zeroStatesEachChunk = true
	require.NoError(t, r.decode(t.Context(), &sliceSource{frames: patternFrames(g.Frames)}, false))
	assert.NotEqual(t, g.Tokens, r.hyp)
}

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

// TestFinalizeDecodesTheTail: the tail padding and the padded last window
// are decoded: more chunks run in Finalize than the audio alone allowed.
func TestFinalizeDecodesTheTail(t *testing.T) {
	r := openTiny(t)
	pcm := testSignal(2.03) // 203 frames: not a whole number of windows
	feed(t, r, pcm, fixed(320))
	before := r.chunks
	var finalChunks int
	r.afterEncoder = func() { finalChunks = r.chunks + 1 }
	_, err := r.Finalize()
	require.NoError(t, err)
	frames := fbank.NumFrames(len(pcm) + len(r.tail))
	// Every frame is the new part of some window: ceil(frames / shift) windows.
	assert.Equal(t, (frames+r.info.Shift-1)/r.info.Shift, finalChunks)
	assert.Greater(t, finalChunks, before)
}

func TestRejectsOtherFormats(t *testing.T) {
	r := openTiny(t)
	for _, f := range []audio.Format{{Rate: 8000, Channels: 1}, {Rate: 48000, Channels: 1}, {Rate: 16000, Channels: 2}} {
		_, err := r.Accept(audio.Frame{Format: f, Samples: make([]float32, 320)})
		require.Error(t, err, "%s", f)
		assert.Contains(t, err.Error(), f.String())
		assert.Contains(t, err.Error(), "16000 Hz/1ch")
		assert.Contains(t, err.Error(), "resample")
	}
	// NaN is refused by the features.
	_, err := r.Accept(audio.Frame{Format: audio.Mono16k, Samples: []float32{0, float32(math.NaN())}})
	require.ErrorIs(t, err, fbank.ErrNonFinite)
}

func TestMissingFiles(t *testing.T) {
	// No ONNX Runtime needed: the files are checked first.
	_, err := New("/nonexistent/x-asr", onnx.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/x-asr")
	assert.Contains(t, err.Error(), "download the X-ASR zh-en streaming 160 ms export")

	dir := modelDir(t, map[string]string{"tokens.txt": "tokens.txt"})
	_, err = New(dir, onnx.Options{})
	require.Error(t, err)
	for _, f := range []string{"encoder.int8.onnx (or encoder.onnx, encoder-160ms.onnx)", "decoder.onnx", "joiner.int8.onnx (or joiner.onnx, joiner-160ms.onnx)"} {
		assert.Contains(t, err.Error(), filepath.Join(dir, f))
	}
	assert.NotContains(t, err.Error(), "tokens.txt,")
	assert.Contains(t, err.Error(), "into "+dir)

	files := tinyFiles()
	delete(files, "tokens.txt")
	dir = modelDir(t, files)
	_, err = New(dir, onnx.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "tokens.txt"))
	assert.NotContains(t, err.Error(), filepath.Join(dir, "encoder"))

	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = New(f, onnx.Options{})
	require.ErrorContains(t, err, "not a directory")

	// A file that is there but cannot be reached is not "missing" (root
	// reads through permissions, so a symlink loop stands in for them).
	dir = modelDir(t, map[string]string{"tokens.txt": "tokens.txt"})
	loop := filepath.Join(dir, "encoder.int8.onnx")
	require.NoError(t, os.Symlink(loop, loop))
	_, err = New(dir, onnx.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), loop)
	assert.Contains(t, err.Error(), "too many levels of symbolic links")
	assert.NotContains(t, err.Error(), "missing")
}

// TestFP32Names: encoder.onnx / joiner.onnx are accepted when the int8
// files are absent.
func TestFP32Names(t *testing.T) {
	testenv.ONNXRuntime(t)
	r, err := New(modelDir(t, map[string]string{
		"encoder.onnx": "tiny/encoder.int8.onnx",
		"decoder.onnx": "tiny/decoder.onnx",
		"joiner.onnx":  "tiny/joiner.int8.onnx",
		"tokens.txt":   "tokens.txt",
	}), onnx.Options{})
	require.NoError(t, err)
	assert.Equal(t, "encoder.onnx", filepath.Base(r.Info().Encoder))
	assert.Equal(t, "joiner.onnx", filepath.Base(r.Info().Joiner))
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close twice")
	_, err = r.Accept(audio.Frame{Format: audio.Mono16k, Samples: make([]float32, 10)})
	require.ErrorIs(t, err, errClosed)
	_, err = r.Finalize()
	require.ErrorIs(t, err, errClosed)
	r.Reset() // no panic
}

// The names X-ASR publishes its 160 ms export under.
func TestPublishedNames(t *testing.T) {
	testenv.ONNXRuntime(t)
	r, err := New(modelDir(t, map[string]string{
		"encoder-160ms.onnx": "tiny/encoder.int8.onnx",
		"decoder-160ms.onnx": "tiny/decoder.onnx",
		"joiner-160ms.onnx":  "tiny/joiner.int8.onnx",
		"tokens.txt":         "tokens.txt",
	}), onnx.Options{})
	require.NoError(t, err)
	assert.Equal(t, "encoder-160ms.onnx", filepath.Base(r.Info().Encoder))
	assert.Equal(t, "decoder-160ms.onnx", filepath.Base(r.Info().Decoder))
	assert.Equal(t, "joiner-160ms.onnx", filepath.Base(r.Info().Joiner))
	require.NoError(t, r.Close())
}

func TestWrongModels(t *testing.T) {
	testenv.ONNXRuntime(t)
	files := tinyFiles()
	files["encoder.int8.onnx"] = "encoder_wrong_input.onnx"
	_, err := New(modelDir(t, files), onnx.Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	assert.Contains(t, err.Error(), `no input "x"`)
	assert.Contains(t, err.Error(), "features")

	// The decoder where the encoder belongs.
	files = tinyFiles()
	files["encoder.int8.onnx"] = "tiny/decoder.onnx"
	_, err = New(modelDir(t, files), onnx.Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)

	// Encoder and joiner swapped.
	files = tinyFiles()
	files["joiner.int8.onnx"] = "tiny/decoder.onnx"
	_, err = New(modelDir(t, files), onnx.Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	assert.Contains(t, err.Error(), "joiner.int8.onnx")

	// A file that is not a model.
	dir := t.TempDir()
	for name, src := range tinyFiles() {
		abs, _ := filepath.Abs(filepath.Join("testdata", src))
		require.NoError(t, os.Symlink(abs, filepath.Join(dir, name)))
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "decoder.onnx")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "decoder.onnx"), []byte("not a model"), 0o644))
	_, err = New(dir, onnx.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decoder.onnx")
	assert.Contains(t, err.Error(), "corrupt or not a model")
}

func TestBadTokenTables(t *testing.T) {
	testenv.ONNXRuntime(t)
	write := func(text string) string {
		dir := t.TempDir()
		for name, src := range tinyFiles() {
			if name == "tokens.txt" {
				continue
			}
			abs, _ := filepath.Abs(filepath.Join("testdata", src))
			require.NoError(t, os.Symlink(abs, filepath.Join(dir, name)))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte(text), 0o644))
		return dir
	}
	real, err := os.ReadFile(realTokens)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(real), "\n")

	// Corrupt line 101.
	bad := slices.Clone(lines)
	bad[100] = "garbage\n"
	dir := write(strings.Join(bad, ""))
	_, err = New(dir, onnx.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "tokens.txt")+":101")

	// A valid table of the wrong size for the model.
	dir = write(strings.Join(lines[:4000], ""))
	_, err = New(dir, onnx.Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	assert.Contains(t, err.Error(), "4000 tokens")
}

// BenchmarkRecognizerChunk measures one 160 ms chunk (features, encoder,
// greedy search) on the tiny model: informational, the real encoder is
// far larger.
func BenchmarkRecognizerChunk(b *testing.B) {
	r := openTiny(b)
	pcm := testSignal(10)
	chunk := r.info.Shift * fbank.FrameShift
	pos := 0
	b.ResetTimer()
	for b.Loop() {
		if pos+chunk > len(pcm) {
			r.Reset()
			pos = 0
		}
		_, err := r.Accept(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: pcm[pos : pos+chunk]})
		require.NoError(b, err)
		pos += chunk
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/chunk")
}

// TestProcessedLensFallback: an encoder that does not return
// new_processed_lens decodes exactly like one that does, the recognizer
// advancing processed_lens by decode_chunk_len/2 itself.
func TestProcessedLensFallback(t *testing.T) {
	testenv.ONNXRuntime(t)
	files := tinyFiles()
	files["encoder.int8.onnx"] = "encoder_no_new_lens.onnx"
	r, err := New(modelDir(t, files), onnx.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	assert.False(t, r.Info().ProcessedLensFromModel)

	g := loadGolden(t)
	require.NoError(t, r.decode(t.Context(), &sliceSource{frames: patternFrames(g.Frames)}, false))
	assert.Equal(t, g.Tokens, r.hyp)
	assert.Equal(t, []float64{float64(8 * r.chunks)}, values(r.lens.in))

	pcm := testSignal(3)
	r.Reset()
	want := recognize(t, openTiny(t), pcm, fixed(320))
	assert.Equal(t, want, recognize(t, r, pcm, fixed(320)))
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

// TestTinyAudioGolden runs the whole path from audio against the torch
// reference of the same model, fed as X-ASR's own streaming script feeds
// its model (Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:
// fbank options at 410-417, 0.3 s tail padding at 488-489, 1 s pieces and
// full windows of T frames advancing by decode_chunk_len at 499-523; see
// make_tiny_xasr.py for what stands in for kaldifeat and onnxruntime). The
// tokens differ with a filterbank up to Nyquist, so a wrong mel range, a
// wrong window or a lost cache fails here.
func TestTinyAudioGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "tiny_audio_golden.json"))
	require.NoError(t, err)
	var g struct {
		TailPadding   int   `json:"tail_padding_samples"`
		EncoderFrames int   `json:"encoder_frames"`
		Tokens        []int `json:"tokens"`
		TokensNyquist []int `json:"tokens_nyquist"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEqual(t, g.Tokens, g.TokensNyquist)
	speech, err := audio.ReadWAVMono16k(context.Background(), filepath.Join("..", "fbank", "testdata", "speech_16k.wav"))
	require.NoError(t, err)
	pcm := append(speech, make([]float32, g.TailPadding)...)

	decodeWith := func(opts fbank.Options) []int {
		r := openTiny(t)
		if opts != fbank.XASR {
			var err error
			r.fb, err = fbank.NewOnline(opts)
			require.NoError(t, err)
		}
		for start := 0; start < len(pcm); start += audio.ProcessingRate {
			_, err := r.Accept(audio.Frame{Format: audio.Mono16k, Samples: pcm[start:min(start+audio.ProcessingRate, len(pcm))]})
			require.NoError(t, err)
		}
		assert.Equal(t, g.EncoderFrames, 4*r.chunks, "encoder calls (the tiny encoder gives 4 frames a window)")
		return slices.Clone(r.hyp)
	}
	assert.Equal(t, g.Tokens, decodeWith(fbank.XASR))
	assert.Equal(t, g.TokensNyquist, decodeWith(fbank.Options{LowFreq: 20, HighFreq: 0}))
}
