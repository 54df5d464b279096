package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTools is a folder of stand-in commands, to be put first on PATH:
// name to shell script body.
func fakeTools(t *testing.T, tools map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range tools {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	return dir
}

// runQemuScript runs scripts/qemu-arm64 with tools first on PATH and its
// own TMPDIR, and returns what it printed, its exit status and TMPDIR.
func runQemuScript(t *testing.T, tools string, args ...string) (out string, code int, tmp string) {
	t.Helper()
	if runtime.GOARCH == "arm64" {
		t.Skip("on arm64 the script runs the program itself")
	}
	tmp = t.TempDir()
	cmd := exec.Command(qemuScript(t), args...)
	cmd.Env = append(os.Environ(), "PATH="+tools+":"+os.Getenv("PATH"), "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); !ok {
		require.NoError(t, err)
	}
	return string(b), cmd.ProcessState.ExitCode(), tmp
}

// A program qemu cannot run is named with why (bug: qemu-aarch64 exits 1
// without a word, and so did the script).
func TestQemuScriptSaysWhatIsMissing(t *testing.T) {
	tools := fakeTools(t, map[string]string{"qemu-aarch64": `echo "qemu ran $*"`})
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("hello\n"), 0o644))
	for _, tc := range []struct{ program, why string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{dir, "not a file"},
		{text, "not a program (no ELF header)"},
	} {
		out, code, tmp := runQemuScript(t, tools, tc.program, "version")
		assert.Equal(t, 1, code, out)
		assert.Equal(t, "qemu-arm64: "+tc.program+": "+tc.why+"; give the path of an arm64 program (scripts/build-arm64 builds bin/linux-arm64/voice-agent)\n", out)
		entries, err := os.ReadDir(tmp)
		require.NoError(t, err)
		assert.Empty(t, entries)
	}
}

// Where the bind mount is refused (a container's seccomp, a read-only
// /proc), the program runs on qemu as it is, the script says why, and its
// arm64 cpuinfo file is gone (bug: left behind in /tmp, and exit 1).
func TestQemuScriptCleansUpWhenTheMountIsRefused(t *testing.T) {
	tools := fakeTools(t, map[string]string{
		"qemu-aarch64": `echo "qemu ran $*"`,
		"mount":        `echo "mount: /proc/cpuinfo: permission denied." >&2; exit 32`,
	})
	program := filepath.Join(t.TempDir(), "voice-agent")
	require.NoError(t, os.WriteFile(program, []byte("\x7fELF\x02\x01\x01"), 0o755))
	out, code, tmp := runQemuScript(t, tools, program, "version")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "qemu ran "+program+" version")
	if !strings.Contains(out, "no mount namespace can be made here") {
		assert.Contains(t, out, "qemu-arm64: the bind mount on /proc/cpuinfo was refused, so the program sees this host's /proc/cpuinfo")
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the arm64 cpuinfo is removed")
}
