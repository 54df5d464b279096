package derived

import (
	"bytes"
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

func model(t *testing.T, content string) string {
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
	a := model(t, "weights A")
	dir := acquire(t, "mnn", "3.6.1", a)
	assert.DirExists(t, dir)
	root, err := Root()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "mnn"), filepath.Dir(dir))

	assert.Equal(t, dir, acquire(t, "mnn", "3.6.1", a), "the same model and engine")
	assert.Equal(t, dir, acquire(t, "mnn", "3.6.1", model(t, "weights A")), "the same content elsewhere")
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.7.0", a), "another engine version")
	assert.NotEqual(t, dir, acquire(t, "ort", "3.6.1", a), "another engine")
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.6.1", model(t, "weights B")), "other weights")

	// Rewritten in place with the same size: the kept sum is not trusted,
	// since the modification time changed.
	require.NoError(t, os.WriteFile(a, []byte("weights C"), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(a, later, later))
	assert.NotEqual(t, dir, acquire(t, "mnn", "3.6.1", a), "a model changed in place")
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
	a := model(t, "weights")
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
	_, releaseA, err := Acquire("mnn", "1", model(t, "weights A"))
	require.NoError(t, err)
	_, releaseB, err := Acquire("onnxruntime", "1", model(t, "weights B"))
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
	a := model(t, "weights")
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
