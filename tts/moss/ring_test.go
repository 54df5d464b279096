package moss

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// attentionCodec is a small codec with the full-size stand-in's attention
// and sliding caches (scripts/models/make_attention_codec.py): contexts 3,
// 5, 6 and 9, one layer per transformer, each adding 1, 2, 4 and 8 entries
// a frame.
const attentionCodec = "testdata/attention-codec"

func openAttentionCodec(t *testing.T, sliding bool) *Synthesizer {
	t.Helper()
	testenv.ONNXRuntime(t)
	s, err := Open(tinyDir, attentionCodec, Options{slidingCodec: sliding})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A codec whose caches slide is loaded as rings written in place: each
// ring its window plus what the largest call (8 frames) adds; one set of
// cache tensors, which both state sets share; and the same speech as the
// sliding caches give, in English and Chinese, to rounding (the attention
// sums its entries in the ring's order). Calls of 8 frames wrap every
// ring several times over these texts. Upstream's ring (OpenMOSS/MOSS-TTS
// moss_tts_delay/core/audio_tokenzier/modeling_moss_audio_tokenizer.py,
// RingKVCache.complete and MossAudioTokenizerMultiheadAttention.forward)
// writes at position mod capacity and masks by positions as the ring form
// does; its capacity is the window alone, which these rings exceed by a
// call's entries so that they say what the published sliding graph says.
func TestCodecCachesBecomeRings(t *testing.T) {
	ring := openAttentionCodec(t, false)
	sliding := openAttentionCodec(t, true)
	require.NotNil(t, ring.ring)
	require.Equal(t, []int64{3 + 8*1, 5 + 8*2, 6 + 8*4, 9 + 8*8}, ring.ring.lengths)
	assert.Equal(t, []int64{1, 2, 8, 3 + 8}, ring.ring.shapes["attn_cached_keys_0"], "the keys lie as the attention reads them")
	assert.Equal(t, []int64{1, 2, 3 + 8, 8}, ring.ring.shapes["attn_cached_values_0"])
	require.Nil(t, sliding.ring)
	for k, v := range ring.codecSets[0] {
		if j := k - len(ring.offsets); j >= 0 && j%4 != 0 {
			assert.Same(t, v, ring.codecSets[1][k], "cache tensor %d is shared", k)
		} else {
			assert.NotSame(t, v, ring.codecSets[1][k], "offset %d swaps", k)
		}
	}
	for _, text := range []string{"The capital of France is Paris, and it is lovely in spring.", "法国的首都是巴黎，春天很美。"} {
		for _, batch := range []int{1, maxCodecBatch} {
			ring.codecBatch, sliding.codecBatch = batch, batch
			want, err := synth(t, sliding, context.Background(), text)
			require.NoError(t, err)
			got, err := synth(t, ring, context.Background(), text)
			require.NoError(t, err)
			require.Equal(t, want.frames, got.frames, "%q: the same frames", text)
			require.Len(t, got.audio, len(want.audio))
			require.Greater(t, 8*len(want.frames), 73, "%q wraps the ring of 8 entries a frame (73 long)", text)
			peak, diff := 0.0, 0.0
			for i := range want.audio {
				peak = max(peak, math.Abs(float64(want.audio[i])))
				diff = max(diff, math.Abs(float64(got.audio[i]-want.audio[i])))
			}
			assert.Positive(t, peak)
			assert.LessOrEqual(t, diff, ringTolerance*peak, "%q, %d frames a call", text, batch)
		}
	}
}

// The verdict stays: a later load opens the ring form it made, without
// deriving it again; and one that does not wrap far enough (rings no
// longer than the windows, so an 8-frame call's first queries lose
// entries they see in the original) is refused by the check.
func TestRingCodecIsCheckedAndKept(t *testing.T) {
	first := openAttentionCodec(t, false)
	require.NotNil(t, first.ring)
	made, err := filepath.Glob(filepath.Join(derivedRoot(t), "moss-ring", "*", "moss_audio_tokenizer_decode_step.onnx"))
	require.NoError(t, err)
	require.Len(t, made, 1)
	info, err := os.Stat(made[0])
	require.NoError(t, err)
	again := openAttentionCodec(t, false)
	assert.Equal(t, first.ring, again.ring)
	after, err := os.Stat(made[0])
	require.NoError(t, err)
	assert.Equal(t, info.ModTime(), after.ModTime(), "the ring form is not made again")

	windows := make([]int64, len(first.attns))
	for i, a := range first.attns {
		windows[i] = a.CacheShape[2]
	}
	sliding := openAttentionCodec(t, true)
	ins, outs := sliding.codecTensors()
	verdict, err := sliding.deriveRing(filepath.Join(attentionCodec, "moss_audio_tokenizer_decode_step.onnx"),
		filepath.Join(t.TempDir(), "moss_audio_tokenizer_decode_step.onnx"), windows, []int64{1, 2, 4, 8}, ins, outs, codecOptions(Options{}.ONNX))
	require.NoError(t, err)
	assert.Contains(t, verdict, "not kept: its audio differs")
}

// The tiny set's codec reads its caches outside any attention (a mean of
// the first layer's keys): rewritten as rings, it would say something
// else. It keeps its sliding caches, and the verdict says why.
func TestCodecWithoutAttentionKeepsSlidingCaches(t *testing.T) {
	s := openTiny(t, loadGolden(t))
	assert.Nil(t, s.ring)
	verdicts, err := filepath.Glob(filepath.Join(derivedRoot(t), "moss-ring", "*", derivedVerdict))
	require.NoError(t, err)
	var said []string
	for _, path := range verdicts {
		v, err := os.ReadFile(path)
		require.NoError(t, err)
		said = append(said, string(v))
	}
	assert.Contains(t, said, "not rewritten: the graph's caches do not slide as a ring can replace: attn_cached_keys_0 is read by [ReduceMean Concat], not only as the first of a Concat's two inputs\n")
}

func derivedRoot(t *testing.T) string {
	root, err := derived.Root()
	require.NoError(t, err)
	return root
}

// BenchmarkCodecCall times a codec call of 1 and of 8 frames with its
// caches sliding and as rings, from a state that has decoded a few
// hundred frames (the caches full). On the attention codec by default,
// whose caches of 3-9 entries cost less to copy than the ring's few more
// nodes (0.6 against 1.5 ms a call: the ring pays off on large caches);
// VOICE_BENCH_MOSS=DIR (a model set with MOSS-TTS-Nano-100M-ONNX and
// MOSS-Audio-Tokenizer-Nano-ONNX, e.g. the full-size stand-ins of
// scripts/bench-scale) times the real sizes, one thread:
//
//	VOICE_BENCH_MOSS=~/.cache/voice-agent/standins/int4 go test ./tts/moss -run - -bench CodecCall
func BenchmarkCodecCall(b *testing.B) {
	testenv.ONNXRuntime(b)
	tts, codec := tinyDir, attentionCodec
	if dir := os.Getenv("VOICE_BENCH_MOSS"); dir != "" {
		tts, codec = filepath.Join(dir, "MOSS-TTS-Nano-100M-ONNX"), filepath.Join(dir, "MOSS-Audio-Tokenizer-Nano-ONNX")
	}
	for _, form := range []struct {
		name    string
		sliding bool
	}{{"sliding", true}, {"ring", false}} {
		s, err := Open(tts, codec, Options{slidingCodec: form.sliding, ONNX: onnx.Options{IntraThreads: 1}})
		require.NoError(b, err)
		frames := make([][]int32, 2*maxCodecBatch)
		for i := range frames {
			frames[i] = make([]int32, s.cfg.nVQ)
			for k := range frames[i] {
				frames[i][k] = int32((i*31 + k*17) % s.cfg.codebook)
			}
		}
		cs := s.codecRun(s.codecSets)
		for range 300 / maxCodecBatch {
			require.NoError(b, cs.decode(frames[:maxCodecBatch], nil))
		}
		for _, n := range []int{1, maxCodecBatch} {
			b.Run(fmt.Sprintf("%s/%d-frames", form.name, n), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if err := cs.decode(frames[i%maxCodecBatch:i%maxCodecBatch+n], nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		require.NoError(b, s.Close())
	}
}
