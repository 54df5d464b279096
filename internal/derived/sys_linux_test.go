package derived

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model replaced in place keeping its size, modification time and
// inode (`cp new old; touch -d @<old mtime> old`) is hashed again: its
// change time moved (bug: its old derived files were used).
func TestSumFollowsAReplacementThatKeepsTheModificationTime(t *testing.T) {
	root := t.TempDir()
	path := weightsFile(t, "weights A")
	before, err := os.Stat(path)
	require.NoError(t, err)
	sum, err := contentSum(root, path)
	require.NoError(t, err)
	for {
		require.NoError(t, os.WriteFile(path, []byte("weights B"), 0o644))
		require.NoError(t, os.Chtimes(path, before.ModTime(), before.ModTime()))
		after, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, before.ModTime(), after.ModTime())
		require.Equal(t, before.Size(), after.Size())
		require.True(t, os.SameFile(before, after), "the same inode")
		if changeTime(after) != changeTime(before) {
			break
		}
		time.Sleep(time.Millisecond) // within the file system's clock tick
	}
	now, err := contentSum(root, path)
	require.NoError(t, err)
	assert.NotEqual(t, sum, now)
}

func changeTime(info os.FileInfo) syscall.Timespec { return info.Sys().(*syscall.Stat_t).Ctim }
