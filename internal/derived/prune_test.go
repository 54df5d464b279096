package derived

import (
	"os"
	"path/filepath"
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
	a, b := model(t, "weights A"), model(t, "weights B")
	dirA, dirB := acquire(t, "mnn", "1", a), acquire(t, "onnxruntime", "1", b)
	require.NoError(t, os.WriteFile(filepath.Join(dirA, "0_0_0_0_0.static"), make([]byte, 8192), 0o644))

	require.NoError(t, os.Remove(a))
	dirC := acquire(t, "mnn", "1", model(t, "weights C"))
	assert.NoDirExists(t, dirA, "a new derivation removes what a deleted model left")
	assert.DirExists(t, dirB)

	require.NoError(t, os.WriteFile(b, []byte("weights b"), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(b, later, later))
	pruned, err := Prune(false)
	require.NoError(t, err)
	assert.Empty(t, pruned, "a changed model is found only by a deep prune")

	held, release, err := Acquire("mnn", "1", model(t, "weights D"))
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
