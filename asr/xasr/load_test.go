package xasr

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

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
