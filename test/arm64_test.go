package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// The arm64 C runtime that Debian's libc6-arm64-cross installs; qemu-user
// finds the binary's interpreter and libraries under it.
const arm64Sysroot = "/usr/aarch64-linux-gnu"

// envArm64 turns on TestArm64StageTests, which is not part of
// scripts/test: cross-compiling three test binaries and running Silero's
// tests under qemu would double what the arm64 replay test adds to CI
// (README).
const envArm64 = "VOICE_TEST_ARM64"

// needArm64 skips the test unless the cross toolchain and qemu-user that
// scripts/setup installs are here (in CI their absence is a failure).
func needArm64(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"aarch64-linux-gnu-gcc", "qemu-aarch64"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" not installed")
		}
	}
	if _, err := os.Stat(filepath.Join(arm64Sysroot, "lib", "ld-linux-aarch64.so.1")); err != nil {
		testenv.Missing(t, "arm64 C runtime not installed (libc6-arm64-cross)")
	}
}

// qemu runs an arm64 program under user-mode emulation in dir.
func qemu(t *testing.T, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), "qemu-aarch64", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "QEMU_LD_PREFIX="+arm64Sysroot, "XDG_CONFIG_HOME="+t.TempDir())
	return cmd
}

// TestArm64ReplayMatchesNative builds the agent with the documented
// command and replays the spoken demo through the real Silero VAD under
// qemu: the conversation must come out as it does on this machine.
func TestArm64ReplayMatchesNative(t *testing.T) {
	needArm64(t)
	testenv.Model(t, "silero_vad_v5.onnx")
	dist := t.TempDir()
	build := exec.CommandContext(t.Context(), "../scripts/build-arm64", "-o", dist)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	args := []string{"replay", "testdata/demo.wav", "--json", "--vad", "silero",
		"--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"}
	native, stderr, err := agent(t, args...)
	require.NoError(t, err, stderr)
	// The arm64 agent finds ONNX Runtime and Silero in the third_party/
	// the build put beside it, as it would on the device.
	emulated := qemu(t, ".", append([]string{filepath.Join(dist, "voice-agent")}, args...)...)
	var errb strings.Builder
	emulated.Stderr = &errb
	arm, err := emulated.Output()
	require.NoError(t, err, errb.String())

	want, got := replayEvents(t, native), replayEvents(t, string(arm))
	assert.Equal(t, 2, count(want, "turn_commit"), "the demo has two turns")
	assert.Equal(t, 1, count(want, "barge_in"), "the second turn interrupts the first reply")
	require.Len(t, got, len(want))
	for i, w := range want {
		// Same event, text, state and turn; times may move by a VAD
		// window (32 ms) if the two CPUs round a probability near the
		// threshold differently.
		g := got[i]
		assert.InDelta(t, w.AtMS, g.AtMS, 32, "event %d (%s)", i, w.Type)
		w.AtMS, g.AtMS = 0, 0
		assert.Equal(t, w, g, "event %d", i)
	}
}

type replayEvent struct {
	Type  string  `json:"type"`
	AtMS  float64 `json:"at_ms"`
	Text  string  `json:"text"`
	State string  `json:"state"`
	Turn  int     `json:"turn"`
}

func replayEvents(t *testing.T, jsonl string) []replayEvent {
	t.Helper()
	var events []replayEvent
	sc := bufio.NewScanner(strings.NewReader(jsonl))
	for sc.Scan() {
		var e replayEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), sc.Text())
		events = append(events, e)
	}
	return events
}

func count(events []replayEvent, typ string) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// TestArm64StageTests cross-compiles the pipeline's and the VAD's own
// tests (replay, barge-in, Silero on real audio) and runs them under
// qemu, each in its package directory as go test would.
func TestArm64StageTests(t *testing.T) {
	if os.Getenv(envArm64) == "" {
		t.Skipf("set %s=1 to cross-compile these tests and run them under qemu", envArm64)
	}
	needArm64(t)
	pkgs := []string{"pipeline", "vad", "vad/silero"}
	dir := t.TempDir()
	args := []string{"test", "-c", "-o", dir + "/"}
	for _, p := range pkgs {
		args = append(args, "./"+p)
	}
	build := exec.CommandContext(t.Context(), "go", args...)
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH=arm64", "CC=aarch64-linux-gnu-gcc", "CXX=aarch64-linux-gnu-g++")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, p := range pkgs {
		t.Run(p, func(t *testing.T) {
			run := qemu(t, filepath.Join("..", p), filepath.Join(dir, filepath.Base(p)+".test"), "-test.count=1")
			out, err := run.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.Contains(t, string(out), "PASS")
		})
	}
}
