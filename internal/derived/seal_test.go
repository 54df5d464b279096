package derived

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sealed file is trusted only as it was sealed: zeroed in place at its
// size, cut short, deleted or swapped for a symlink, it is named.
func TestVerifyNamesADamagedFile(t *testing.T) {
	weights := make([]byte, 3*sampleStride+100)
	for i := range weights {
		weights[i] = byte(i*7 + 1)
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"intact", func(*testing.T, string) {}, ""},
		{"zeroed at its size", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, make([]byte, len(weights)), 0o644))
		}, "weights.bin: its content changed"},
		{"one MiB zeroed", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt(make([]byte, sampleStride), sampleStride)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, "weights.bin: its content changed"},
		{"truncated", func(t *testing.T, path string) {
			require.NoError(t, os.Truncate(path, 100))
		}, "weights.bin: 100 bytes, sealed at"},
		{"deleted", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}, "weights.bin: lstat"},
		{"a symlink now", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "weights.bin")
			require.NoError(t, os.WriteFile(other, weights, 0o644))
			require.NoError(t, os.Remove(path))
			require.NoError(t, os.Symlink(other, path))
		}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "model.onnx"), []byte("graph"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "weights.bin"), weights, 0o644))
			require.NoError(t, Seal(dir, "model.onnx", "weights.bin"))
			tc.damage(t, filepath.Join(dir, "weights.bin"))
			err := Verify(dir)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.ErrorIs(t, Verify(t.TempDir()), ErrUnsealed)
}
