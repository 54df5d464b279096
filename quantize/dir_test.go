package quantize_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/quantize"
	"github.com/voiceassistant/voice/tts/moss"
	"github.com/voiceassistant/voice/tts/normalize"
)

const tinyMoss, tinyCodec = "../tts/moss/testdata/tiny", "../tts/moss/testdata/tiny-codec"

// externalMossSet writes the tiny MOSS set as the published one is laid
// out: the prefill and decode-step graphs' weights in one shared data
// file, the local graph's in another.
func externalMossSet(t *testing.T) string {
	dir := t.TempDir()
	shared := map[string]string{
		"moss_tts_prefill.onnx":                   "moss_tts_global_shared.data",
		"moss_tts_decode_step.onnx":               "moss_tts_global_shared.data",
		"moss_tts_local_fixed_sampled_frame.onnx": "moss_tts_local_shared.data",
	}
	files := map[string]*graphedit.DataFile{}
	entries, err := os.ReadDir(tinyMoss)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(tinyMoss, e.Name()))
		require.NoError(t, err)
		if loc, ok := shared[e.Name()]; ok {
			d := files[loc]
			if d == nil {
				f, err := os.Create(filepath.Join(dir, loc))
				require.NoError(t, err)
				t.Cleanup(func() { f.Close() })
				d = graphedit.NewDataFile(loc, f)
				files[loc] = d
			}
			data, err = d.Externalize(data)
			require.NoError(t, err)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
	}
	return dir
}

func synthesize(t *testing.T, dir string) []float32 {
	tts, err := moss.Open(dir, tinyCodec, moss.Options{})
	require.NoError(t, err)
	defer tts.Close()
	var pcm []float32
	require.NoError(t, tts.Synthesize(context.Background(), "Hello there.", normalize.LangEnglish, func(p []float32) error {
		pcm = append(pcm, p...)
		return nil
	}))
	return pcm
}

func fileSize(t *testing.T, path string) int64 {
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Size()
}

// A set whose graphs share an external data file, as MOSS-TTS-Nano's do:
// its weights are written once, it speaks exactly as the inline set, and
// Dir quantizes it into a set of the same layout, with the data file still
// shared and a quarter of the size.
func TestDirKeepsSharedExternalData(t *testing.T) {
	testenv.ONNXRuntime(t)
	ext := externalMossSet(t)
	global := fileSize(t, filepath.Join(ext, "moss_tts_global_shared.data"))
	prefill := fileSize(t, filepath.Join(tinyMoss, "moss_tts_prefill.onnx"))
	decode := fileSize(t, filepath.Join(tinyMoss, "moss_tts_decode_step.onnx"))
	assert.Less(t, global, prefill+decode-prefill/2, "the weights both graphs hold are written once")
	assert.Less(t, fileSize(t, filepath.Join(ext, "moss_tts_prefill.onnx")), prefill/4, "the graph refers to its weights")

	want := synthesize(t, tinyMoss)
	require.NotEmpty(t, want)
	assert.Equal(t, want, synthesize(t, ext), "the same weights, from the data files")

	out := filepath.Join(t.TempDir(), "int8")
	graphs, err := quantize.Dir(ext, out, quantize.Format{Bits: 8}, nil)
	require.NoError(t, err)
	assert.Len(t, graphs, 3)
	for _, name := range []string{"moss_tts_global_shared.data", "moss_tts_local_shared.data", "tts_browser_onnx_meta.json", "tokenizer.model"} {
		assert.FileExists(t, filepath.Join(out, name))
	}
	quantized := fileSize(t, filepath.Join(out, "moss_tts_global_shared.data"))
	assert.Less(t, quantized, global)
	assert.Less(t, quantized, referenced(t, out, "moss_tts_prefill.onnx")+referenced(t, out, "moss_tts_decode_step.onnx")/2,
		"the graphs still share their common weights")
	assert.NotEmpty(t, synthesize(t, out), "the quantized set speaks")
}

// referenced is how many bytes of external data the graph refers to.
func referenced(t *testing.T, dir, name string) int64 {
	model, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	var n int64
	_, err = graphedit.MapInitializers(model, func(b []byte) ([]byte, error) {
		_, _, length, ok, err := graphedit.ExternalRef(b)
		if ok {
			n += length
		}
		return b, err
	})
	require.NoError(t, err)
	return n
}

// A graph kept as it is cannot share a data file with quantized graphs:
// the rewritten file no longer holds its weights where it says.
func TestDirRefusesKeptGraphSharingData(t *testing.T) {
	ext := externalMossSet(t)
	_, err := quantize.Dir(ext, t.TempDir(), quantize.Format{Bits: 8}, []string{"moss_tts_decode_step.onnx"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "moss_tts_decode_step.onnx is kept as it is but shares moss_tts_global_shared.data")
}

// The tiny MOSS-TTS-Nano set with its MatMuls in 4 bits (ONNX Runtime's
// MatMulNBits) and the rest in int8 opens and speaks.
func TestInt4MOSSSpeaks(t *testing.T) {
	testenv.ONNXRuntime(t)
	src := tinyMoss
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	matmuls := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		if filepath.Ext(e.Name()) == ".onnx" {
			var st quantize.Stats
			data, st, err = quantize.NBits(data, quantize.Format{Bits: 4})
			require.NoError(t, err, e.Name())
			matmuls += st.Weights
			data, _, err = quantize.Int8(data)
			require.NoError(t, err, e.Name())
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
	}
	require.Positive(t, matmuls, "some MatMul went to 4 bits")
	tts, err := moss.Open(dir, tinyCodec, moss.Options{})
	require.NoError(t, err)
	defer tts.Close()
	samples := 0
	require.NoError(t, tts.Synthesize(context.Background(), "Hello there.", normalize.LangEnglish, func(p []float32) error {
		samples += len(p)
		return nil
	}))
	assert.Positive(t, samples)
}
