package assets

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model whose download the lock held proved bad when loaded: its
// entries go, and only its own (not those of a model whose name it
// begins), so that the next pull fetches it again rather than refuse it.
func TestForgetLockedDropsOnlyTheModelsEntries(t *testing.T) {
	dir := t.TempDir()
	p := &Puller{Dir: dir}
	e := lockEntry{SHA256: strings.Repeat("ab", 32), Size: 3}
	for _, key := range []string{"m/config.json", "m/sub/llm.mnn.weight", "m-2/llm.mnn.weight", "other/m/a"} {
		require.NoError(t, p.record(context.Background(), key, e))
	}
	require.NoError(t, ForgetLocked(context.Background(), dir, Model{Name: "m"}))
	entries, err := p.readLock()
	require.NoError(t, err)
	assert.Equal(t, map[string]lockEntry{"m-2/llm.mnn.weight": e, "other/m/a": e}, entries)

	before, err := os.Stat(filepath.Join(dir, LockFileName))
	require.NoError(t, err)
	require.NoError(t, ForgetLocked(context.Background(), dir, Model{Name: "m"}), "nothing left to drop")
	after, err := os.Stat(filepath.Join(dir, LockFileName))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the lock file is not rewritten for nothing")

	require.NoError(t, ForgetLocked(context.Background(), t.TempDir(), Model{Name: "m"}), "no lock file")
}
