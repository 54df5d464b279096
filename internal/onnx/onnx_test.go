package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
)

func TestFindLibrary(t *testing.T) {
	_, err := FindLibrary("/nonexistent/libonnxruntime.so")
	require.ErrorIs(t, err, ErrLibraryMissing)
	assert.Contains(t, err.Error(), "--onnxruntime flag")

	t.Setenv(EnvLibrary, "/nowhere/libonnxruntime.so.1")
	_, err = FindLibrary("")
	require.ErrorIs(t, err, ErrLibraryMissing)
	assert.Contains(t, err.Error(), "$"+EnvLibrary)

	lib := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	require.NoError(t, os.WriteFile(lib, nil, 0o644))
	t.Setenv(EnvLibrary, lib)
	got, err := FindLibrary("")
	require.NoError(t, err)
	assert.Equal(t, lib, got)
}

func TestExplainInit(t *testing.T) {
	err := explainInit("/x/libonnxruntime.so", errFake("Platform-specific initialization failed: Error setting ORT API base: 2"))
	assert.Contains(t, err.Error(), "too old")
	assert.Contains(t, err.Error(), "API version 24")
	err = explainInit("/x/lib.so", errFake(`Platform-specific initialization failed: Error loading ONNX shared library "/x/lib.so": invalid ELF header`))
	assert.Contains(t, err.Error(), "not a usable ONNX Runtime library")
}

type errFake string

func (e errFake) Error() string { return string(e) }

// A library pulled into the model cache is found with no flag or variable,
// ahead of a project-local copy.
func TestFindLibraryInTheModelCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VOICE_MODELS", cache)
	t.Setenv(EnvLibrary, "")
	pulled := filepath.Join(cache, RuntimeModel(), "libonnxruntime.so.1")
	require.NoError(t, os.MkdirAll(filepath.Dir(pulled), 0o755))
	require.NoError(t, os.WriteFile(pulled, nil, 0o644))
	got, err := FindLibrary("")
	require.NoError(t, err)
	assert.Equal(t, pulled, got)
}

// The manifest has this platform's library under RuntimeModel, with the
// checksum of the copy scripts/setup installs.
func TestRuntimeModelIsInTheManifest(t *testing.T) {
	m, err := assets.LoadManifest()
	require.NoError(t, err)
	mod, ok := m.Model(RuntimeModel())
	require.True(t, ok, RuntimeModel())
	assert.True(t, mod.ForThisPlatform())
	require.Len(t, mod.Files, 1)
	assert.Equal(t, "libonnxruntime.so.1", mod.Files[0].Path)
	local, ok := assets.Local(LocalLibrary())
	if !ok {
		t.Skip("no library installed by scripts/setup to compare with")
	}
	data, err := os.ReadFile(local)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, mod.Files[0].SHA256, hex.EncodeToString(sum[:]))
	assert.Equal(t, mod.Files[0].Size, int64(len(data)))
}
