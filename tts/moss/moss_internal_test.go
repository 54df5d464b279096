package moss

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/tts/normalize"
)

const (
	tinyDir  = "testdata/tiny"
	codecDir = "testdata/tiny-codec"
)

type golden struct {
	Voice              string      `json:"voice"`
	Text               string      `json:"text"`
	TextTokenIDs       []int       `json:"text_token_ids"`
	NumRows            int         `json:"num_rows"`
	Uniforms           [][]float32 `json:"uniforms_per_frame"`
	NumFrames          int         `json:"num_frames"`
	Frames             [][]int32   `json:"frame_token_ids"`
	CodecFramesPerCall int         `json:"codec_frames_per_call"`
	TotalSamples       int         `json:"total_audio_samples_per_channel"`
	First16Ch0         []float32   `json:"first16_channel0"`
	First16Ch1         []float32   `json:"first16_channel1"`
	LastFrame16Ch0     []float32   `json:"last_frame_first16_channel0"`
	LastFrameFresh16   []float32   `json:"last_frame_fresh_state_first16_channel0"`
}

func loadGolden(t testing.TB) golden {
	t.Helper()
	data, err := os.ReadFile("testdata/tiny_golden.json")
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(data, &g))
	return g
}

// openTiny opens the tiny model set with the golden's uniforms and codec
// batching.
func openTiny(t testing.TB, g golden) *Synthesizer {
	t.Helper()
	return openTinyWith(t, g, Options{Voice: g.Voice})
}

func openTinyWith(t testing.TB, g golden, opts Options) *Synthesizer {
	t.Helper()
	testenv.ONNXRuntime(t)
	s, err := Open(tinyDir, codecDir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	i := 0
	s.uniforms = func() []float32 {
		u := g.Uniforms[i%len(g.Uniforms)]
		i++
		return u
	}
	s.codecBatch = g.CodecFramesPerCall
	return s
}

type run struct {
	frames [][]int32
	emits  [][]float32
	audio  []float32
}

// record runs say, recording the frames and what it emits.
func record(s *Synthesizer, say func(emit func([]float32) error) error) (run, error) {
	var r run
	s.onFrame = func(f []int32) { r.frames = append(r.frames, f) }
	err := say(func(x []float32) error {
		r.emits = append(r.emits, x)
		r.audio = append(r.audio, x...)
		return nil
	})
	return r, err
}

func synth(t *testing.T, s *Synthesizer, ctx context.Context, text string) (run, error) {
	t.Helper()
	return record(s, func(emit func([]float32) error) error { return s.Synthesize(ctx, text, normalize.Detect(text), emit) })
}

// speakGolden speaks the golden's text as one chunk, tokenized as the
// golden was made: Synthesize would first end it with "。" (cleanText).
func speakGolden(t *testing.T, s *Synthesizer, ctx context.Context, g golden) (run, error) {
	t.Helper()
	return record(s, func(emit func([]float32) error) error { return s.speak(ctx, []string{g.Text}, emit) })
}

func channel(interleaved []float32, ch, n int) []float32 {
	var out []float32
	for i := ch; i < len(interleaved) && len(out) < n; i += 2 {
		out = append(out, interleaved[i])
	}
	return out
}

func close16(t *testing.T, what string, got, want []float32) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), len(want), "%s: samples", what)
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-4, "%s[%d]\n got %v\nwant %v", what, i, got[:len(want)], want)
	}
}

func TestRows(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	require.Equal(t, g.TextTokenIDs, s.tok.Encode(g.Text), "tokens")
	rows := append(s.promptRows(), s.textRows(g.TextTokenIDs)...)
	require.Equal(t, g.NumRows, len(rows)/17, "rows")
	require.Equal(t, len(s.promptRows())/17, s.promptLen, "rows in the voice prompt's KV cache")
	// Row 14..18 are the voice frames with slot 8.
	require.Equal(t, int32(8), rows[14*17], "row 14 starts with the user slot")
	require.Equal(t, int32(6), rows[13*17], "row 13 starts with audio_start")
}

