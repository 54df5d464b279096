package moss

import (
	"bytes"
	"cmp"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/childjob"
	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

// openLogged opens the attention set with opts, its log in the string
// it returns.
func openLogged(t *testing.T, opts Options) (*Synthesizer, string, error) {
	t.Helper()
	testenv.ONNXRuntime(t)
	var log bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	s, err := Open(attentionTTS, codecDir, opts)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, log.String(), err
}

// rewriteEnds has the rewrites' children end as r says, none started,
// until the test ends.
func rewriteEnds(t *testing.T, r childjob.Result) {
	t.Helper()
	run := runJob
	t.Cleanup(func() { runJob = run })
	runJob = func(string, any, time.Duration) (childjob.Result, error) { return r, nil }
}

// sharedVerdict is the verdict on the decode step's shared form in the
// test's cache, "" if none was kept.
func sharedVerdict(t *testing.T) string {
	t.Helper()
	kept, err := filepath.Glob(filepath.Join(derivedRoot(t), "moss-shared-kv", "*", derivedVerdict))
	require.NoError(t, err)
	if len(kept) == 0 {
		return ""
	}
	require.Len(t, kept, 1)
	v, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	return string(v)
}

// A rewrite is derived and checked in a child process (the agent's first
// load then peaks as its later ones do), so what happens to the child
// happens to it alone: killed (the OOM killer), or failed (a full disk),
// the synthesizer loads without the rewrite, said in one line, and the
// next load tries again; crashed or stuck, the rewrite is left, said
// once; where no child starts (an emulator without binfmt), it is derived
// here.
func TestRewriteInChild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ended   childjob.Result
		shared  bool
		said    string
		verdict string // "" where none is kept, and the next load tries again
	}{
		{"killed", childjob.Result{End: childjob.Killed, Signal: syscall.SIGKILL, How: "signal: killed"}, false, "the child process deriving it was killed (out of memory?): the next start tries again", ""},
		{"failed", childjob.Result{End: childjob.Failed, Err: errors.New("moss: a full disk")}, false, "moss: a full disk", ""},
		{"crashed", childjob.Result{End: childjob.Faulted, Signal: syscall.SIGSEGV, How: "SIGSEGV: segmentation violation"}, false, "", "not derived: ONNX Runtime crashed (SIGSEGV: segmentation violation; remove "},
		{"stuck", childjob.Result{End: childjob.TimedOut, How: "signal: killed"}, false, "", "not derived: a child process took over 10m0s and was ended"},
		{"no child", childjob.Result{End: childjob.NotStarted, Err: errors.New("exec format error")}, true, "the decode step's KV cache is written in place", "shared\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			// The rewrites alone: no optimized copies (a child each).
			t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0")
			rewriteEnds(t, tc.ended)
			s, log, err := openLogged(t, Options{})
			require.NoError(t, err)
			assert.Equal(t, tc.shared, s.sharedDecode)
			assert.Contains(t, log, cmp.Or(tc.said, tc.verdict))
			if tc.verdict == "" {
				assert.Empty(t, sharedVerdict(t))
			} else {
				assert.True(t, strings.HasPrefix(sharedVerdict(t), tc.verdict), "verdict %q", sharedVerdict(t))
			}

			runJob = childjob.Run
			s, log, err = openLogged(t, Options{})
			require.NoError(t, err)
			if tc.verdict == "" {
				assert.True(t, s.sharedDecode, "not derived at the next load: %s", log)
			} else {
				assert.Equal(t, tc.shared, s.sharedDecode, "derived again after its verdict")
				assert.NotContains(t, log, "not derived", "the verdict said again")
			}
		})
	}
}

// A stop (Ctrl-C) while a rewrite is derived ends the load: nothing is
// loaded after it, and the stop is what is said.
func TestRewriteStopped(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rewriteEnds(t, childjob.Result{End: childjob.Stopped})
	_, _, err := openLogged(t, Options{})
	require.ErrorIs(t, err, errStopped)
	assert.Contains(t, err.Error(), "moss_tts_decode_step.onnx: interrupted while its rewrite was derived")
	assert.Empty(t, sharedVerdict(t))
}

// A stop while the load waits for another process that derives the same
// rewrite (it holds the rewrite's folder) ends the load too, rather than
// going on without the rewrite past the signal.
func TestStoppedWaitForARewrite(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("VOICE_ORT_MAPPED_WEIGHTS", "0") // the rewrites alone
	_, _, err := openLogged(t, Options{})
	require.NoError(t, err)
	locks, err := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "voice-agent", "derived", "moss-shared-kv", "*", ".lock"))
	require.NoError(t, err)
	require.Len(t, locks, 1)
	other, err := os.Open(locks[0])
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, syscall.Flock(int(other.Fd()), syscall.LOCK_EX), "held as another process would")
	stop := make(chan struct{})
	close(stop)
	derived.StopWaitingOn(stop)
	defer derived.StopWaitingOn(nil)
	_, _, err = openLogged(t, Options{})
	require.ErrorIs(t, err, derived.ErrStopped)
}

// A rewrite whose derivation would take the agent and its child over the
// memory budget refuses the load, saying what the first start costs and
// the way out; within the budget it is derived.
func TestRewriteOverBudget(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// The graphs' optimized copies first, so that theirs is not the
	// budget's refusal.
	_, _, err := openLogged(t, Options{growingKV: true})
	require.NoError(t, err)

	_, _, err = openLogged(t, Options{ONNX: onnx.Options{MemoryBudget: 1}})
	require.ErrorIs(t, err, childjob.ErrOverBudget)
	for _, want := range []string{"moss_tts_decode_step.onnx", "derives a rewrite of it (moss-shared-kv), which takes about 110 MiB", "over the memory budget of 1 MiB", "--memory-budget 0"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Empty(t, sharedVerdict(t))

	s, log, err := openLogged(t, Options{ONNX: onnx.Options{MemoryBudget: 1 << 20}})
	require.NoError(t, err)
	assert.True(t, s.sharedDecode)
	assert.Contains(t, log, "anonymous_mib_while_derived=110")
}
