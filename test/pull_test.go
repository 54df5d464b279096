package test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// mirror serves the tiny X-ASR model under the real model's file names, as
// a mirror of the manifest's sources would; tokens replaces tokens.txt's
// content when set. It counts the requests.
func mirror(t *testing.T, tokens []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	files := map[string]string{
		"encoder-160ms.onnx": "../asr/xasr/testdata/tiny/encoder.int8.onnx",
		"decoder-160ms.onnx": "../asr/xasr/testdata/tiny/decoder.onnx",
		"joiner-160ms.onnx":  "../asr/xasr/testdata/tiny/joiner.int8.onnx",
		"tokens.txt":         "../asr/xasr/testdata/tokens.txt",
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		name := path.Base(r.URL.Path)
		if name == "tokens.txt" && tokens != nil {
			w.Write(tokens)
			return
		}
		src, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, src)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// runPull starts `voice-agent run --pull` on the null device with the
// recognizer as the one real model to get (Silero comes with
// scripts/setup), in a fresh model cache.
func runPull(t *testing.T, cache, mirrorURL string, env ...string) (*exec.Cmd, *testenv.LockedBuffer) {
	t.Helper()
	testenv.ONNXRuntime(t)
	cmd := exec.Command(binary, "run", "--pull", "--mirror", mirrorURL, "--backend", "null", "--aec=false", "--ns=false",
		"--vad", "energy", "--asr", "xasr", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json")
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "VOICE_MODELS="+cache), env...)
	out := &testenv.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out
}

// The first run gets what the assistant lacks (saying what and how much),
// verified, into the cache, and starts listening; the next run downloads
// nothing.
func TestRunPullGetsTheMissingModelsThenListens(t *testing.T) {
	srv, requests := mirror(t, nil)
	cache := t.TempDir()
	for run := range 2 {
		cmd, out := runPull(t, cache, srv.URL)
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "listening") }, 60*time.Second, 50*time.Millisecond,
			"run %d: %s", run, out)
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		require.NoError(t, cmd.Wait(), out.String())
		if run == 0 {
			assert.Contains(t, out.String(), "downloading 1 model (~559 MiB) into "+cache+": xasr-zh-en-streaming-160ms")
			assert.Contains(t, out.String(), "pulled: xasr-zh-en-streaming-160ms")
			assert.Equal(t, int32(4), requests.Load(), "the four files")
		} else {
			assert.NotContains(t, out.String(), "downloading", "nothing is missing now")
			assert.Equal(t, int32(4), requests.Load(), "no download the second time")
		}
	}
	verify := exec.Command(binary, "models", "verify", "xasr-zh-en-streaming-160ms")
	verify.Env = append(os.Environ(), "VOICE_MODELS="+cache)
	out, err := verify.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// A mirror that serves a wrong file: nothing of it is kept, and the run
// stops saying which file and why, and what gets the model; offline, it
// asks the mirror for nothing.
func TestRunPullRefusesAWrongFile(t *testing.T) {
	// As long as the real file, so only its checksum tells.
	real, err := os.ReadFile("../asr/xasr/testdata/tokens.txt")
	require.NoError(t, err)
	srv, requests := mirror(t, []byte(strings.Repeat("x", len(real))))
	cache := t.TempDir()
	cmd, out := runPull(t, cache, srv.URL)
	require.Error(t, cmd.Wait(), "a model is missing: the run stops")
	text := out.String()
	assert.Contains(t, text, "tokens.txt")
	assert.Contains(t, text, "sha256")
	assert.Contains(t, text, "voice-agent models pull xasr-zh-en-streaming-160ms")
	assert.NotContains(t, text, "listening")
	var kept []string
	require.NoError(t, filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".part") || filepath.Base(p) == "tokens.txt") {
			kept = append(kept, p)
		}
		return err
	}))
	assert.Empty(t, kept, "no half-written or wrong file left")

	before := requests.Load()
	cmd, out = runPull(t, t.TempDir(), srv.URL, "VOICE_OFFLINE=1")
	require.Error(t, cmd.Wait())
	assert.Equal(t, before, requests.Load(), "offline: no download")
	assert.NotContains(t, out.String(), "downloading")
	assert.Contains(t, out.String(), "voice-agent models pull xasr-zh-en-streaming-160ms")
}