func TestGoldenFramesAndAudio(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	require.Equal(t, audio.Format{Rate: 48000, Channels: 2}, s.Format(), "format")
	r, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	require.Len(t, r.frames, g.NumFrames, "frames (stop not respected?)")
	for i := range g.Frames {
		require.Equal(t, g.Frames[i], r.frames[i], "frame %d", i)
	}
	require.Equal(t, 2*g.TotalSamples, len(r.audio), "interleaved samples")
	close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
	close16(t, "channel 1", channel(r.audio, 1, 16), g.First16Ch1)
	last := r.emits[len(r.emits)-1]
	close16(t, "last frame channel 0", channel(last, 0, 16), g.LastFrame16Ch0)

	// A second call resets the codec and the sampler: same result.
	r2, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	require.True(t, slices.Equal(r.audio, r2.audio), "a second Synthesize gave different audio: state not reset")
}

// TestCodecBudget pins the frames per codec call to upstream's rule
// (OpenMOSS/MOSS-TTS-Nano ort_cpu_runtime.py:237-257): one until the
// chunk's audio runs 0.2 s ahead of the time since its first audio, then
// 2 up to 0.55 s, 4 up to 1.1 s, then 8.
func TestCodecBudget(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, tc := range []struct {
		name    string
		audio   time.Duration // emitted so far
		played  time.Duration // since the first audio
		noneYet bool
		want    int
		forced  int // the codecBatch test hook
	}{
		{name: "before any audio", noneYet: true, want: 1},
		{name: "just started", audio: 80 * time.Millisecond, want: 1},
		{name: "0.199 s ahead", audio: 199 * time.Millisecond, want: 1},
		{name: "0.2 s ahead", audio: 200 * time.Millisecond, want: 2},
		{name: "0.549 s ahead", audio: 749 * time.Millisecond, played: 200 * time.Millisecond, want: 2},
		{name: "0.55 s ahead", audio: 550 * time.Millisecond, want: 4},
		{name: "1.1 s ahead", audio: 1100 * time.Millisecond, want: 8},
		{name: "slower than playback", audio: 2 * time.Second, played: 3 * time.Second, want: 1},
		{name: "the hook", audio: 2 * time.Second, want: 3, forced: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Synthesizer{format: audio.Format{Rate: 48000, Channels: 2}, codecBatch: tc.forced,
				now: func() time.Time { return start.Add(tc.played) }}
			cs := &codecState{s: s, emitted: int(tc.audio * 48000 / time.Second)}
			if !tc.noneYet {
				cs.firstAudio = start
			}
			assert.Equal(t, tc.want, cs.budget())
		})
	}
}

// TestCodecCallsFollowTheLead: synthesis slower than playback decodes
// every frame as it comes; faster, frames are decoded in batches as the
// audio's lead grows.
func TestCodecCallsFollowTheLead(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.codecBatch = 0
	var at time.Time
	s.now = func() time.Time { at = at.Add(time.Second); return at } // a second per read: always behind
	r, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	require.Equal(t, 2*g.TotalSamples, len(r.audio), "interleaved samples")
	require.Equal(t, len(g.Frames), len(r.emits), "one codec call per frame")
	close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
}

func TestDefaultRNG(t *testing.T) {
	testenv.ONNXRuntime(t)
	s, err := Open(tinyDir, codecDir, Options{MaxFrames: 20})
	require.NoError(t, err)
	defer s.Close()
	r, err := synth(t, s, context.Background(), "hello world")
	require.NoError(t, err)
	require.LessOrEqual(t, len(r.frames), 20, "frames, MaxFrames 20")
	require.Equal(t, 2*480*len(r.frames), len(r.audio), "samples for %d frames", len(r.frames))
	r2, err := synth(t, s, context.Background(), "hello world")
	require.NoError(t, err)
	require.Equal(t, r.frames, r2.frames, "same seed, different frames")
}

func TestCancel(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	s.onFrame = nil
	hookFrames := 0
	err := s.speak(ctx, []string{g.Text}, func([]float32) error {
		n++
		return nil
	})
	require.NoError(t, err)
	s.onFrame = func([]int32) {
		hookFrames++
		if hookFrames == 3 {
			cancel()
		}
	}
	err = s.speak(ctx, []string{g.Text}, func([]float32) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 3, hookFrames, "frames after cancelling at frame 3")
}

