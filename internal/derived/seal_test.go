package derived

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oldStride and oldSample are where the seal of an earlier agent looked:
// 4 KiB of every MiB. Damage around them is what it let through.
const (
	oldStride = 1 << 20
	oldSample = 4 << 10
)

// sealedFolder is a folder of two derived files, sealed: a graph and
// weights of 3 MiB and a bit, none of it zeros.
func sealedFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	weights := make([]byte, 3*oldStride+100)
	for i := range weights {
		weights[i] = byte(i*7 + 1)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.onnx"), []byte("graph"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "weights.bin"), weights, 0o644))
	require.NoError(t, Seal(dir, "model.onnx", "weights.bin"))
	return dir
}

func writeAt(t *testing.T, path string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(data, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func noise(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(n)}).Read(b)
	return b
}

// A sealed file is trusted only whole and as it was sealed, and the seal
// only whole and as written: every damage the earlier seal let through
// (a MiB zeroed but for the page it sampled, noise after each sample, an
// emptied seal) is named, as are a file cut short, deleted, swapped for a
// symlink or a FIFO, and a set of files other than the sealed one.
func TestVerifyNamesADamagedFile(t *testing.T) {
	weights := func(dir string) string { return filepath.Join(dir, "weights.bin") }
	seal := func(dir string) string { return filepath.Join(dir, SealFile) }
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		names  []string // the files mapped; model.onnx and weights.bin if nil
		want   string
	}{
		{"intact", func(*testing.T, string) {}, nil, ""},
		{"zeroed at its size", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(weights(dir), make([]byte, 3*oldStride+100), 0o644))
		}, nil, "weights.bin: its content changed"},
		{"a MiB zeroed but for the page the old seal sampled", func(t *testing.T, dir string) {
			writeAt(t, weights(dir), oldStride+oldSample, make([]byte, oldStride-oldSample))
		}, nil, "weights.bin: its content changed"},
		{"64 KiB of noise after each old sample", func(t *testing.T, dir string) {
			for off := int64(0); off < 3*oldStride; off += oldStride {
				writeAt(t, weights(dir), off+oldSample, noise(64<<10))
			}
		}, nil, "weights.bin: its content changed"},
		{"one byte changed", func(t *testing.T, dir string) {
			writeAt(t, weights(dir), 2*oldStride+12345, []byte{0})
		}, nil, "weights.bin: its content changed"},
		{"truncated", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(weights(dir), 100))
		}, nil, "weights.bin: 100 bytes, sealed at"},
		{"deleted", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(weights(dir)))
		}, nil, "weights.bin: open"},
		{"a symlink now", func(t *testing.T, dir string) {
			other := filepath.Join(t.TempDir(), "weights.bin")
			require.NoError(t, os.Rename(weights(dir), other))
			require.NoError(t, os.Symlink(other, weights(dir)))
		}, nil, "weights.bin: a symlink"},
		{"a FIFO now", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(weights(dir)))
			require.NoError(t, syscall.Mkfifo(weights(dir), 0o644))
		}, nil, "weights.bin: not a regular file"},
		{"a file mapped that the seal does not name", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.bin"), nil, 0o644))
		}, []string{"model.onnx", "weights.bin", "extra.bin"}, "extra.bin: not sealed"},
		{"a file sealed that is not mapped", func(*testing.T, string) {},
			[]string{"model.onnx"}, "weights.bin: sealed, but not one of the files mapped"},
		{"the seal emptied", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(seal(dir), 0))
		}, nil, "the seal is damaged (empty)"},
		{"the seal cut short by its last line", func(t *testing.T, dir string) {
			data, err := os.ReadFile(seal(dir))
			require.NoError(t, err)
			lines := strings.SplitAfter(string(data), "\n")
			require.NoError(t, os.WriteFile(seal(dir), []byte(strings.Join(lines[:len(lines)-2], "")), 0o644))
		}, nil, "the seal is damaged (cut short)"},
		{"the seal cut short by a byte", func(t *testing.T, dir string) {
			info, err := os.Stat(seal(dir))
			require.NoError(t, err)
			require.NoError(t, os.Truncate(seal(dir), info.Size()-1))
		}, nil, "the seal is damaged (cut short)"},
		{"the seal cut short to its first line", func(t *testing.T, dir string) {
			require.NoError(t, os.Truncate(seal(dir), int64(len(sealHeader)+1)))
		}, nil, "the seal is damaged (cut short)"},
		{"the seal edited", func(t *testing.T, dir string) {
			data, err := os.ReadFile(seal(dir))
			require.NoError(t, err)
			edited := strings.Replace(string(data), `"model.onnx" 5 `, `"model.onnx" 6 `, 1)
			require.NotEqual(t, string(data), edited)
			require.NoError(t, os.WriteFile(seal(dir), []byte(edited), 0o644))
		}, nil, "its checksum does not match"},
		{"an earlier agent's seal", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(seal(dir), []byte("model.onnx 5 abc\n"), 0o644))
		}, nil, "not a seal this agent writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sealedFolder(t)
			tc.damage(t, dir)
			names := tc.names
			if names == nil {
				names = []string{"model.onnx", "weights.bin"}
			}
			err := Verify(dir, names...)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.ErrorIs(t, Verify(t.TempDir(), "model.onnx"), ErrUnsealed)
}

