package moss

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// attentionTTS is a small TTS set with the full-size stand-in's global
// transformer: 2 layers of 2 heads of 8, its decode step's caches growing
// by a Concat the attention reads transposed
// (scripts/models/make_attention_tts.py).
const attentionTTS = "testdata/attention-tts"

func openAttentionTTS(t *testing.T, opts Options) *Synthesizer {
	t.Helper()
	testenv.ONNXRuntime(t)
	s, err := Open(attentionTTS, codecDir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// spoken is what a synthesizer said for a text: its frames and audio.
type spoken struct {
	frames [][]int32
	audio  []float32
}

func speakFrames(t *testing.T, s *Synthesizer, text string) spoken {
	t.Helper()
	var out spoken
	s.onFrame = func(f []int32) { out.frames = append(out.frames, f) }
	defer func() { s.onFrame = nil }()
	require.NoError(t, s.speak(context.Background(), []string{text}, func(a []float32) error {
		out.audio = append(out.audio, a...)
		return nil
	}))
	return out
}

// A decode step whose KV cache grows by copies is loaded on ONNX
// Runtime's GroupQueryAttention over one set of buffers it writes in
// place (onnxruntime contrib_ops/cpu/bert/gqa_attention_base.h, ApplyAttention:
// past_present_share_buffer when past_key's data is present_key's), laid
// [1, heads, rows, head_dim], the voice prompt's rows first, and fed a
// chunk's text rows at once after them: the prefill graph is not opened.
// It says what the growing cache says: the same frames and audio in
// English and Chinese, whether the growing form steps through a chunk's
// text from the prompt's cache or prefills it with the prompt, and when
// the buffers must grow in the middle of a chunk. Upstream's runtime
// feeds each step's present_* back as the next past_* (OpenMOSS/MOSS-TTS-Nano
// onnx_tts_runtime.py, _decode_step) and prefills each chunk's whole
// request (_prefill), which the growing form does.
func TestDecodeStepKVIsWrittenInPlace(t *testing.T) {
	shared := openAttentionTTS(t, Options{})
	growing := openAttentionTTS(t, Options{growingKV: true})
	require.True(t, shared.sharedDecode)
	require.NotNil(t, shared.kv)
	assert.Nil(t, shared.promptKV, "the prompt's rows live in the shared cache")
	assert.Nil(t, shared.prefill, "the prefill graph is not opened")
	require.NotNil(t, growing.prefill)
	assert.Equal(t, shared.promptLen+kvRowsAhead, shared.kv.rows)
	assert.Equal(t, ort.NewShape(1, 2, int64(shared.promptLen+kvRowsAhead), 8), shared.kv.tensors[0].(*ort.Tensor[float32]).GetShape())
	require.False(t, growing.sharedDecode)
	require.Nil(t, growing.kv)

	ways := []struct {
		name   string
		before func(s *Synthesizer)
	}{
		{"stepped", func(s *Synthesizer) { s.stepCost.d, s.rowCost.d = time.Nanosecond, time.Hour }},
		{"prefilled", func(s *Synthesizer) { s.stepCost.d, s.rowCost.d = time.Hour, time.Nanosecond }},
		{"grown", func(s *Synthesizer) {
			s.stepCost.d, s.rowCost.d = time.Nanosecond, time.Hour
			if s.kv != nil {
				require.NoError(t, s.kv.resize(s.kv.bufs, s.promptLen+1))
			}
		}},
	}
	texts := []string{"The capital of France is Paris, and it is lovely in spring.", "法国的首都是巴黎，春天很美。"}
	for _, text := range texts {
		for _, way := range ways {
			way.before(growing)
			want := speakFrames(t, growing, text)
			way.before(shared)
			got := speakFrames(t, shared, text)
			require.NotEmpty(t, want.frames, "%q %s", text, way.name)
			assert.Equal(t, want.frames, got.frames, "%q %s: frames", text, way.name)
			assert.Equal(t, want.audio, got.audio, "%q %s: audio", text, way.name)
		}
	}
	assert.Greater(t, shared.kv.rows, shared.promptLen+1, "the cache grew")

	// Each chunk's text was one run, told apart from the steps.
	runs := map[string]GraphRuns{}
	for _, r := range shared.Runs() {
		runs[r.Graph] = r
	}
	require.NotContains(t, runs, "prefill")
	require.Contains(t, runs, "text rows")
	assert.Equal(t, 1+len(texts)*len(ways), runs["text rows"].Calls, "the voice prompt at Open, then each chunk's text")
	assert.Equal(t, BatchedRuns, runs["text rows"].Runs)
	assert.Equal(t, OneRowRuns, runs["decode step"].Runs)
	assert.Equal(t, shared.decode.Runs().Calls, runs["text rows"].Calls+runs["decode step"].Calls)
}

// The verdict stays: a later load opens the shared form it made, without
// deriving it again; and a rewrite that scales the attention's scores
// wrongly (by a half, not 1/sqrt(8)) is refused by the check.
func TestSharedKVIsCheckedAndKept(t *testing.T) {
	first := openAttentionTTS(t, Options{})
	require.True(t, first.sharedDecode)
	made, err := filepath.Glob(filepath.Join(derivedRoot(t), "moss-shared-kv", "*", "moss_tts_decode_step.onnx"))
	require.NoError(t, err)
	require.Len(t, made, 1)
	info, err := os.Stat(made[0])
	require.NoError(t, err)
	again := openAttentionTTS(t, Options{})
	require.True(t, again.sharedDecode)
	after, err := os.Stat(made[0])
	require.NoError(t, err)
	assert.Equal(t, info.ModTime(), after.ModTime(), "the shared form is not made again")

	growing := openAttentionTTS(t, Options{growingKV: true})
	var scale, half [5]byte
	scale[0], half[0] = 0x15, 0x15 // AttributeProto.f, fixed32
	binary.LittleEndian.PutUint32(scale[1:], math.Float32bits(float32(1/math.Sqrt(8))))
	binary.LittleEndian.PutUint32(half[1:], math.Float32bits(0.5))
	growing.tamperKV = func(graph []byte) []byte {
		require.Equal(t, 2, bytes.Count(graph, scale[:]), "one scale a layer")
		return bytes.ReplaceAll(graph, scale[:], half[:])
	}
	decode, prefill := graphFile{path: filepath.Join(attentionTTS, "moss_tts_decode_step.onnx")}, graphFile{path: filepath.Join(attentionTTS, "moss_tts_prefill.onnx")}
	decode.ins, decode.outs = growing.decodeTensors()
	prefill.ins, prefill.outs = growing.prefillTensors()
	verdict, err := growing.deriveSharedKV(decode, prefill, filepath.Join(t.TempDir(), "moss_tts_decode_step.onnx"), onnx.Options{})
	require.NoError(t, err)
	assert.Contains(t, verdict, "not kept: its hidden states or caches differ")
}

// The tiny set's decode step has no attention (it mixes its caches by a
// mean): it keeps its growing cache, and the verdict says why.
func TestDecodeStepWithoutAttentionGrowsItsCache(t *testing.T) {
	s := openTiny(t, loadGolden(t))
	assert.False(t, s.sharedDecode)
	assert.Nil(t, s.kv)
	assert.NotNil(t, s.promptKV)
	verdicts, err := filepath.Glob(filepath.Join(derivedRoot(t), "moss-shared-kv", "*", derivedVerdict))
	require.NoError(t, err)
	var said []string
	for _, path := range verdicts {
		v, err := os.ReadFile(path)
		require.NoError(t, err)
		said = append(said, string(v))
	}
	assert.Contains(t, said, "not rewritten: the graph's attention is not one a shared KV buffer can replace: past_key_0 is read by [ReduceMean Concat], not by a Concat that is present_key_0 and Shapes\n")
}

// BenchmarkDecodeStep times a decode step with its KV cache growing by
// copies and written in place, 250 rows after the voice prompt (a
// sentence's text and frames). On the attention set by default;
// VOICE_BENCH_MOSS=DIR (a model set with MOSS-TTS-Nano-100M-ONNX and
// MOSS-Audio-Tokenizer-Nano-ONNX, e.g. the full-size stand-ins of
// scripts/bench-scale) times the real sizes, one thread:
//
//	VOICE_BENCH_MOSS=~/.cache/voice-agent/standins/int4 go test ./tts/moss -run - -bench DecodeStep
func BenchmarkDecodeStep(b *testing.B) {
	testenv.ONNXRuntime(b)
	tts, codec := attentionTTS, codecDir
	if dir := os.Getenv("VOICE_BENCH_MOSS"); dir != "" {
		tts, codec = filepath.Join(dir, "MOSS-TTS-Nano-100M-ONNX"), filepath.Join(dir, "MOSS-Audio-Tokenizer-Nano-ONNX")
	}
	for _, form := range []struct {
		name    string
		growing bool
	}{{"growing", true}, {"shared", false}} {
		s, err := Open(tts, codec, Options{growingKV: form.growing, ONNX: onnx.Options{IntraThreads: 1}})
		require.NoError(b, err)
		require.Equal(b, !form.growing, s.sharedDecode, "the shared form is kept")
		g, err := s.newGlobalState()
		require.NoError(b, err)
		row := s.cfg.row(nil, s.cfg.assistantSlot, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		for range 250 {
			require.NoError(b, g.step(row, true))
		}
		b.Run(form.name, func(b *testing.B) {
			for b.Loop() {
				if err := g.step(row, false); err != nil {
					b.Fatal(err)
				}
			}
		})
		g.close()
		require.NoError(b, s.Close())
	}
}

// BenchmarkChunkText times bringing the global transformer to the end of
// a chunk's request: bench stages' 17-word sentence, stepped row by row
// or prefilled with the voice prompt (the growing cache), or fed at once
// after the prompt's rows (the shared form). Like BenchmarkDecodeStep, on
// the attention set or VOICE_BENCH_MOSS's:
//
//	VOICE_BENCH_MOSS=~/.cache/voice-agent/standins/int4 go test ./tts/moss -run - -bench ChunkText
func BenchmarkChunkText(b *testing.B) {
	testenv.ONNXRuntime(b)
	tts, codec := attentionTTS, codecDir
	if dir := os.Getenv("VOICE_BENCH_MOSS"); dir != "" {
		tts, codec = filepath.Join(dir, "MOSS-TTS-Nano-100M-ONNX"), filepath.Join(dir, "MOSS-Audio-Tokenizer-Nano-ONNX")
	}
	const sentence = "Sure. The capital of France is Paris, a city of about two million people on the Seine."
	for _, form := range []struct {
		name    string
		growing bool
		costs   func(s *Synthesizer)
	}{
		{"stepped", true, func(s *Synthesizer) { s.stepCost.d, s.rowCost.d = time.Nanosecond, time.Hour }},
		{"prefilled", true, func(s *Synthesizer) { s.stepCost.d, s.rowCost.d = time.Hour, time.Nanosecond }},
		{"fed", false, func(*Synthesizer) {}},
	} {
		s, err := Open(tts, codec, Options{growingKV: form.growing, ONNX: onnx.Options{IntraThreads: 1}})
		require.NoError(b, err)
		require.Equal(b, !form.growing, s.sharedDecode, "the shared form is kept")
		text := s.tok.Encode(sentence)
		b.Run(form.name, func(b *testing.B) {
			for b.Loop() {
				form.costs(s)
				g, err := s.newGlobalState()
				if err != nil {
					b.Fatal(err)
				}
				err = g.start(context.Background(), text)
				g.close()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(s.textRows(text))/s.cfg.rowWidth), "rows")
		})
		require.NoError(b, s.Close())
	}
}
