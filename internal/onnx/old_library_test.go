package onnx

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A library that only offers C API versions before 24, as ONNX Runtime
// 1.23 and older do: GetApi returns NULL for newer versions.
const fakeOldRuntime = `
#include <stddef.h>
typedef struct { const void *(*GetApi)(unsigned); const char *(*GetVersionString)(void); } OrtApiBase;
static const void *get_api(unsigned v) { return v <= 23 ? (const void *)1 : NULL; }
static const char *version(void) { return "1.23.0"; }
static OrtApiBase base = { get_api, version };
const OrtApiBase *OrtGetApiBase(void) { return &base; }
`

func TestTooOldLibraryIsExplained(t *testing.T) {
	if os.Getenv("ONNX_TEST_INIT_CHILD") != "" {
		return
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake library")
	}
	dir := t.TempDir()
	src, lib := filepath.Join(dir, "fake.c"), filepath.Join(dir, "libonnxruntime.so.1")
	require.NoError(t, os.WriteFile(src, []byte(fakeOldRuntime), 0o644))
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput()
	require.NoError(t, err, string(out))

	// Init holds one library per process, so it runs in a child.
	child := exec.Command(os.Args[0], "-test.run=^TestInitChild$")
	child.Env = append(os.Environ(), "ONNX_TEST_INIT_CHILD=1", EnvLibrary+"="+lib)
	got, err := child.Output()
	require.NoError(t, err)
	assert.Contains(t, string(got), "is too old")
	assert.Contains(t, string(got), "API version 24")
	assert.Contains(t, string(got), lib)
}

func TestNotALibraryIsExplained(t *testing.T) {
	if os.Getenv("ONNX_TEST_INIT_CHILD") != "" {
		return
	}
	lib := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	require.NoError(t, os.WriteFile(lib, []byte("not an ELF file"), 0o644))
	child := exec.Command(os.Args[0], "-test.run=^TestInitChild$")
	child.Env = append(os.Environ(), "ONNX_TEST_INIT_CHILD=1", EnvLibrary+"="+lib)
	got, err := child.Output()
	require.NoError(t, err)
	assert.Contains(t, string(got), "not a usable ONNX Runtime library")
}

// glibc's dlopen says "No such file or directory" of a library built for
// another architecture: the message names both.
func TestOtherArchitectureLibraryIsExplained(t *testing.T) {
	if os.Getenv("ONNX_TEST_INIT_CHILD") != "" {
		return
	}
	other := map[string]string{"amd64": "linux-arm64", "arm64": "linux-x64"}[runtime.GOARCH]
	lib := filepath.Join("..", "..", "third_party", "onnxruntime", other, libraryFile)
	if _, err := os.Stat(lib); err != nil {
		t.Skipf("no library for another architecture: %v", err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestInitChild$")
	child.Env = append(os.Environ(), "ONNX_TEST_INIT_CHILD=1", EnvLibrary+"="+lib)
	got, err := child.Output()
	require.NoError(t, err)
	for _, want := range []string{lib, "is a library for", machineName(nativeMachine[runtime.GOARCH]), "the " + platform() + " library"} {
		assert.Contains(t, string(got), want)
	}
	assert.Contains(t, string(got), map[string]string{"amd64": "arm64 (aarch64)", "arm64": "x86-64"}[runtime.GOARCH])
}

// TestInitChild only does something in a child process started by a test.
func TestInitChild(t *testing.T) {
	if os.Getenv("ONNX_TEST_INIT_CHILD") == "" {
		t.Skip("runs as a child process of other tests")
	}
	os.Stdout.WriteString(Init(os.Getenv(EnvLibrary)).Error())
}
