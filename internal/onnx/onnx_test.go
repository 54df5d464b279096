package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