func TestKVCarried(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.resetKV = true
	s.frames = g.NumFrames + 5
	r, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	require.NotEqual(t, g.Frames, r.frames, "frames without the KV cache fed back match the golden: the cache has no effect")
}

func TestCodecStateCarried(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.resetCodec = true
	r, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	last := r.emits[len(r.emits)-1]
	close16(t, "last frame, fresh codec state", channel(last, 0, 16), g.LastFrameFresh16)
	require.NotEqual(t, g.LastFrame16Ch0, channel(last, 0, 16), "fresh and carried codec state give the same audio")
}

func TestUnknownVoice(t *testing.T) {
	_, err := Open(tinyDir, codecDir, Options{Voice: "Nobody"})
	require.ErrorContains(t, err, "Junhao", "want an error listing Junhao and Ava")
	require.ErrorContains(t, err, "Ava", "want an error listing Junhao and Ava")
}

func TestMissingFiles(t *testing.T) {
	for _, name := range []string{ManifestFile, TTSMetaFile, TokenizerFile, "moss_tts_decode_step.onnx"} {
		t.Run(name, func(t *testing.T) {
			if name == "moss_tts_decode_step.onnx" {
				testenv.ONNXRuntime(t)
			}
			dir := t.TempDir()
			testenv.CopyDir(t, tinyDir, filepath.Join(dir, "tts"))
			require.NoError(t, os.Remove(filepath.Join(dir, "tts", name)))
			_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
			require.ErrorContains(t, err, name, "want an error naming %s and the model set", name)
			require.ErrorContains(t, err, "MOSS-TTS-Nano-100M-ONNX", "want an error naming %s and the model set", name)
		})
	}
	t.Run("codec meta", func(t *testing.T) {
		_, err := Open(tinyDir, t.TempDir(), Options{})
		require.ErrorContains(t, err, CodecMetaFile)
	})
}

func TestMetaNamesMissingTensor(t *testing.T) {
	testenv.ONNXRuntime(t)
	dir := t.TempDir()
	testenv.CopyDir(t, tinyDir, filepath.Join(dir, "tts"))
	p := filepath.Join(dir, "tts", TTSMetaFile)
	data, _ := os.ReadFile(p)
	data = []byte(strings.Replace(string(data), `"past_valid_lengths"`, `"past_lengths_renamed"`, 1))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	require.ErrorContains(t, err, "past_lengths_renamed")

	// A codec meta naming a state tensor the graph lacks.
	cdir := filepath.Join(dir, "codec")
	testenv.CopyDir(t, codecDir, cdir)
	p = filepath.Join(cdir, CodecMetaFile)
	data, _ = os.ReadFile(p)
	data = []byte(strings.ReplaceAll(string(data), `"attn_offset_out_3"`, `"attn_offset_out_x"`))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, err = Open(tinyDir, cdir, Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	require.ErrorContains(t, err, "attn_offset_out_x")
}

func TestWrongHiddenSize(t *testing.T) {
	testenv.ONNXRuntime(t)
	dir := t.TempDir()
	testenv.CopyDir(t, tinyDir, filepath.Join(dir, "tts"))
	p := filepath.Join(dir, "tts", TTSMetaFile)
	data, _ := os.ReadFile(p)
	data = []byte(strings.Replace(string(data), `"hidden_size": 768`, `"hidden_size": 512`, 1))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
}

// isSilence reports whether an emit is a gap between chunks.
func isSilence(x []float32) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return len(x) > 0
}

// Long text is spoken in the chunks splitText makes, each followed by the
// silence upstream's estimate_voice_clone_inter_chunk_pause_seconds
// (OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:437) gives it: 0.24 s after
// an English chunk of many words, 0.40 s after a Chinese one, whose words
// are not separated by spaces (onnx_tts_runtime.py:642).
// A reply's language, passed by the pipeline, reads what has no words near
// it; words near an expression still decide.
func TestPrepareReadsBareExpressionsInTheReplysLanguage(t *testing.T) {
	s := openTiny(t, loadGolden(t))
	for _, tc := range []struct {
		text string
		lang normalize.Language
		want string
	}{
		{"1+1=2", normalize.LangChinese, "一加一等于二"},
		{"1+1=2", normalize.LangEnglish, "one plus one equals two"},
		{"我有3个", normalize.LangEnglish, "我有三个"},
	} {
		assert.Contains(t, strings.Join(s.prepare(tc.text, tc.lang), ""), tc.want, "%q in %v", tc.text, tc.lang)
	}
}

