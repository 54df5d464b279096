package derived

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func weightsFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "llm.mnn.weight")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func acquire(t *testing.T, engine, version string, sources ...string) string {
	t.Helper()
	dir, release, err := Acquire(engine, version, sources...)
	require.NoError(t, err)
	release()
	return dir
}

// The directory follows the model's content and the engine's version, not
// the file's name or place: a model pulled again elsewhere finds its
// derived files, a changed model or engine never meets stale ones.
func TestDirFollowsContentAndVersion(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a := weightsFile(t, "weights A")
	dir := acquire(t, "mnn", "3.6.1", a)
	assert.DirExists(t, dir)
	root, err := Root()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "mnn"), filepath.Dir(dir))

	assert.Equal(t, dir, acquire(t, "mnn", "3.6.1", a), "the same model and engine")
	assert.Equal(t, dir, acquire(t, "mnn", "3.6.1", weightsFile(t, "weights A")), "the same content elsewhere")
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.7.0", a), "another engine version")
	assert.NotEqual(t, dir, acquire(t, "ort", "3.6.1", a), "another engine")
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.6.1", weightsFile(t, "weights B")), "other weights")

	// Rewritten in place with the same size: the kept sum is not trusted,
	// since the modification time changed.
	require.NoError(t, os.WriteFile(a, []byte("weights C"), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(a, later, later))
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.6.1", a), "a model changed in place")
}

// A file's own name does not make another copy (a symlink to the model
// under another name shares its folder); the names of the files the
// engine finds by name (external data) do.
func TestDirFollowsTheNamesTheEngineFindsFilesBy(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	graph := weightsFile(t, "graph")
	dir := acquire(t, "onnxruntime", "1", graph)
	link := filepath.Join(t.TempDir(), "smart-turn-v3.onnx")
	require.NoError(t, os.Symlink(graph, link))
	assert.Equal(t, dir, acquire(t, "onnxruntime", "1", link), "a symlink under another name")

	data := t.TempDir()
	a, b := filepath.Join(data, "a.data"), filepath.Join(data, "b.data")
	require.NoError(t, os.WriteFile(a, []byte("weights"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("weights"), 0o644))
	assert.NotEqual(t, acquire(t, "onnxruntime", "1", graph, a), acquire(t, "onnxruntime", "1", graph, b),
		"the same data under another name is another model")
}

// Symlinks planted in the derived files' folders are not followed: the
// memo of a model's sum is written by rename, and a symlink as a folder's
// lock is refused with the way out (bug: their targets were overwritten
// or created).
func TestPlantedSymlinksAreNotFollowed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root, err := Root()
	require.NoError(t, err)
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o600))
	path := weightsFile(t, "weights")
	resolved, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	name := sha256.Sum256([]byte(resolved))
	memo := filepath.Join(root, "sums", hex.EncodeToString(name[:16]))
	require.NoError(t, os.MkdirAll(filepath.Dir(memo), 0o755))
	require.NoError(t, os.Symlink(victim, memo))

	dir := acquire(t, "mnn", "1", path)
	info, err := os.Lstat(memo)
	require.NoError(t, err)
	assert.True(t, info.Mode().IsRegular(), "the memo replaced the symlink")

	nologin := filepath.Join(outside, "nologin")
	for _, target := range []string{victim, nologin} {
		lock := filepath.Join(dir, ".lock")
		require.NoError(t, os.Remove(lock))
		require.NoError(t, os.Symlink(target, lock))
		_, _, err := Acquire("mnn", "1", path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), lock+": a symlink, not a file the agent made; remove it")
		assert.NotContains(t, err.Error(), "XDG_CACHE_HOME")
	}
	kept, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(kept))
	info, err = os.Stat(victim)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	assert.NoFileExists(t, nologin, "not created through the link")
}

// A cache where no folder can be made says to set XDG_CACHE_HOME.
func TestUnwritableCacheSaysWhatToSet(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root, err := Root()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "mnn"), nil, 0o644))
	_, _, err = Acquire("mnn", "1", weightsFile(t, "weights"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(set XDG_CACHE_HOME to a writable folder)")
}

func TestMissingSourceIsNamed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	missing := filepath.Join(t.TempDir(), "llm.mnn.weight")
	_, _, err := Acquire("mnn", "3.6.1", missing)
	require.Error(t, err)
	assert.Contains(t, err.Error(), missing)
}

// A second process loading the same model waits for the first.
func TestAcquireWaitsForTheHolder(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a := weightsFile(t, "weights")
	_, release, err := Acquire("mnn", "1", a)
	require.NoError(t, err)
	got := make(chan struct{})
	go func() {
		_, again, err := Acquire("mnn", "1", a)
		if err == nil {
			again()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("acquired while held")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("not acquired after release")
	}
}

// Holding says whether a folder is held, until its last release (called
// twice, as a deferred release after an early one is).
func TestHoldingFollowsAcquireAndRelease(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	require.False(t, Holding())
	_, releaseA, err := Acquire("mnn", "1", weightsFile(t, "weights A"))
	require.NoError(t, err)
	_, releaseB, err := Acquire("onnxruntime", "1", weightsFile(t, "weights B"))
	require.NoError(t, err)
	assert.True(t, Holding())
	releaseA()
	releaseA()
	assert.True(t, Holding(), "B is still held")
	releaseB()
	assert.False(t, Holding())
}

// A wait for another process's lock says so, and ends when the process is
// interrupted (bug: a silent wait, forever if the holder was stopped).
func TestWaitForALockEndsOnInterrupt(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a := weightsFile(t, "weights")
	_, release, err := Acquire("mnn", "1", a)
	require.NoError(t, err)
	defer release()
	var log syncBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	interrupted := make(chan struct{})
	defer StopWaitingOn(nil)
	StopWaitingOn(interrupted)
	got := make(chan error, 1)
	go func() {
		_, again, err := Acquire("mnn", "1", a)
		if err == nil {
			again()
		}
		got <- err
	}()
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "waiting for another process") }, 5*time.Second, 10*time.Millisecond)
	close(interrupted)
	select {
	case err := <-got:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "stopped waiting for the process that holds")
		assert.ErrorIs(t, err, ErrStopped, "what a loader ends on")
		assert.NotContains(t, err.Error(), "XDG_CACHE_HOME", "the cache is writable: the way out is not to set it")
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting after the interrupt")
	}
}

// syncBuffer is a log another goroutine writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
