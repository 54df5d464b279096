//go:build mnn

package mnn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/childjob"
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

	for name, tc := range map[string]struct {
		disk func()
		says []string
	}{
		"a full disk": {func() { freeBytes = func(string) (uint64, error) { return 120 << 10, nil } }, []string{"0 MiB free in", "free some space"}},
		// FAT and exFAT write MNN's 1 GiB file out whole.
		"no sparse files": {func() { sparseFiles = func(string) bool { return false } }, []string{"without sparse files (FAT, exFAT)", "1024 MiB", "set XDG_CACHE_HOME"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			defer func(free func(string) (uint64, error), sparse func(string) bool) {
				freeBytes, sparseFiles = free, sparse
			}(freeBytes, sparseFiles)
			tc.disk()
			// The check child would see the disk as it is, not as the
			// test makes it seem, and make the pool.
			checkEnds(t, childjob.Result{End: childjob.Done})
			got, log := reply(t, model)
			assert.Equal(t, want, got)
			for _, says := range tc.says {
				assert.Contains(t, log, says)
			}
			assert.Equal(t, 1, strings.Count(log, "loaded onto the heap"), "said once: %s", log)
			root, err := os.UserCacheDir()
			require.NoError(t, err)
			written, _ := filepath.Glob(filepath.Join(root, "voice-agent", "derived", "mnn", "*", "*"+poolSuffix))
			assert.Empty(t, written, "nothing written where there is no room")
		})
	}
}

// Under a file-size limit (ulimit -f, systemd's LimitFSIZE=) MNN's
// ftruncate of its 1 GiB pool file failed and it went on with a 0-byte
// pool, which was checked, sealed, and answered from with empty lines at
// every later start. Now a process under the limit loads onto the heap
// and says why, and a later one without it makes a real pool and replies
// as the first did. The limited process is a child of the test's, which
// sets the limit on itself (its check child inherits it).
func TestFileSizeLimitLoadsOntoTheHeap(t *testing.T) {
	model := testenv.TinyLLM(t)
	if cache := os.Getenv("VOICE_TEST_FSIZE_CACHE"); cache != "" {
		t.Setenv("XDG_CACHE_HOME", cache)
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 10 << 20, Max: 10 << 20}))
		text, log := reply(t, model)
		assert.NotEmpty(t, text, "the reply under the limit")
		assert.Contains(t, log, "loaded onto the heap")
		assert.Contains(t, log, "may write files of at most 10 MiB (ulimit -f")
		fmt.Printf("reply: %q\n", text)
		return
	}
	cache := t.TempDir()
	out, _ := again(t, "VOICE_TEST_FSIZE_CACHE="+cache)
	require.Contains(t, out, "--- PASS: TestFileSizeLimitLoadsOntoTheHeap", "the limited child ran")
	_, limited, _ := strings.Cut(out, "reply: ")
	limited, _, _ = strings.Cut(limited, "\n")

	t.Setenv("XDG_CACHE_HOME", cache)
	text, log := reply(t, model)
	assert.NotEmpty(t, text)
	assert.Equal(t, fmt.Sprintf("%q", text), limited, "the same reply, from the heap")
	assert.NotContains(t, log, "heap")
	weights, _ := poolFiles(t)
	info, err := os.Stat(weights)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, info.Size(), int64(defaultMmapMiB<<20), "a real pool")
	text, log = reply(t, model)
	assert.NotEmpty(t, text, "mapped from the sealed pool")
	assert.NotContains(t, log, "made again")
}

// A pool smaller than the weights it was made from (MNN could not make
// its file, and went on) is never sealed.
func TestShortPoolIsNotSealed(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0_0_0_0_0"+poolSuffix), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0_0_0_0_sync"+poolSuffix), nil, 0o644))
	p := pool{dir: dir, making: true, weights: 66362}
	err := p.seal()
	require.ErrorIs(t, err, errShortPool)
	assert.Contains(t, err.Error(), "0 bytes in "+dir+" for 66362 bytes of weights")
	assert.NoFileExists(t, filepath.Join(dir, derived.SealFile))
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
		p, err := openPool(sources, "", defaultMmapMiB<<20)
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
		p, err := openPool(sources, poolLayout(cfg.ConfigFile, cfg.engineSettings("")), defaultMmapMiB<<20)
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
// SIGSEGV at every start. A load with no sealed pool to map runs in a
// child first, so weights that crash the engine are an error (ErrCorrupt),
// and this process lives; good weights load, their pool made once. So it
// is where no pool can be made (a read-only cache, no home, a full disk:
// the service user the heap is for), where the check runs at every start.
func TestWeightsThatCrashTheEngineAreAnError(t *testing.T) {
	notAFolder := filepath.Join(t.TempDir(), "cache")
	require.NoError(t, os.WriteFile(notAFolder, nil, 0o644))
	for name, cache := range map[string]string{"a pool is made": t.TempDir(), "no pool can be made": notAFolder} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", cache)
			dir := t.TempDir()
			testenv.CopyDir(t, testenv.TinyLLM(t), dir)
			weights := filepath.Join(dir, "llm.mnn.weight")
			good, err := os.ReadFile(weights)
			require.NoError(t, err)
			for what, bad := range map[string][]byte{"zeroed": make([]byte, len(good)), "cut short": good[:len(good)/2]} {
				require.NoError(t, os.WriteFile(weights, bad, 0o644))
				_, err = Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1})
				require.ErrorIs(t, err, ErrCorrupt, what)
				assert.Contains(t, err.Error(), "its files crash the engine (SIGSEGV", what)
			}

			require.NoError(t, os.WriteFile(weights, good, 0o644))
			text, _ := reply(t, dir)
			assert.NotEmpty(t, text, "the good weights load")
		})
	}
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
	assert.Contains(t, err.Error(), "interrupted while its load was checked")

	text, _ := reply(t, model)
	assert.NotEmpty(t, text)
}

// A stop while the load waits for another process that holds the pool's
// folder (making or checking it) ends the load, rather than putting the
// weights onto the heap past the signal.
func TestStoppedWaitEndsTheLoad(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	model := testenv.TinyLLM(t)
	cfg := Config{Dir: model, ConfigFile: "config_greedy.json", Threads: 1}
	text, _ := reply(t, model)
	require.NotEmpty(t, text)
	locks, err := filepath.Glob(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "voice-agent", "derived", "mnn", "*", ".lock"))
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
	m, err := Open(cfg)
	require.ErrorIs(t, err, derived.ErrStopped)
	assert.Nil(t, m)
}