// MNN's pool is a sparse file: what its holes read as (zeros) is sealed
// without reading them, and zeroing what it holds after its first page
// is named. Its holes written as zeros are the same content.
func TestVerifySparseFile(t *testing.T) {
	const size = 64 << 20
	dir := t.TempDir()
	pool := filepath.Join(dir, "0_0_0_0_0.static")
	f, err := os.Create(pool)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
	writeAt(t, pool, 0, noise(3*oldStride+5))
	writeAt(t, pool, 40<<20, noise(100))
	require.NoError(t, Seal(dir, filepath.Base(pool)))
	require.NoError(t, Verify(dir, filepath.Base(pool)))

	t.Run("holes written as zeros", func(t *testing.T) {
		data, err := os.ReadFile(pool)
		require.NoError(t, err)
		require.NoError(t, os.Remove(pool))
		require.NoError(t, os.WriteFile(pool, data, 0o644))
		assert.NoError(t, Verify(dir, filepath.Base(pool)))
	})
	t.Run("zeroed after its first page", func(t *testing.T) {
		require.NoError(t, os.Truncate(pool, 4096))
		require.NoError(t, os.Truncate(pool, size))
		err := Verify(dir, filepath.Base(pool))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "its content changed")
	})
}

// Where the file system has holes, a chunk that is all hole is known as
// such (and not read).
func TestDataChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Truncate(8*chunkBytes))
	_, err = f.WriteAt([]byte{1}, 3*chunkBytes+5)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{1}, 6*chunkBytes-1)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	data := dataChunks(f, 8*chunkBytes, 8)
	if data == nil || allTrue(data) {
		t.Skip("this file system reports no holes")
	}
	assert.Equal(t, []bool{false, false, false, true, false, true, false, false}, data)
}

func allTrue(b []bool) bool {
	for _, v := range b {
		if !v {
			return false
		}
	}
	return true
}

// BenchmarkVerify times a load's check of a GiB of sealed copies (set
// VOICE_DERIVED_BENCH to a folder on the disk the cache is on; the files
// are made there once and left).
func BenchmarkVerify(b *testing.B) {
	dir := os.Getenv("VOICE_DERIVED_BENCH")
	if dir == "" {
		b.Skip("VOICE_DERIVED_BENCH is not set")
	}
	for _, tc := range []struct {
		name       string
		size, data int64 // the data written from the start; holes after
	}{
		{"copy-1GiB", 1 << 30, 1 << 30},
		{"pool-1GiB-sparse-184MiB", 1 << 30, 184 << 20},
	} {
		path := filepath.Join(dir, tc.name)
		if _, err := os.Stat(path); err != nil {
			f, err := os.Create(path)
			require.NoError(b, err)
			require.NoError(b, f.Truncate(tc.size))
			for off := int64(0); off < tc.data; off += 1 << 20 {
				_, err := f.WriteAt(noise(1<<20), off)
				require.NoError(b, err)
			}
			require.NoError(b, f.Close())
		}
		require.NoError(b, Seal(dir, tc.name))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(tc.size)
			for b.Loop() {
				require.NoError(b, Verify(dir, tc.name))
			}
		})
	}
}
