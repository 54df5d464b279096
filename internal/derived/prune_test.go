package derived

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Folders whose model is gone are removed, at the next new derivation or
// by Prune: a source deleted, changed (deep only), or never recorded; one
// another process holds stays.
func TestPruneRemovesWhatIsOfNoModel(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	a, b := weightsFile(t, "weights A"), weightsFile(t, "weights B")
	dirA, dirB := acquire(t, "mnn", "1", a), acquire(t, "onnxruntime", "1", b)
	require.NoError(t, os.WriteFile(filepath.Join(dirA, "0_0_0_0_0.static"), make([]byte, 8192), 0o644))

	require.NoError(t, os.Remove(a))
	dirC := acquire(t, "mnn", "1", weightsFile(t, "weights C"))
	assert.NoDirExists(t, dirA, "a new derivation removes what a deleted model left")
	assert.DirExists(t, dirB)

	require.NoError(t, os.WriteFile(b, []byte("weights b"), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(b, later, later))
	pruned, err := Prune(false)
	require.NoError(t, err)
	assert.Empty(t, pruned, "a changed model is found only by a deep prune")

	held, release, err := Acquire("mnn", "1", weightsFile(t, "weights D"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(held, sourcesFile)))
	root, err := Root()
	require.NoError(t, err)
	old := filepath.Join(root, "onnxruntime", "0123456789abcdef0123456789abcdef")
	require.NoError(t, os.MkdirAll(old, 0o755))

	pruned, err = Prune(true)
	release()
	require.NoError(t, err)
	why := map[string]string{}
	for _, p := range pruned {
		why[p.Dir] = p.Why
	}
	assert.Contains(t, why[dirB], "has changed")
	assert.Contains(t, why[old], "names no model")
	assert.NotContains(t, why, held, "a folder another process holds")
	assert.NotContains(t, why, dirC, "a model still there")
	assert.DirExists(t, held)
	assert.DirExists(t, dirC)
	assert.NoDirExists(t, dirB)
}

// A folder's record names its model's files resolved, in a form any path
// reads back from: a model loaded through a directory symlink keeps its
// folder once the symlink is gone, a path with a newline is read as it
// is, and an earlier agent's record is removed as such.
func TestPruneReadsWhereTheModelIs(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	models := t.TempDir()
	real := filepath.Join(models, "x-asr")
	odd := filepath.Join(models, "a\nb")
	for _, d := range []string{real, odd} {
		require.NoError(t, os.Mkdir(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "encoder.onnx"), []byte(d), 0o644))
	}
	link := filepath.Join(t.TempDir(), "current")
	require.NoError(t, os.Symlink(real, link))
	viaLink := acquire(t, "onnxruntime", "1", filepath.Join(link, "encoder.onnx"))
	withNewline := acquire(t, "onnxruntime", "1", filepath.Join(odd, "encoder.onnx"))
	root, err := Root()
	require.NoError(t, err)
	earlier := filepath.Join(root, "mnn", "0123456789abcdef0123456789abcdef")
	require.NoError(t, os.MkdirAll(earlier, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(earlier, sourcesFile), []byte("abc "+real+"/encoder.onnx\n"), 0o644))

	elsewhere := filepath.Join(t.TempDir(), "encoder.onnx")
	require.NoError(t, os.WriteFile(elsewhere, []byte(real), 0o644))
	require.Equal(t, viaLink, acquire(t, "onnxruntime", "1", elsewhere), "the same content")
	require.NoError(t, os.Remove(elsewhere))
	require.NoError(t, os.Remove(link))
	pruned, err := Prune(true)
	require.NoError(t, err)
	require.Len(t, pruned, 1)
	assert.Equal(t, earlier, pruned[0].Dir)
	assert.Contains(t, pruned[0].Why, "made by an earlier agent")
	assert.DirExists(t, viaLink, "the model is in place; only a symlink to it and a copy of it are gone")

	require.NoError(t, os.Remove(filepath.Join(odd, "encoder.onnx")))
	pruned, err = Prune(false)
	require.NoError(t, err)
	require.Len(t, pruned, 1)
	assert.Equal(t, withNewline, pruned[0].Dir)
	assert.Equal(t, strconv.Quote(filepath.Join(odd, "encoder.onnx"))+" is gone", pruned[0].Why, "said on one line")
}

// Each setting a model is derived under (MNN's threads) gets a folder;
// a new one leaves the keepSettings used last and says what the others
// take, and a deep prune keeps only the one used last.
func TestPruneKeepsTheSettingsUsedLast(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var log syncBuffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	weights := weightsFile(t, "weights")
	other := acquire(t, "mnn", "threads 1", weightsFile(t, "other weights"))
	threads := map[int]string{}
	for _, n := range []int{1, 2, 3, 1, 4} {
		threads[n] = acquire(t, "mnn", fmt.Sprintf("threads %d", n), weights)
	}
	assert.NoDirExists(t, threads[2], "used before the last 3")
	for _, n := range []int{1, 3, 4} {
		assert.DirExists(t, threads[n])
	}
	assert.DirExists(t, other, "another model's")
	assert.Contains(t, log.String(), "this model's files for other settings stay")
	assert.Contains(t, log.String(), "voice-agent models prune")
	assert.Equal(t, 3, strings.Count(log.String(), "for other settings stay"), "said once a new folder beside others: threads 2, 3 and 4")

	pruned, err := Prune(true)
	require.NoError(t, err)
	assert.Len(t, pruned, 2)
	assert.DirExists(t, threads[4])
	assert.DirExists(t, other)
	assert.NoDirExists(t, threads[1])
	assert.NoDirExists(t, threads[3])
}

// A folder whose lock is a planted symlink is no agent's: a stale one is
// removed, the file its lock points at left as it was.
func TestPruneRemovesAFolderWithAPlantedLock(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	path := weightsFile(t, "weights")
	dir := acquire(t, "mnn", "1", path)
	require.NoError(t, os.Remove(filepath.Join(dir, ".lock")))
	require.NoError(t, os.Symlink(victim, filepath.Join(dir, ".lock")))
	require.NoError(t, os.Remove(path))
	pruned, err := Prune(false)
	require.NoError(t, err)
	assert.Len(t, pruned, 1)
	assert.NoDirExists(t, dir)
	kept, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(kept))
}
