package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
)

// pullAgent runs the command line in-process on a model cache of its own
// (returned), and returns what it wrote to stderr.
func pullAgent(t *testing.T, args ...string) (cache, stderr string, err error) {
	t.Helper()
	cache = t.TempDir()
	t.Setenv(assets.EnvCache, cache)
	root := newApp().root()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return cache, errOut.String(), err
}

// With the network (or the mirror) out of reach, a pull, by itself or
// before a run, is not retried with back-off: it ends at once with one
// line saying so, and the three ways on: offline with what is installed,
// a mirror, or the files copied by hand into the cache, which it names.
// No empty model folder is left behind, and no mirror's password is shown
// (journald keeps what a service prints).
func TestPullWithoutTheNetworkSaysSoInOneLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := l.Addr().String()
	require.NoError(t, l.Close())
	t.Setenv(envOffline, "")
	run := []string{"run", "--pull", "--backend", "null", "--aec=false", "--ns=false", "--vad", "energy", "--asr", "xasr",
		"--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", filepath.Join("..", "..", "test", "testdata", "demo.json")}
	for _, mirror := range []struct{ url, shown, why string }{
		{"http://" + refused, "http://" + refused, refused + ": connection refused"},
		{"http://no-such-host.invalid/", "http://no-such-host.invalid/", "no-such-host.invalid: "},
		{"http://user:secret@" + refused + "/", "http://user:xxxxx@" + refused + "/", refused + ": connection refused"},
	} {
		for _, args := range [][]string{{"models", "pull", "smart-turn-v3.2-cpu", "xasr-zh-en-streaming-160ms"}, run} {
			t.Run(args[0]+" via "+mirror.url, func(t *testing.T) {
				start := time.Now()
				cache, stderr, err := pullAgent(t, append(args, "--mirror", mirror.url)...)
				took := time.Since(start)
				require.Error(t, err)
				msg := err.Error()
				assert.NotContains(t, msg, "\n", "one line")
				for _, want := range []string{
					"the mirror " + mirror.shown + " cannot be reached (" + mirror.why,
					"set VOICE_OFFLINE=1 to run with what is installed", "pass --mirror URL",
					"copy the model files by hand into " + cache + "/NAME/", "xasr-zh-en-streaming-160ms",
				} {
					assert.Contains(t, msg, want)
				}
				assert.NotContains(t, stderr, "attempt", "no retries")
				assert.NotContains(t, msg+stderr, "secret")
				assert.Less(t, took, 5*time.Second)
				left, err := os.ReadDir(cache)
				require.NoError(t, err)
				assert.Empty(t, left, "left in the cache")
			})
		}
	}
}

// Offline ($VOICE_OFFLINE), models pull downloads nothing, and says why.
func TestModelsPullOfflineRefuses(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(envOffline, "1")
	cache, _, err := pullAgent(t, "models", "pull", "silero-vad-v5", "--mirror", srv.URL)
	require.Error(t, err)
	for _, want := range []string{"$VOICE_OFFLINE is set", "nothing is downloaded", cache + "/NAME/"} {
		assert.ErrorContains(t, err, want)
	}
	assert.Zero(t, requests.Load(), "requests")
}

// A pull has an overall deadline when asked (--timeout): a source slow
// but never slow enough to be dropped ends there, with what came kept and
// a line that says to run it again.
func TestModelsPullStopsAtItsTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			if _, err := w.Write(make([]byte, 1024)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv(envOffline, "")
	start := time.Now()
	_, _, err := pullAgent(t, "models", "pull", "smart-turn-v3.2-cpu", "--mirror", srv.URL, "--timeout", "300ms")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped after --timeout 300ms")
	assert.Contains(t, err.Error(), "run it again to resume")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// A pull that waits for another pull of the same model says so, once for
// each model however often it waits, and how to stop waiting.
func TestPullSaysOnceThatItWaits(t *testing.T) {
	var out bytes.Buffer
	say := waitingPrinter(&out)
	say("silero-vad-v5", "/cache/silero-vad-v5")
	say("silero-vad-v5", "/cache/silero-vad-v5")
	say("smart-turn-v3.2-cpu", "/cache/smart-turn-v3.2-cpu")
	assert.Equal(t, "silero-vad-v5: waiting for another pull of it (into /cache/silero-vad-v5) to finish; Ctrl-C stops waiting\n"+
		"smart-turn-v3.2-cpu: waiting for another pull of it (into /cache/smart-turn-v3.2-cpu) to finish; Ctrl-C stops waiting\n", out.String())
}

// `models path` alone prints the model cache, which the glasses' guide
// provisions; with a name, that model's folder in it.
func TestModelsPath(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(assets.EnvCache, cache)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, cache},
		{[]string{"smart-turn-v3.2-cpu"}, filepath.Join(cache, "smart-turn-v3.2-cpu")},
	} {
		root := newApp().root()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append([]string{"models", "path"}, tc.args...))
		require.NoError(t, root.ExecuteContext(context.Background()), "models path %v", tc.args)
		assert.Equal(t, tc.want+"\n", out.String(), "models path %v", tc.args)
	}
}
