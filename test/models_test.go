package test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// With an empty cache, the models scripts/setup installs under
// third_party/ (ONNX Runtime, Silero) are found and verified there, as the
// agent loads them; the others are missing, each with the command that
// gets it.
func TestModelsListOnAnEmptyCache(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	cache := t.TempDir()
	t.Setenv("VOICE_MODELS", cache)
	stdout, stderr, err := agent(t, "models", "list")
	require.NoError(t, err, stderr)
	for _, name := range []string{"smart-turn-v3.2-cpu", "xasr-zh-en-streaming-160ms", "mnn-pocket-0.3b-int4", "MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"} {
		assert.Contains(t, stdout, "missing: voice-agent models pull "+name)
	}
	assert.Contains(t, stdout, cache)
	// Their files' sizes are known only once downloaded: the manifest's
	// estimates stand in, marked as such.
	assert.Regexp(t, `xasr-zh-en-streaming-160ms +asr +~559 MiB `, stdout)
	assert.Regexp(t, `mnn-pocket-0.3b-int4 +llm +~165 MiB `, stdout)
	assert.NotContains(t, stdout, "size unknown")
	assert.NotContains(t, stdout, " 0 B ")
	assert.Equal(t, 0, strings.Count(stdout, "missing: voice-agent models pull onnxruntime-linux-"))

	stdout, stderr, err = agent(t, "models", "list", "--json")
	require.NoError(t, err, stderr)
	var rows []struct {
		Model      string `json:"model"`
		State      string `json:"state"`
		Size       int64  `json:"size_bytes"`
		SizeApprox bool   `json:"size_approximate"`
		Path       string `json:"path"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	local := map[string]bool{}
	for _, r := range rows {
		if r.Model == "xasr-zh-en-streaming-160ms" {
			assert.Equal(t, int64(586000000), r.Size)
			assert.True(t, r.SizeApprox)
		}
		if r.State == "verified" {
			local[r.Model] = true
			assert.Contains(t, r.Path, filepath.Join("third_party", ""), r.Model)
		}
	}
	assert.True(t, local["silero-vad-v5"], "installed by scripts/setup")
	assert.Len(t, local, 2, "Silero and this platform's ONNX Runtime: %v", local)

	stdout, stderr, err = agent(t, "models", "verify", "silero-vad-v5")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, filepath.Join("third_party", "models", "silero_vad_v5.onnx")+": ok")
}

// After `models pull` (here from a local mirror serving the tiny X-ASR
// set under the real file names), the recognizer finds its model in the
// cache with no flags.
func TestPulledModelIsFoundWithoutFlags(t *testing.T) {
	testenv.ONNXRuntime(t)
	files := map[string]string{
		"encoder-160ms.onnx": "../asr/xasr/testdata/tiny/encoder.int8.onnx",
		"decoder-160ms.onnx": "../asr/xasr/testdata/tiny/decoder.onnx",
		"joiner-160ms.onnx":  "../asr/xasr/testdata/tiny/joiner.int8.onnx",
		"tokens.txt":         "../asr/xasr/testdata/tokens.txt",
	}
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src, ok := files[path.Base(r.URL.Path)]
		if !ok || !strings.Contains(r.URL.Path, "chunk-160ms-model") {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, src)
	}))
	defer mirror.Close()
	t.Setenv("VOICE_MODELS", t.TempDir())

	_, stderr, err := agent(t, "models", "pull", "xasr-zh-en-streaming-160ms", "--mirror", mirror.URL)
	require.NoError(t, err, stderr)
	stdout, stderr, err := agent(t, "models", "verify", "xasr-zh-en-streaming-160ms")
	require.NoError(t, err, stderr)
	assert.Equal(t, 4, strings.Count(stdout, ": ok"))

	stdout, stderr, err = agent(t, "asr", "testdata/demo.wav", "--json")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, `"type":"final"`)

	stdout, _, err = agent(t, "models", "path", "xasr-zh-en-streaming-160ms")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(strings.TrimSpace(stdout), "tokens.txt"))
	assert.NoError(t, err)

	// Several models: each is tried, and the summary says which failed
	// and what to do (the mirror has no Smart Turn).
	_, stderr, err = agent(t, "models", "pull", "smart-turn-v3.2-cpu", "xasr-zh-en-streaming-160ms", "--mirror", mirror.URL)
	require.Error(t, err)
	assert.Contains(t, stderr, "pulled: xasr-zh-en-streaming-160ms")
	assert.Contains(t, stderr, "could not pull smart-turn-v3.2-cpu")
	assert.Contains(t, stderr, "--mirror URL")
	assert.Contains(t, stderr, "by hand")
}

// A model in the cache that is incomplete (an interrupted copy, a disk
// error) stops the command before anything runs, naming the file and the
// command that repairs it.
func TestDamagedCachedModelStopsTheCommand(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VOICE_MODELS", cache)
	damaged := filepath.Join(cache, "silero-vad-v5", "silero_vad_v5.onnx")
	require.NoError(t, os.MkdirAll(filepath.Dir(damaged), 0o755))
	require.NoError(t, os.WriteFile(damaged, []byte("first bytes of a cut download"), 0o644))

	for _, args := range [][]string{
		{"replay", "testdata/demo.wav", "--vad", "silero", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"},
		{"vad", "testdata/demo.wav"},
	} {
		_, stderr, err := agent(t, args...)
		require.Error(t, err, args[0])
		assert.Contains(t, stderr, damaged, args[0])
		assert.Contains(t, stderr, "has 29 bytes, expected 2327524", args[0])
		assert.Contains(t, stderr, "voice-agent models pull silero-vad-v5", args[0])
		assert.NotContains(t, stderr, "panic", args[0])
	}
}

// models quantize on a model set's directory quantizes every graph but the
// kept ones (X-ASR's decoder, as sherpa-onnx keeps it), copies the rest,
// and the set still recognizes; models compare says how closely each
// quantized graph follows its original.
func TestQuantizeSetAndCompare(t *testing.T) {
	src := tinyXASR(t)
	out := filepath.Join(t.TempDir(), "int8")
	stdout, stderr, err := agent(t, "models", "quantize", "--keep", "decoder.onnx", src, out)
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, "2 graphs quantized (encoder.int8.onnx, joiner.int8.onnx)")
	for _, name := range []string{"decoder.onnx", "tokens.txt"} {
		want, err := os.ReadFile(filepath.Join(src, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s is copied as it is", name)
	}
	assert.FileExists(t, filepath.Join(out, "encoder.int8.data"), "weights beside the graph, for ONNX Runtime to map")
	_, stderr, err = agent(t, "asr", "testdata/demo.wav", "--asr-model-dir", out)
	require.NoError(t, err, stderr)

	stdout, stderr, err = agent(t, "models", "compare", src, out, "--json")
	require.NoError(t, err, stderr)
	var graphs []struct {
		Graph   string `json:"graph"`
		Outputs []struct {
			Output string  `json:"output"`
			Cosine float64 `json:"cosine"`
			Agree  float64 `json:"agreement"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &graphs), stdout)
	var names []string
	for _, g := range graphs {
		names = append(names, g.Graph)
		require.NotEmpty(t, g.Outputs)
		for _, o := range g.Outputs {
			assert.Greater(t, o.Cosine, 0.99, "%s %s", g.Graph, o.Output)
		}
	}
	assert.Equal(t, []string{"decoder.onnx", "encoder.int8.onnx", "joiner.int8.onnx"}, names)
}

// models quantize --block-size: a 4-bit set in blocks of 64 still
// recognizes; a size ONNX Runtime cannot take is refused before anything
// is written. (The tiny model's widths are not multiples of 64, so its
// files do not shrink; quantize checks the sizes.)
func TestQuantizeBlockSize(t *testing.T) {
	src := tinyXASR(t)
	out := filepath.Join(t.TempDir(), "b64")
	_, stderr, err := agent(t, "models", "quantize", "--bits", "4", "--block-size", "64", "--keep", "decoder.onnx", src, out)
	require.NoError(t, err, stderr)
	_, stderr, err = agent(t, "asr", "testdata/demo.wav", "--asr-model-dir", out)
	require.NoError(t, err, stderr)

	out = filepath.Join(t.TempDir(), "b48")
	_, stderr, err = agent(t, "models", "quantize", "--bits", "4", "--block-size", "48", src, out)
	require.Error(t, err)
	assert.Contains(t, stderr, "blocks of 48 weights: 16, 32, 64, 128 or 256")
	assert.NoDirExists(t, out)
}
