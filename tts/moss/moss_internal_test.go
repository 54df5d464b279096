package moss

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
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

func loadGolden(t *testing.T) golden {
	t.Helper()
	data, err := os.ReadFile("testdata/tiny_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// openTiny opens the tiny model set with the golden's uniforms and codec
// batching.
func openTiny(t *testing.T, g golden) *Synthesizer {
	t.Helper()
	testenv.ONNXRuntime(t)
	s, err := Open(tinyDir, codecDir, Options{Voice: g.Voice})
	if err != nil {
		t.Fatal(err)
	}
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

func synth(t *testing.T, s *Synthesizer, ctx context.Context, text string) (run, error) {
	t.Helper()
	var r run
	s.onFrame = func(f []int32) { r.frames = append(r.frames, f) }
	err := s.Synthesize(ctx, text, func(x []float32) error {
		r.emits = append(r.emits, x)
		r.audio = append(r.audio, x...)
		return nil
	})
	return r, err
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
	if len(got) < len(want) {
		t.Fatalf("%s: %d samples, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-4 {
			t.Fatalf("%s[%d] = %v, want %v\n got %v\nwant %v", what, i, got[i], want[i], got[:len(want)], want)
		}
	}
}

func TestRows(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	if got := s.tok.Encode(g.Text); !slices.Equal(got, g.TextTokenIDs) {
		t.Fatalf("tokens %v, want %v", got, g.TextTokenIDs)
	}
	rows := s.rows(g.TextTokenIDs)
	if len(rows)/17 != g.NumRows {
		t.Fatalf("%d rows, want %d", len(rows)/17, g.NumRows)
	}
	// Row 14..18 are the voice frames with slot 8.
	if rows[14*17] != 8 || rows[13*17] != 6 {
		t.Fatalf("row 13 starts %d, row 14 %d; want audio_start 6 and user slot 8", rows[13*17], rows[14*17])
	}
}

func TestGoldenFramesAndAudio(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	if f := s.Format(); f.Rate != 48000 || f.Channels != 2 {
		t.Fatalf("format %v", f)
	}
	r, err := synth(t, s, context.Background(), g.Text)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.frames) != g.NumFrames {
		t.Fatalf("%d frames, want %d (stop not respected?)", len(r.frames), g.NumFrames)
	}
	for i := range g.Frames {
		if !slices.Equal(r.frames[i], g.Frames[i]) {
			t.Fatalf("frame %d = %v, want %v", i, r.frames[i], g.Frames[i])
		}
	}
	if len(r.audio) != 2*g.TotalSamples {
		t.Fatalf("%d interleaved samples, want %d", len(r.audio), 2*g.TotalSamples)
	}
	close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
	close16(t, "channel 1", channel(r.audio, 1, 16), g.First16Ch1)
	last := r.emits[len(r.emits)-1]
	close16(t, "last frame channel 0", channel(last, 0, 16), g.LastFrame16Ch0)

	// A second call resets the codec and the sampler: same result.
	r2, err := synth(t, s, context.Background(), g.Text)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.audio, r2.audio) {
		t.Fatal("a second Synthesize gave different audio: state not reset")
	}
}

func TestGrowingCodecBatches(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.codecBatch = 0
	r, err := synth(t, s, context.Background(), g.Text)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.audio) != 2*g.TotalSamples {
		t.Fatalf("%d interleaved samples, want %d", len(r.audio), 2*g.TotalSamples)
	}
	// 7 frames in calls of 1, 2, 4.
	if len(r.emits) != 3 {
		t.Fatalf("%d emits, want 3 (batches 1, 2, 4)", len(r.emits))
	}
	close16(t, "channel 0", channel(r.audio, 0, 16), g.First16Ch0)
}

