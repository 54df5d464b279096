package moss

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/tts/normalize"
)

// upstreamGolden is testdata/upstream_runtime_golden.json, written by
// scripts/models/moss_upstream_golden.py: OpenMOSS/MOSS-TTS-Nano's own
// OnnxTtsRuntime.synthesize (onnx_tts_runtime.py, ort_cpu_runtime.py at
// 42b46456) run unmodified on the tiny set, whose graphs a stub
// onnxruntime serves with the torch modules they were exported from.
type upstreamGolden struct {
	Upstream         string `json:"upstream"`
	Seed             int    `json:"seed"`
	SamplesPerFrame  int    `json:"samples_per_frame"`
	FrameHeadSamples int    `json:"frame_head_samples"`
	Modes            map[string]struct {
		Streaming          bool `json:"streaming"`
		CodecFramesPerCall int  `json:"codec_frames_per_call"`
	} `json:"modes"`
	Cases []upstreamCase `json:"cases"`
}

type upstreamCase struct {
	Name         string          `json:"name"`
	Text         string          `json:"text"`
	Voice        string          `json:"voice"`
	MaxNewFrames int             `json:"max_new_frames"`
	PreparedText string          `json:"prepared_text"`
	TextChunks   []string        `json:"text_chunks"`
	PauseSamples []int           `json:"pause_samples"`
	TotalSamples int             `json:"total_samples"`
	Chunks       []upstreamChunk `json:"chunks"`
	Decodes      []struct {
		Mode   string          `json:"mode"`
		Chunks []upstreamAudio `json:"chunks"`
	} `json:"decodes"`
}

type upstreamChunk struct {
	Text                 string      `json:"text"`
	TokenIDs             []int       `json:"token_ids"`
	PrefillRows          int         `json:"prefill_rows"`
	PrefillSHA256        string      `json:"prefill_input_ids_sha256"`
	PrefillTextColumn    []int32     `json:"prefill_text_column"`
	FirstPastValidLength int         `json:"first_past_valid_length"`
	Uniforms             [][]float32 `json:"uniforms"`
	Frames               [][]int32   `json:"frames"`
}

type upstreamAudio struct {
	CodecFramesPerCall []int       `json:"codec_frames_per_call"`
	Samples            int         `json:"samples"`
	RMS                []float64   `json:"rms"`
	Sum                []float64   `json:"sum"`
	FrameHeads         [][]float32 `json:"frame_heads"`
	Tail               [][]float32 `json:"tail"`
}

// upstreamTol is how far ONNX Runtime's audio may be from torch's (the
// stand-in's) per sample.
const upstreamTol = 1e-4

