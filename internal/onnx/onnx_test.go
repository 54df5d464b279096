package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/assets"
)

// requireRuntime skips without the library scripts/setup installs, except
// in CI, where its absence is a set-up failure.
func requireRuntime(t *testing.T) {
	t.Helper()
	if _, err := FindLibrary(""); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

func silero(t *testing.T) string {
	p, ok := assets.Local("models/silero_vad_v5.onnx")
	if !ok {
		if os.Getenv("CI") != "" {
			t.Fatal("silero model missing: scripts/setup installs it")
		}
		t.Skip("silero model missing: run scripts/setup")
	}
	return p
}

var sileroIn = []Tensor{{"input", Float, []int64{-1, -1}}, {"state", Float, []int64{2, -1, 128}}, {"sr", Int64, nil}}
var sileroOut = []Tensor{{"output", Float, []int64{-1, 1}}, {"stateN", Float, nil}}

func TestOpenChecksTheModel(t *testing.T) {
	requireRuntime(t)
	model := silero(t)
	s, err := Open(model, sileroIn, sileroOut, Options{}, "run scripts/setup")
	require.NoError(t, err)
	require.NoError(t, s.Destroy())
	assert.Contains(t, Version(), "1.24")

	corrupt := filepath.Join(t.TempDir(), "corrupt.onnx")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a model"), 0o644))

	for _, tc := range []struct {
		name    string
		path    string
		inputs  []Tensor
		wantErr []string
	}{
		{"missing file", "/nonexistent/vad.onnx", sileroIn, []string{"/nonexistent/vad.onnx", "run scripts/setup"}},
		{"corrupt file", corrupt, sileroIn, []string{"corrupt.onnx", "corrupt or not a model"}},
		{"wrong name", model, []Tensor{{"audio", Float, nil}}, []string{`no input "audio"`, "the model declares"}},
		{"wrong type", model, []Tensor{{"sr", Float, nil}}, []string{`input "sr" is`, "expected"}},
		{"wrong rank", model, []Tensor{{"input", Float, []int64{1, 80, 800}}}, []string{`input "input" has shape`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(tc.path, tc.inputs, sileroOut, Options{}, "run scripts/setup")
			require.Error(t, err)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

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
