//go:build mnn

package mnn

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/testenv"
)

// reply opens the tiny model as the agent does, says hello and closes
// it; what the load logged comes back beside the reply.
func reply(t *testing.T, dir string) (text, log string) {
	t.Helper()
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	m, err := Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: 16})
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	text, _, err = generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	return text, buf.String()
}

// poolFiles are the files MNN wrote into the one pool under the cache.
func poolFiles(t *testing.T) (weights, marker string) {
	t.Helper()
	root, err := os.UserCacheDir()
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "voice-agent", "derived", "mnn", "*", "*"+poolSuffix))
	require.NoError(t, err)
	for _, f := range files {
		if info, err := os.Stat(f); err == nil && info.Size() > 0 {
			weights = f
		} else {
			marker = f
		}
	}
	require.NotEmpty(t, weights, "no weights in the pool: %v", files)
	require.NotEmpty(t, marker, "no sync marker in the pool: %v", files)
	return weights, marker
}

// MNN trusts a pool whose sync marker stays, whatever became of its
// weights: zeroed, it gave empty replies at every later start. A pool not
// as it was sealed is made again, said so, and the reply is the same.
func TestDamagedPoolIsMadeAgain(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	model := testenv.TinyLLM(t)
	want, _ := reply(t, model)
	require.NotEmpty(t, want)
	for name, damage := range map[string]func(weights string) error{
		"zeroed": func(weights string) error {
			f, err := os.OpenFile(weights, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteAt(make([]byte, 1<<20), 0)
			return errors.Join(err, f.Close())
		},
		"deleted":   os.Remove,
		"cut short": func(weights string) error { return os.Truncate(weights, 4096) },
	} {
		weights, marker := poolFiles(t)
		require.NoError(t, damage(weights), name)
		require.FileExists(t, marker, name)
		got, log := reply(t, model)
		assert.Equal(t, want, got, "%s: the reply", name)
		assert.Contains(t, log, "not as they were made", name)
		_, log = reply(t, model)
		assert.NotContains(t, log, "not as they were made", "%s: made again once", name)
	}
}

// Where the pool cannot be made (a cache that is not a folder, a disk
// without room for it), the weights go onto the heap and the log says
// why and what to do; the reply is the same. On a full disk MNN would
// have died of SIGBUS writing through its mapping.
func TestNoPoolLoadsOntoTheHeap(t *testing.T) {
	model := testenv.TinyLLM(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	want, _ := reply(t, model)

	notAFolder := filepath.Join(t.TempDir(), "cache")
	require.NoError(t, os.WriteFile(notAFolder, nil, 0o644))
	t.Setenv("XDG_CACHE_HOME", notAFolder)
	got, log := reply(t, model)
	assert.Equal(t, want, got)
	assert.Contains(t, log, "(set XDG_CACHE_HOME to a writable folder)")

	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	defer func(f func(string) (uint64, error)) { freeBytes = f }(freeBytes)
	freeBytes = func(string) (uint64, error) { return 120 << 10, nil }
	got, log = reply(t, model)
	assert.Equal(t, want, got)
	assert.Contains(t, log, "0 MiB free in")
	assert.Contains(t, log, "free some space")
	root, err := os.UserCacheDir()
	require.NoError(t, err)
	written, _ := filepath.Glob(filepath.Join(root, "voice-agent", "derived", "mnn", "*", "*"+poolSuffix))
	assert.Empty(t, written, "nothing written where there is no room")
}

// A Hugging Face snapshot is a folder of symlinks into its blobs: each
// model gets the pool of its own content, not one shared by every folder
// of symlinks.
func TestSymlinkedModelsHaveTheirOwnPool(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	link := func(contents string) string {
		blobs, snapshot := t.TempDir(), t.TempDir()
		for _, name := range []string{"llm.mnn", "llm.mnn.weight", "config.json"} {
			blob := filepath.Join(blobs, name)
			require.NoError(t, os.WriteFile(blob, []byte(contents+name), 0o644))
			require.NoError(t, os.Symlink(blob, filepath.Join(snapshot, name)))
		}
		return snapshot
	}
	dirs := map[string]bool{}
	for _, model := range []string{link("model A"), link("model B")} {
		sources, err := modelFiles(model)
		require.NoError(t, err)
		assert.Len(t, sources, 3, "the symlinked files are the model")
		p, err := openPool(sources, "")
		require.NoError(t, err)
		p.release()
		dirs[p.dir] = true
	}
	assert.Len(t, dirs, 2, "two models, two pools")
}

// MNN packs the pool for the settings it loads under: a model loaded
// under another precision, thread count or config file gets a pool of its
// own, not one packed for other settings; a setting that packs nothing
// (the reply's length) shares it.
func TestPoolFollowsTheLayoutSettings(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	sources, err := modelFiles(testenv.TinyLLM(t))
	require.NoError(t, err)
	dir := func(cfg Config) string {
		p, err := openPool(sources, poolLayout(cfg.ConfigFile, cfg.engineSettings("")))
		require.NoError(t, err)
		p.release()
		return p.dir
	}
	base := Config{ConfigFile: "config_greedy.json", Threads: 1}
	made := dir(base)
	assert.Equal(t, made, dir(Config{ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: 8}), "the reply's length")
	for name, cfg := range map[string]Config{
		"threads":     {ConfigFile: "config_greedy.json", Threads: 2},
		"precision":   {ConfigFile: "config_greedy.json", Threads: 1, Settings: map[string]any{"precision": "high"}},
		"config file": {ConfigFile: "config.json", Threads: 1},
	} {
		assert.NotEqual(t, made, dir(cfg), name)
	}
}

// MNN checks none of its files: corrupt weights crashed the process with
// SIGSEGV at every start. The first load of an export runs in a child
// first, so weights that crash the engine are an error that says what to
// do, and this process lives; good weights load, their pool made once.
func TestWeightsThatCrashTheEngineAreAnError(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	testenv.CopyDir(t, testenv.TinyLLM(t), dir)
	weights := filepath.Join(dir, "llm.mnn.weight")
	good, err := os.ReadFile(weights)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(weights, make([]byte, len(good)), 0o644))

	_, err = Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its files crash the engine (SIGSEGV")
	assert.Contains(t, err.Error(), "pull the model again")

	require.NoError(t, os.WriteFile(weights, good, 0o644))
	text, _ := reply(t, dir)
	assert.NotEmpty(t, text, "the good weights load")
}

// Ctrl-C while the child checks a new export ends the check (it was
// waited for to the end): Open says it was interrupted, nothing is
// sealed, and the next load makes the pool and replies.
func TestInterruptEndsTheFirstLoadsCheck(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	model := testenv.TinyLLM(t)
	interrupted := make(chan struct{})
	close(interrupted)
	derived.StopWaitingOn(interrupted)
	_, err := Open(Config{Dir: model, ConfigFile: "config_greedy.json", Threads: 1})
	derived.StopWaitingOn(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted while its first load was checked")

	text, _ := reply(t, model)
	assert.NotEmpty(t, text)
}
