package xasr

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

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
