package filemap

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/memstat"
)

// residentOf is what the process's mappings of path hold resident.
func residentOf(t *testing.T, path string) int64 {
	t.Helper()
	areas, err := memstat.Areas()
	require.NoError(t, err)
	var rss int64
	for _, a := range areas {
		if a.Name == path {
			rss += a.RSS
		}
	}
	return rss
}

// A file read whole through its mapping leaves the process's resident
// memory when dropped, reads back the same, and only what is read again
// comes back; a private mapping holding a page written to is left as it
// is, the write kept; another file's mapping is not touched.
func TestDropResident(t *testing.T) {
	const size = 1 << 20
	dir := t.TempDir()
	write := func(name string, b byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{b}, size), 0o644))
		real, err := filepath.EvalSymlinks(path)
		require.NoError(t, err)
		return real
	}
	weights, other := write("weights.bin", 7), write("other.bin", 9)
	data, unmap, err := Map(weights)
	require.NoError(t, err)
	defer unmap()
	kept, unmapKept, err := Map(other)
	require.NoError(t, err)
	defer unmapKept()
	var sum int
	for i := range data {
		sum += int(data[i]) + int(kept[i])
	}
	require.Equal(t, 16*size, sum)
	require.Equal(t, int64(size), residentOf(t, weights))

	assert.Equal(t, int64(size), DropResident(func(p string) bool { return p == weights }))
	assert.Zero(t, residentOf(t, weights), "dropped")
	assert.Equal(t, int64(size), residentOf(t, other), "another file's mapping")
	assert.Equal(t, byte(7), data[5000], "read back from the file")
	// The kernel maps up to 64 KiB around a page read (fault_around_bytes).
	assert.LessOrEqual(t, residentOf(t, weights), int64(64<<10), "one page read again")

	f, err := os.Open(weights)
	require.NoError(t, err)
	defer f.Close()
	private, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(private)
	private[0] = 42
	DropResident(func(p string) bool { return p == weights })
	assert.Equal(t, byte(42), private[0], "the private copy of a written page")
}