func TestChunksAndSilence(t *testing.T) {
	g := loadGolden(t)
	for _, tc := range []struct {
		name, text string
		gap        time.Duration
	}{
		{"en", strings.Repeat("hello world ", 40), ChunkGap},
		{"zh", strings.Repeat("今天天气很好，我们去公园散步吧。", 8), ShortChunkGap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTiny(t, g)
			chunks := splitText(cleanText(normalize.Text(tc.text)), MaxChunkTokens, func(t string) int { return len(s.tok.Encode(t)) })
			require.Greater(t, len(chunks), 1, "chunks")
			r, err := synth(t, s, context.Background(), tc.text)
			require.NoError(t, err)
			var gaps []int
			for _, e := range r.emits {
				if isSilence(e) {
					gaps = append(gaps, len(e))
				}
			}
			require.Len(t, gaps, len(chunks)-1, "silences for %d chunks", len(chunks))
			for _, n := range gaps {
				require.Equal(t, int(tc.gap.Seconds()*48000)*2, n, "silence samples")
			}
		})
	}
}

// Every chunk is decoded from a fresh codec state, as upstream's
// synthesize_single_chunk resets its streaming session
// (OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:550): a two-sentence text's
// second chunk sounds as its frames do decoded alone, not as they do
// decoded after the first chunk's.
// Both codec state sets are written at Open, so their pages are faulted
// in at load and not in the first chunk's time to its first audio (at
// full size the first reset took 90 ms of it, the first codec call more):
// each set is at the codec's start, positions -1.
func TestOpenWritesTheCodecState(t *testing.T) {
	s := openTiny(t, loadGolden(t))
	for i, set := range s.codecSets {
		positions := 0
		for j, v := range set {
			if k := j - len(s.offsets); k >= 0 && k%4 == 3 {
				positions++
				for _, p := range v.(*ort.Tensor[int32]).GetData() {
					require.Equal(t, int32(-1), p, "set %d, state %d", i, j)
				}
			}
		}
		require.Positive(t, positions, "set %d has cached positions", i)
	}
}

func TestCodecStateFreshPerChunk(t *testing.T) {
	g := loadGolden(t)
	for _, tc := range []struct{ name, text string }{
		{"en", "The weather is nice today, so we will go for a long walk in the park after lunch. " +
			"Tomorrow it will rain all day, so please take an umbrella with you when you go out."},
		{"zh", "今天天气很好，我们吃完午饭以后去公园散步，顺便买一点水果回家吧。明天会下一整天的雨，出门的时候记得带伞，路上注意安全。"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTiny(t, g)
			// Per chunk: its frames and its audio.
			frames, audio := [][][]int32{nil}, [][]float32{nil}
			s.onFrame = func(f []int32) { frames[len(frames)-1] = append(frames[len(frames)-1], f) }
			err := s.Synthesize(context.Background(), tc.text, normalize.Detect(tc.text), func(x []float32) error {
				if isSilence(x) {
					frames, audio = append(frames, nil), append(audio, nil)
					return nil
				}
				audio[len(audio)-1] = append(audio[len(audio)-1], x...)
				return nil
			})
			require.NoError(t, err)
			require.Len(t, frames, 2, "chunks")
			require.NotEmpty(t, frames[1], "second chunk's frames")
			require.Equal(t, decode(t, s, frames[1]), audio[1], "second chunk: not its frames decoded from a fresh state")
			carried := decode(t, s, frames[0], frames[1])[len(audio[0]):]
			require.NotEqual(t, carried, audio[1], "a fresh and a carried codec state give the same audio")
		})
	}
}

