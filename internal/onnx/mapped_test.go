package onnx_test

import (
	"bytes"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/quantize"
)

// A float model's prepacked MatMul weights are saved once, beside an
// optimized copy that later loads map (the session config keys
// kOrtSessionOptionsOptimizedModelExternalInitializersFileName and
// kOrtSessionOptionsSavePrePackedConstantInitializers of microsoft/onnxruntime
// include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h).
// Silero's copy cannot be checked (its sample rate input takes 8000 or
// 16000, not the probe's 1), so Silero loads as it is; and with the
// copies turned off every model does.
func TestMappedCopy(t *testing.T) {
	testenv.ONNXRuntime(t)
	defaultLog := slog.Default()
	defer slog.SetDefault(defaultLog)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer onnx.SetMinPrepacked(1)()
	model := tinyModel
	ins, outs := declaredTensors(t, model)

	open := func(path string) *onnx.Session {
		s, err := onnx.Open(path, ins, outs, onnx.Options{}, "")
		require.NoError(t, err)
		t.Cleanup(func() { s.Destroy() })
		return s
	}
	first := open(model)
	require.NotEmpty(t, first.Mapped, "the float model was loaded as it is")
	dir := filepath.Dir(first.Mapped)
	verdict, err := os.ReadFile(filepath.Join(dir, "verdict"))
	require.NoError(t, err)
	assert.Equal(t, "mapped\n", string(verdict))
	assert.FileExists(t, filepath.Join(dir, "weights.bin"))
	assert.Equal(t, first.Mapped, open(model).Mapped, "a later load maps the same copy")

	// A copy damaged since it was made (zero-filled at its size, or cut
	// short) is not mapped: it is made again, and said so.
	weights := filepath.Join(dir, "weights.bin")
	info, err := os.Stat(weights)
	require.NoError(t, err)
	for name, damage := range map[string]func() error{
		"zero-filled": func() error { return os.WriteFile(weights, make([]byte, info.Size()), 0o644) },
		"truncated":   func() error { return os.Truncate(weights, 100) },
	} {
		require.NoError(t, damage(), name)
		var log bytes.Buffer
		slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
		again := open(model)
		slog.SetDefault(defaultLog)
		assert.Equal(t, first.Mapped, again.Mapped, "%s: the copy is made again", name)
		assert.Contains(t, log.String(), "not as it was made", name)
		data, err := os.ReadFile(weights)
		require.NoError(t, err)
		assert.Equal(t, info.Size(), int64(len(data)), name)
		assert.False(t, bytes.Equal(make([]byte, len(data)), data), "%s: the zeros were mapped", name)
	}

	// A disk without room for a copy: the model loads as it is, nothing
	// half written stays, and the log says what to do.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	restore := onnx.SetFreeBytes(func(string) (uint64, error) { return 120 << 10, nil })
	var log bytes.Buffer
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	full := open(model)
	slog.SetDefault(defaultLog)
	restore()
	assert.Empty(t, full.Mapped, "a copy made on a full disk")
	assert.Contains(t, log.String(), "free some space")
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	written, err := filepath.Glob(filepath.Join(cache, "voice-agent", "derived", "onnxruntime", "*", "*"))
	require.NoError(t, err)
	for _, w := range written {
		assert.Contains(t, []string{".lock", "sources"}, filepath.Base(w), "left on a full disk")
	}
	assert.NotEmpty(t, open(model).Mapped, "made once there is room")

	// Options that shape the optimized graph make a copy of their own:
	// a copy made under others is another graph.
	basic, err := onnx.Open(model, ins, outs, onnx.Options{
		Optimization: ort.GraphOptimizationLevelEnableBasic, DisabledOptimizers: []string{"TransposeOptimizer"}}, "")
	require.NoError(t, err)
	t.Cleanup(func() { basic.Destroy() })
	require.NotEmpty(t, basic.Mapped)
	assert.NotEqual(t, open(model).Mapped, basic.Mapped, "one copy for two sets of options")

	silero := testenv.Model(t, "silero_vad_v5.onnx")
	s, err := onnx.Open(silero, sileroIn, sileroOut, onnx.Options{}, "")
	require.NoError(t, err)
	assert.Empty(t, s.Mapped, "Silero's copy cannot be checked; the model itself loads")
	require.NoError(t, s.Destroy())

	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
	assert.Empty(t, open(model).Mapped, "copies turned off")
}