func TestDefaultRNG(t *testing.T) {
	testenv.ONNXRuntime(t)
	s, err := Open(tinyDir, codecDir, Options{MaxFrames: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := synth(t, s, context.Background(), "hello world")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.frames) > 20 {
		t.Fatalf("%d frames, MaxFrames 20", len(r.frames))
	}
	if len(r.audio) != 2*480*len(r.frames) {
		t.Fatalf("%d samples for %d frames", len(r.audio), len(r.frames))
	}
	r2, err := synth(t, s, context.Background(), "hello world")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(r.frames, r2.frames, slices.Equal) {
		t.Fatal("same seed, different frames")
	}
}

func TestCancel(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	s.onFrame = nil
	hookFrames := 0
	err := s.Synthesize(ctx, g.Text, func([]float32) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.onFrame = func([]int32) {
		hookFrames++
		if hookFrames == 3 {
			cancel()
		}
	}
	err = s.Synthesize(ctx, g.Text, func([]float32) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if hookFrames != 3 {
		t.Fatalf("%d frames after cancelling at frame 3", hookFrames)
	}
}

func TestKVCarried(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.resetKV = true
	s.frames = g.NumFrames + 5
	r, err := synth(t, s, context.Background(), g.Text)
	if err != nil {
		t.Fatal(err)
	}
	if slices.EqualFunc(r.frames, g.Frames, slices.Equal) {
		t.Fatal("frames without the KV cache fed back match the golden: the cache has no effect")
	}
}

func TestCodecStateCarried(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	s.resetCodec = true
	r, err := synth(t, s, context.Background(), g.Text)
	if err != nil {
		t.Fatal(err)
	}
	last := r.emits[len(r.emits)-1]
	close16(t, "last frame, fresh codec state", channel(last, 0, 16), g.LastFrameFresh16)
	if slices.Equal(channel(last, 0, 16), g.LastFrame16Ch0) {
		t.Fatal("fresh and carried codec state give the same audio")
	}
}

func TestUnknownVoice(t *testing.T) {
	_, err := Open(tinyDir, codecDir, Options{Voice: "Nobody"})
	if err == nil || !strings.Contains(err.Error(), "Junhao") || !strings.Contains(err.Error(), "Ava") {
		t.Fatalf("err %v, want one listing Junhao and Ava", err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMissingFiles(t *testing.T) {
	for _, name := range []string{ManifestFile, TTSMetaFile, TokenizerFile, "moss_tts_decode_step.onnx"} {
		t.Run(name, func(t *testing.T) {
			if name == "moss_tts_decode_step.onnx" {
				testenv.ONNXRuntime(t)
			}
			dir := t.TempDir()
			copyDir(t, tinyDir, filepath.Join(dir, "tts"))
			if err := os.Remove(filepath.Join(dir, "tts", name)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "MOSS-TTS-Nano-100M-ONNX") {
				t.Fatalf("err %v, want one naming %s and the model set", err, name)
			}
		})
	}
	t.Run("codec meta", func(t *testing.T) {
		_, err := Open(tinyDir, t.TempDir(), Options{})
		if err == nil || !strings.Contains(err.Error(), CodecMetaFile) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestMetaNamesMissingTensor(t *testing.T) {
	testenv.ONNXRuntime(t)
	dir := t.TempDir()
	copyDir(t, tinyDir, filepath.Join(dir, "tts"))
	p := filepath.Join(dir, "tts", TTSMetaFile)
	data, _ := os.ReadFile(p)
	data = []byte(strings.Replace(string(data), `"past_valid_lengths"`, `"past_lengths_renamed"`, 1))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
	if !errors.Is(err, onnx.ErrModelMismatch) || !strings.Contains(err.Error(), "past_lengths_renamed") {
		t.Fatalf("err %v, want ErrModelMismatch naming past_lengths_renamed", err)
	}

	// A codec meta naming a state tensor the graph lacks.
	cdir := filepath.Join(dir, "codec")
	copyDir(t, codecDir, cdir)
	p = filepath.Join(cdir, CodecMetaFile)
	data, _ = os.ReadFile(p)
	data = []byte(strings.ReplaceAll(string(data), `"attn_offset_out_3"`, `"attn_offset_out_x"`))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(tinyDir, cdir, Options{})
	if !errors.Is(err, onnx.ErrModelMismatch) || !strings.Contains(err.Error(), "attn_offset_out_x") {
		t.Fatalf("err %v, want ErrModelMismatch naming attn_offset_out_x", err)
	}
}

func TestWrongHiddenSize(t *testing.T) {
	testenv.ONNXRuntime(t)
	dir := t.TempDir()
	copyDir(t, tinyDir, filepath.Join(dir, "tts"))
	p := filepath.Join(dir, "tts", TTSMetaFile)
	data, _ := os.ReadFile(p)
	data = []byte(strings.Replace(string(data), `"hidden_size": 768`, `"hidden_size": 512`, 1))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(dir, "tts"), codecDir, Options{})
	if !errors.Is(err, onnx.ErrModelMismatch) {
		t.Fatalf("err %v, want ErrModelMismatch", err)
	}
}

func TestSplitTokens(t *testing.T) {
	ids := make([]int, 160)
	got := splitTokens(ids, MaxChunkTokens)
	if len(got) != 3 || len(got[0]) != 75 || len(got[1]) != 75 || len(got[2]) != 10 {
		t.Fatalf("chunks of %d, %d, %d", len(got[0]), len(got[1]), len(got[2]))
	}
}

func TestChunksAndSilence(t *testing.T) {
	g := loadGolden(t)
	s := openTiny(t, g)
	text := strings.Repeat("hello world ", 40)
	ids := s.tok.Encode(text)
	if len(ids) <= MaxChunkTokens {
		t.Fatalf("%d tokens, need more than %d", len(ids), MaxChunkTokens)
	}
	chunks := splitTokens(ids, MaxChunkTokens)
	r, err := synth(t, s, context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	// Each chunk draws the golden's uniforms from where the last left off;
	// count silences: emits that are all zeros.
	var gaps []int
	for _, e := range r.emits {
		zero := true
		for _, v := range e {
			if v != 0 {
				zero = false
				break
			}
		}
		if zero && len(e) > 0 {
			gaps = append(gaps, len(e))
		}
	}
	if len(gaps) != len(chunks)-1 {
		t.Fatalf("%d silences for %d chunks", len(gaps), len(chunks))
	}
	long := int(ChunkGap.Seconds()*48000) * 2
	for _, n := range gaps {
		if n != long {
			t.Fatalf("silence of %d samples, want %d", n, long)
		}
	}
}