// TestUpstreamRuntimeGolden runs the whole path, text to audio, against
// upstream's runtime on the same text, voice and uniforms:
//
//   - the text: cleanText (upstream's normalize_tts_text, enable_wetext off)
//     and splitText (split_voice_clone_text, onnx_tts_runtime.py:627, budget
//     75, :607), each chunk encoded with the manifest's tokenizer (:534);
//   - the rows of each chunk's request (build_voice_clone_request_rows,
//     ort_cpu_runtime.py:494-514) and past_valid_lengths, the rows before
//     the one stepped (:678, :809, :817);
//   - the frames: 17 uniforms per frame, the stop frame's too, from one
//     generator per request (synthesize(seed=...), onnx_tts_runtime.py:617;
//     ort_cpu_runtime.py:616-619), fed here through the uniforms hook; the
//     repetition mask of the chunk's frames so far (:611-615); a zero
//     should_continue ends the chunk and drops its frame (:705), and
//     max_new_frames ends it without a stop frame (:687); the next row is
//     [assistant slot, codes] (:803-806);
//   - the codec: a fresh state per chunk (onnx_tts_runtime.py:550, :506),
//     in calls of 1 frame (streaming: _resolve_stream_decode_frame_budget,
//     ort_cpu_runtime.py:245-257, with decoding never 0.20 s ahead of the
//     clock) or 8 (decode_full_audio_safe's fallback,
//     onnx_tts_runtime.py:511), and the audio_lengths samples of each call
//     (ort_cpu_runtime.py:306-309);
//   - the silence between chunks (onnx_tts_runtime.py:642-646, :437).
//
// Each case runs with either way of starting a chunk (stepping from the
// voice prompt's KV cache or prefilling the whole request), which must not
// matter.
func TestUpstreamRuntimeGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/upstream_runtime_golden.json")
	require.NoError(t, err)
	var g upstreamGolden
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Cases)
	for _, c := range g.Cases {
		for _, d := range c.Decodes {
			mode, ok := g.Modes[d.Mode]
			require.True(t, ok, "mode %q", d.Mode)
			for _, start := range []struct {
				name              string
				rowCost, stepCost time.Duration
			}{
				{"steps", time.Second, time.Millisecond},
				{"prefills", time.Millisecond, time.Second},
			} {
				t.Run(c.Name+"/"+d.Mode+"/"+start.name, func(t *testing.T) {
					testenv.ONNXRuntime(t)
					s, err := Open(tinyDir, codecDir, Options{Voice: c.Voice, MaxFrames: c.MaxNewFrames})
					require.NoError(t, err)
					defer s.Close()
					s.rowCost.d, s.stepCost.d = start.rowCost, start.stepCost
					if mode.Streaming {
						// Upstream's clock read one second later at each
						// read, so its streaming decode stayed behind
						// playback: the same clock here gives the same
						// calls through the codec's own budget.
						var at time.Time
						s.now = func() time.Time { at = at.Add(time.Second); return at }
					} else {
						s.codecBatch = mode.CodecFramesPerCall
					}
					checkUpstreamText(t, s, c)
					checkUpstreamRun(t, s, g, c, d.Chunks)
				})
			}
		}
	}
}

