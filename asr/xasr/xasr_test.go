package xasr

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/memstat"
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

// BenchmarkEncoderWindow times the encoder alone, one window a call, on
// the model set VOICE_BENCH_XASR names (a full-size stand-in, fp32 or
// 4-bit), with one intra-op thread as sherpa-onnx runs it, on the ONNX
// Runtime ONNXRUNTIME_LIB names (else scripts/setup's), from an optimized
// copy with mapped weights unless VOICE_ORT_MAPPED_WEIGHTS=0: the
// runtime-version figures in docs/performance.md. The windows are the
// demo recording's features, in turn.
//
//	VOICE_BENCH_XASR=~/.cache/voice-agent/standins/int4/xasr-zh-en-streaming-160ms \
//	  go test ./asr/xasr -run - -bench EncoderWindow -benchtime 200x
func BenchmarkEncoderWindow(b *testing.B) {
	dir := os.Getenv("VOICE_BENCH_XASR")
	if dir == "" {
		b.Skip("VOICE_BENCH_XASR names no model set")
	}
	testenv.ONNXRuntime(b)
	r, err := New(dir, onnx.Options{IntraThreads: 1})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, r.Close()) })
	pcm, err := audio.ReadWAVMono16k(b.Context(), filepath.Join("..", "..", "test", "testdata", "demo.wav"))
	require.NoError(b, err)
	frames, err := fbank.Compute(pcm, fbank.XASR)
	require.NoError(b, err)
	T, shift := r.info.Window, r.info.Shift
	windows := (len(frames)-T)/shift + 1
	x := r.x.GetData()
	var took []time.Duration
	w := 0
	for b.Loop() {
		for t := range T {
			copy(x[t*fbank.NumBins:], frames[w*shift+t])
		}
		w = (w + 1) % windows
		start := time.Now()
		require.NoError(b, r.enc.Run(r.encIns, r.encOuts))
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	ms := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.1), "p10_ms")
	b.ReportMetric(ms(0.5), "p50_ms")
	// What the loaded recognizer holds, and whether its encoder runs from
	// a mapped copy (ONNX Runtime 1.29 on saves 4-bit weights' packing).
	use := memstat.Now()
	b.ReportMetric(memstat.MiB(use.Anon), "anon_MiB")
	b.ReportMetric(memstat.MiB(use.RSS), "rss_MiB")
	mapped := 0.0
	if r.enc.Mapped != "" {
		mapped = 1
	}
	b.ReportMetric(mapped, "mapped")
}
