//go:build mnn

package mnn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MNN makes its pool in files of mmap_size MiB at least: the settings',
// else the config file's, else its 1024. A file-size limit is held to it.
func TestMmapBytes(t *testing.T) {
	dir := t.TempDir()
	plain, sized := filepath.Join(dir, "config.json"), filepath.Join(dir, "sized.json")
	require.NoError(t, os.WriteFile(plain, []byte(`{"llm_model": "llm.mnn"}`), 0o644))
	require.NoError(t, os.WriteFile(sized, []byte(`{"mmap_size": 256}`), 0o644))
	for _, tc := range []struct {
		name     string
		config   string
		settings map[string]any
		mib      uint64
	}{
		{"MNN's", plain, nil, 1024},
		{"no config file", filepath.Join(dir, "missing.json"), nil, 1024},
		{"the config file's", sized, nil, 256},
		{"the settings', from JSON", sized, map[string]any{"mmap_size": 64.0}, 64},
		{"the settings', from Go", plain, map[string]any{"mmap_size": 32}, 32},
		{"not a size", plain, map[string]any{"mmap_size": "big"}, 1024},
		{"negative", plain, map[string]any{"mmap_size": -1}, 1024},
	} {
		assert.Equal(t, tc.mib<<20, mmapBytes(tc.config, tc.settings), tc.name)
	}
}