// decode decodes chunks' frames one chunk after another with one codec
// state, flushing it after each.
func decode(t *testing.T, s *Synthesizer, chunks ...[][]int32) []float32 {
	t.Helper()
	cs := s.newCodecState()
	var out []float32
	emit := func(x []float32) error {
		out = append(out, x...)
		return nil
	}
	for _, frames := range chunks {
		for _, f := range frames {
			require.NoError(t, cs.push(f, emit))
		}
		require.NoError(t, cs.flush(emit))
	}
	return out
}

// The golden frames come from one prefill over the whole request; a chunk
// gives them both ways: stepping from the voice prompt's KV cache, and
// prefilling the prompt again with its text.
func TestVoicePromptCache(t *testing.T) {
	g := loadGolden(t)
	for _, tc := range []struct {
		name              string
		rowCost, stepCost time.Duration
		prefills          bool
	}{
		{"steps from the voice prompt", time.Second, time.Millisecond, false},
		{"prefills the whole request", time.Millisecond, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTiny(t, g)
			require.Positive(t, s.promptLen, "voice prompt rows")
			require.Positive(t, s.rowCost.d, "prefill cost measured at load")
			require.Positive(t, s.stepCost.d, "decode step cost measured at load")
			s.rowCost.d, s.stepCost.d = tc.rowCost, tc.stepCost
			r, err := speakGolden(t, s, context.Background(), g)
			require.NoError(t, err)
			require.Equal(t, g.Frames, r.frames)
			close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
			// A prefill run updates the estimate of its cost.
			require.Equal(t, tc.prefills, s.rowCost.d != tc.rowCost, "prefill ran")
		})
	}
}

// The costs a chunk chooses by are those of warm graphs: a graph's first
// run sets up its buffers (at full size a prefill row took 2.8 ms in it
// against 1.45 in the next, and a 17-word sentence stepped at twice the
// time on one start in two), so Open runs each twice and times the
// second. Without the prefill graph kept, its cost is not needed. The
// local frame and the codec run once, and the caches a chunk writes are
// made at Open too.
func TestOpenTimesWarmGraphs(t *testing.T) {
	g := loadGolden(t)
	for _, tc := range []struct {
		name     string
		opts     Options
		prefills int
	}{
		{"prefill kept", Options{Voice: g.Voice}, 2},
		{"low memory", Options{Voice: g.Voice, LowMemory: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.ONNXRuntime(t)
			s, err := Open(tinyDir, codecDir, tc.opts)
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, 2, s.decode.Runs().Calls, "decode steps at load")
			assert.Equal(t, 1, s.local.Runs().Calls, "local frames at load")
			assert.Equal(t, 1, s.codec.Runs().Calls, "codec calls at load")
			if s.prefill != nil {
				assert.Equal(t, tc.prefills, s.prefill.Runs().Calls, "prefills at load")
			}
			assert.Positive(t, s.rowCost.d)
			assert.Positive(t, s.stepCost.d)
			// The decode step's cache buffers, made at Open for a
			// sentence after the voice prompt (or, low on memory, as the
			// chunks need them).
			if tc.opts.LowMemory {
				return
			}
			require.Len(t, s.kvBufs, len(s.decodeOut)-1)
			for _, b := range s.kvBufs {
				assert.Len(t, b, (s.promptLen+kvRowsAhead)*s.cfg.heads*s.cfg.headDim)
			}
		})
	}
}

func TestLowMemoryStepsWithoutThePrefillGraph(t *testing.T) {
	g := loadGolden(t)
	s := openTinyWith(t, g, Options{Voice: g.Voice, LowMemory: true})
	require.Nil(t, s.prefill, "the prefill graph is kept")
	require.Positive(t, s.promptLen, "voice prompt rows")
	// Costs that would make any chunk prefill.
	s.rowCost.d, s.stepCost.d = time.Millisecond, time.Second
	r, err := speakGolden(t, s, context.Background(), g)
	require.NoError(t, err)
	require.Equal(t, g.Frames, r.frames)
	close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
}

// BenchmarkSynthesize speaks the golden text with the tiny model, stepping
// through it from the voice prompt; B/op shows what each run allocates.
func BenchmarkSynthesize(b *testing.B) {
	g := loadGolden(b)
	s := openTinyWith(b, g, Options{Voice: g.Voice, LowMemory: true})
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Synthesize(context.Background(), g.Text, normalize.Detect(g.Text), func([]float32) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