// checkUpstreamText checks the text's preparation, its chunks and each
// chunk's request rows.
func checkUpstreamText(t *testing.T, s *Synthesizer, c upstreamCase) {
	t.Helper()
	// tts/normalize stands in for WeTextProcessing, which the golden ran
	// without: these texts give it nothing to read.
	require.Equal(t, c.Text, normalize.Text(c.Text), "tts/normalize changed the text")
	require.Equal(t, c.PreparedText, cleanText(normalize.Text(c.Text)), "prepared text")
	count := func(x string) int { return len(s.tok.Encode(x)) }
	require.Equal(t, c.TextChunks, splitText(c.PreparedText, MaxChunkTokens, count), "chunks")
	require.Len(t, c.Chunks, len(c.TextChunks))
	for i, ch := range c.Chunks {
		ids := s.tok.Encode(ch.Text)
		require.Equal(t, ch.TokenIDs, ids, "chunk %d token ids", i)
		text := s.textRows(ids)
		rows := append(s.promptRows(), text...)
		n := len(rows) / s.cfg.rowWidth
		require.Equal(t, ch.PrefillRows, n, "chunk %d rows", i)
		col := make([]int32, n)
		for r := range col {
			col[r] = rows[r*s.cfg.rowWidth]
		}
		require.Equal(t, ch.PrefillTextColumn, col, "chunk %d rows' text column", i)
		buf := make([]byte, 0, 4*len(rows))
		for _, v := range rows {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		sum := sha256.Sum256(buf)
		require.Equal(t, ch.PrefillSHA256, hex.EncodeToString(sum[:]), "chunk %d rows (input_ids) differ from upstream's", i)
		// The first frame's decode step gets past_valid_lengths = the
		// request's rows: the voice prompt's cache plus the chunk's rows.
		require.Equal(t, ch.FirstPastValidLength, s.promptLen+len(text)/s.cfg.rowWidth, "chunk %d past_valid_lengths", i)
	}
}

// checkUpstreamRun synthesizes the case's text with upstream's uniforms and
// compares the frames, the codec calls, the audio and the silences.
func checkUpstreamRun(t *testing.T, s *Synthesizer, g upstreamGolden, c upstreamCase, want []upstreamAudio) {
	t.Helper()
	var uniforms [][]float32
	for _, ch := range c.Chunks {
		uniforms = append(uniforms, ch.Uniforms...)
	}
	drawn := 0
	s.uniforms = func() []float32 {
		require.Less(t, drawn, len(uniforms), "more frames drawn than upstream's")
		drawn++
		return uniforms[drawn-1]
	}
	type chunkRun struct {
		frames [][]int32
		emits  [][]float32
		drawn  int // uniforms drawn by the chunk's end
	}
	runs := []chunkRun{{}}
	var silences []int
	s.onFrame = func(f []int32) {
		runs[len(runs)-1].frames = append(runs[len(runs)-1].frames, f)
	}
	total := 0
	err := s.Synthesize(context.Background(), c.Text, normalize.Detect(c.Text), func(x []float32) error {
		total += len(x)
		if isSilence(x) {
			runs[len(runs)-1].drawn = drawn
			runs = append(runs, chunkRun{})
			silences = append(silences, len(x))
			return nil
		}
		runs[len(runs)-1].emits = append(runs[len(runs)-1].emits, x)
		return nil
	})
	require.NoError(t, err)
	runs[len(runs)-1].drawn = drawn

	ch := s.format.Channels
	require.Len(t, runs, len(c.Chunks), "chunks")
	require.Equal(t, len(c.PauseSamples), len(silences), "silences")
	for i, n := range c.PauseSamples {
		require.Equal(t, n*ch, silences[i], "silence after chunk %d", i)
	}
	require.Equal(t, c.TotalSamples*ch, total, "interleaved samples")
	used := 0
	for i, r := range runs {
		up, a := c.Chunks[i], want[i]
		used += len(up.Uniforms)
		require.Equal(t, used, r.drawn, "chunk %d: uniforms drawn (one per frame and one for the stop)", i)
		require.Equal(t, up.Frames, r.frames, "chunk %d frames", i)

		require.Len(t, r.emits, len(a.CodecFramesPerCall), "chunk %d codec calls", i)
		var pcm []float32
		for k, e := range r.emits {
			require.Len(t, e, a.CodecFramesPerCall[k]*g.SamplesPerFrame*ch, "chunk %d codec call %d samples", i, k)
			pcm = append(pcm, e...)
		}
		require.Equal(t, a.Samples*ch, len(pcm), "chunk %d samples", i)
		require.Len(t, a.FrameHeads, len(up.Frames))
		worst := 0.0
		near := func(what string, want, got float32) {
			d := math.Abs(float64(want) - float64(got))
			worst = max(worst, d)
			require.InDelta(t, want, got, upstreamTol, "chunk %d %s", i, what)
		}
		for f, head := range a.FrameHeads {
			for k := range ch {
				for j := range g.FrameHeadSamples {
					near("frame head", head[k*g.FrameHeadSamples+j], pcm[(f*g.SamplesPerFrame+j)*ch+k])
				}
			}
		}
		for k := range ch {
			tail := a.Tail[k]
			for j := range tail {
				near("tail", tail[j], pcm[(a.Samples-len(tail)+j)*ch+k])
			}
			var sum, sq float64
			for j := range a.Samples {
				v := float64(pcm[j*ch+k])
				sum += v
				sq += v * v
			}
			rms := math.Sqrt(sq / float64(max(a.Samples, 1)))
			require.InDelta(t, a.Sum[k], sum, upstreamTol*float64(a.Samples), "chunk %d channel %d sum", i, k)
			require.InDelta(t, a.RMS[k], rms, upstreamTol, "chunk %d channel %d rms", i, k)
		}
		t.Logf("chunk %d: %d frames, codec calls %v, largest sample difference %.2g", i, len(r.frames), a.CodecFramesPerCall, worst)
	}
	require.Equal(t, len(uniforms), drawn, "uniforms drawn")
}