// Two distinct 4-bit weights (MatMulNBits), whose packed layouts ONNX
// Runtime 1.30 saves into the copy's data file one after the other. The
// second lands off a 64-byte boundary, where MLAS reads its parts from the
// wrong places: relayout moves every blob to a page boundary, and the copy
// gives the original's outputs bit for bit. Kept where ONNX Runtime wrote
// them, the copy fails its check against the original and is refused,
// once: the verdict stays, and the log says why only the first time.
func TestRelayoutAlignsPrepackedBlobs(t *testing.T) {
	testenv.ONNXRuntime(t)
	defer onnx.SetMinPrepacked(1)()
	const k, n, rows = 384, 384, 2
	rng := rand.New(rand.NewPCG(1, 2))
	weight := func() []float32 {
		w := make([]float32, k*n)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		return w
	}
	model, _, err := quantize.NBits(graphedit.MatMulsModel(k, n, weight(), weight()), quantize.Format{Bits: 4})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "two-weights.onnx")
	require.NoError(t, os.WriteFile(path, model, 0o644))

	run := func() (mapped string, y []float32) {
		s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}},
			[]onnx.Tensor{{Name: "y", Type: onnx.Float}, {Name: "y1", Type: onnx.Float}}, onnx.Options{}, "")
		require.NoError(t, err)
		defer s.Destroy()
		x := make([]float32, rows*k)
		for i := range x {
			x[i] = float32(math.Sin(float64(i)))
		}
		in, err := ort.NewTensor(ort.NewShape(rows, k), x)
		require.NoError(t, err)
		defer in.Destroy()
		outs := make([]ort.Value, 2)
		defer onnx.DestroyValues(outs)
		require.NoError(t, s.Run([]ort.Value{in}, outs))
		for _, o := range outs {
			y = append(y, o.(*ort.Tensor[float32]).GetData()...)
		}
		return s.Mapped, y
	}
	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
	_, want := run()
	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "1")

	t.Run("relaid", func(t *testing.T) {
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		run() // makes the copy
		mapped, got := run()
		require.NotEmpty(t, mapped, "the copy was refused")
		assert.Equal(t, want, got, "the mapped copy's outputs")
		offsets, err := onnx.PrepackedOffsets(filepath.Dir(mapped))
		require.NoError(t, err)
		require.Len(t, offsets, 2, "one packed blob for each weight")
		for _, off := range offsets {
			assert.Zero(t, off%4096, "a blob at offset %d", off)
		}

		// Loading read the scales and the blobs of the copy's data
		// file; none of it stays resident until a run reads it.
		s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}},
			[]onnx.Tensor{{Name: "y", Type: onnx.Float}, {Name: "y1", Type: onnx.Float}}, onnx.Options{}, "")
		require.NoError(t, err)
		defer s.Destroy()
		if runtime.GOOS == "linux" {
			weights, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(s.Mapped), "weights.bin"))
			require.NoError(t, err)
			areas, err := memstat.Areas()
			require.NoError(t, err)
			var mapped, resident int64
			for _, a := range areas {
				if a.Name == weights {
					mapped += int64(a.End - a.Start)
					resident += a.RSS
				}
			}
			assert.Positive(t, mapped, "the copy's data file is mapped")
			assert.Zero(t, resident, "of the copy's data file, resident after the load")
		}
	})

	t.Run("as saved", func(t *testing.T) {
		defer onnx.KeepSavedLayout()()
		t.Setenv("XDG_CACHE_HOME", t.TempDir())
		var log bytes.Buffer
		defer slog.SetDefault(slog.Default())
		slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
		mapped, got := run()
		assert.Empty(t, mapped, "the misaligned copy was used")
		assert.Equal(t, want, got, "the original's outputs")
		assert.Contains(t, log.String(), "does not reproduce the original")
		verdicts, err := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "voice-agent", "derived", "onnxruntime", "*", "verdict"))
		require.NoError(t, err)
		require.Len(t, verdicts, 1)
		verdict, err := os.ReadFile(verdicts[0])
		require.NoError(t, err)
		assert.Contains(t, string(verdict), "does not reproduce the original")

		log.Reset()
		mapped, _ = run()
		assert.Empty(t, mapped)
		assert.Empty(t, log.String(), "the refusal was said again")
	})
}
