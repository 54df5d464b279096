package test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/llm"
)

// The arm64 C runtime from Debian's multiarch libc6:arm64, which comes
// with the arm64 echo-cancellation library. qemu-user runs the binary's
// interpreter from / (not from the cross toolchain's sysroot: its loader
// and the multiarch libc differ in version and hang together).
const arm64Loader = "/lib/ld-linux-aarch64.so.1"

// envArm64 turns on TestArm64StageTests, which is not part of
// scripts/test: cross-compiling three test binaries and running Silero's
// tests under qemu would double what the arm64 replay test adds to CI
// (docs/arm64.md).
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
	if _, err := os.Stat(arm64Loader); err != nil {
		testenv.Missing(t, "arm64 C runtime not installed (libc6:arm64)")
	}
}

// qemu runs an arm64 program under user-mode emulation in dir, through
// scripts/qemu-arm64 as docs/arm64.md does: ONNX Runtime's arm64 library
// parses /proc/cpuinfo as it loads (its bundled pytorch/cpuinfo), qemu-user
// 7.2 (Debian 12) shows the program the host's, and on the x86-64 hosts
// tried the parser crashes inside dlopen, before anything of ours runs. The
// script shows it an arm64 cpuinfo in a mount namespace of its own, as the
// device would.
func qemu(t *testing.T, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), qemuScript(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	return cmd
}

// qemuScript is scripts/qemu-arm64's absolute path, for a command run from
// another folder.
func qemuScript(t *testing.T) string {
	script, err := filepath.Abs("../scripts/qemu-arm64")
	require.NoError(t, err)
	return script
}

// buildArm64 lays out the device directory with the documented command and
// returns it.
func buildArm64(t *testing.T) string {
	t.Helper()
	dist := t.TempDir()
	build := exec.CommandContext(t.Context(), "../scripts/build-arm64", "-o", dist)
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, lib := range []string{"libMNN.so", "libwebrtc_audio_processing.so.1"} {
		assert.FileExists(t, filepath.Join(dist, "lib", lib), "shipped beside the agent")
	}
	return dist
}

// TestArm64ReplayMatchesNative builds the device directory with the
// documented command and replays the spoken demo through the real Silero
// VAD, the real MNN engine on the tiny model and the echo canceller on a
// simulated echo path, under qemu and natively: the conversation must
// come out the same (turns, barge-in, reply lengths, the user's timing).
func TestArm64ReplayMatchesNative(t *testing.T) {
	needArm64(t)
	testenv.Model(t, "silero_vad_v5.onnx")
	native := buildFullAgent(t)
	dist := buildArm64(t)

	// The model at fp32: MNN's fp16 kernels corrupt the heap under qemu,
	// now and then alone and in most runs beside the echo canceller
	// (docs/arm64.md).
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"MNN and the echo canceller", append(mnnReplay(t, 24, map[string]any{"precision": "high"}), echoPath...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, stderr, err := run(t, native, tc.args...)
			require.NoError(t, err, stderr)
			// The arm64 agent finds its libraries and ONNX Runtime and
			// Silero in the directory the build laid out, as on the device.
			emulated := qemu(t, ".", append([]string{filepath.Join(dist, "voice-agent")}, tc.args...)...)
			var errb strings.Builder
			emulated.Stderr = &errb
			arm, err := emulated.Output()
			require.NoError(t, err, errb.String())
			assert.NotContains(t, errb.String(), "half duplex", "the arm64 build has echo cancellation")
			sameConversation(t, replayEvents(t, want), replayEvents(t, string(arm)))
		})
	}
}

// sameConversation compares a native replay with an emulated one.
func sameConversation(t *testing.T, want, got []replayEvent) {
	t.Helper()
	w, g := conversation(want), conversation(got)
	assert.Equal(t, 2, count(w, "turn_commit"), "the demo has two turns")
	assert.Equal(t, 1, count(w, "barge_in"), "the second turn interrupts the first reply")
	require.Len(t, g, len(w), "the same conversation")
	for i := range w {
		we, ge := w[i], g[i]
		// The replies differ in their words: greedy decoding of random
		// weights picks other tokens where the arm64 kernels round
		// differently. Their lengths do not.
		if we.Stats != nil && ge.Stats != nil {
			assert.Equal(t, we.Stats.GeneratedTokens, ge.Stats.GeneratedTokens, "event %d", i)
		}
		// The user's side happens at about the same time: the two echo
		// cancellers (SSE2 and NEON builds, the NEON one restarted) let
		// the onset of speech over the echo through up to a few hundred
		// ms apart.
		if userSide[we.Type] {
			assert.InDelta(t, we.AtMS, ge.AtMS, 400, "event %d (%s)", i, we.Type)
		} else {
			we.Text, ge.Text = "", ""
		}
		we.AtMS, ge.AtMS, we.Stats, ge.Stats = 0, 0, nil, nil
		assert.Equal(t, we, ge, "event %d", i)
	}
}

// userSide are the events the user's speech decides.
var userSide = map[string]bool{"speech_start": true, "speech_end": true, "final": true, "turn_commit": true}

// conversation leaves out the events whose number depends on the speed of
// the machine or on the reply's words: the pieces of a reply (handed on in
// batches of whatever was generated meanwhile), its chunks, and partial
// transcripts.
func conversation(events []replayEvent) []replayEvent {
	var out []replayEvent
	for _, e := range events {
		switch e.Type {
		case "llm_piece", "tts_chunk", "partial":
		default:
			out = append(out, e)
		}
	}
	return out
}

type replayEvent struct {
	Type  string     `json:"type"`
	AtMS  float64    `json:"at_ms"`
	Text  string     `json:"text"`
	State string     `json:"state"`
	Turn  int        `json:"turn"`
	Stats *llm.Stats `json:"llm_stats"`
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

// TestArm64StageTests cross-compiles the pipeline's, the VAD's and the
// audio front-end's own tests (replay, barge-in, Silero on real audio,
// echo cancellation with Debian's arm64 library) and runs them under qemu,
// each in its package directory as go test would.
func TestArm64StageTests(t *testing.T) {
	if os.Getenv(envArm64) == "" {
		t.Skipf("set %s=1 to cross-compile these tests and run them under qemu", envArm64)
	}
	needArm64(t)
	pkgs := []string{"pipeline", "vad", "vad/silero", "audio/frontend"}
	dir := t.TempDir()
	args := []string{"test", "-c", "-tags", "webrtcapm", "-o", dir + "/"}
	for _, p := range pkgs {
		args = append(args, "./"+p)
	}
	build := exec.CommandContext(t.Context(), "go", args...)
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH=arm64", "CC=aarch64-linux-gnu-gcc", "CXX=aarch64-linux-gnu-g++",
		"CGO_CPPFLAGS=", "CGO_LDFLAGS=", "PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
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

// TestArm64RunsFromAnywhereForAnyUser runs the device directory as the
// glasses' service would: copied to a place of its own and run by a user
// other than its builder (nobody), here under qemu through
// scripts/qemu-arm64 as docs/arm64.md says. The agent finds libMNN and the
// echo canceller in lib/ ($ORIGIN/lib) and ONNX Runtime and Silero in
// third_party/ beside itself, and runs Silero on the demo with its derived
// weights in a cache that user may write.
// qemuHang is far past what the agent's commands take under qemu here
// (this whole package took 30 s to 3 minutes in CI).
const qemuHang = 4 * time.Minute

func TestArm64RunsFromAnywhereForAnyUser(t *testing.T) {
	needArm64(t)
	if os.Geteuid() != 0 {
		t.Skip("runs the agent as nobody, which needs root (runuser)")
	}
	if err := exec.CommandContext(t.Context(), "runuser", "-u", "nobody", "--",
		"unshare", "--user", "--map-current-user", "--keep-caps", "--mount", "--", "true").Run(); err != nil {
		t.Skipf("another user cannot make a mount namespace here (%v), so ONNX Runtime would see the host's /proc/cpuinfo under qemu", err)
	}
	dist := buildArm64(t)

	// A folder everyone may enter, with a cache only the service's user
	// writes to.
	dir := publicTempDir(t, "arm64-relocated-")
	agentDir, cache := filepath.Join(dir, "voice-agent"), filepath.Join(dir, "cache")
	out, err := exec.Command("cp", "-a", dist, agentDir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command("cp", "testdata/demo.wav", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.Mkdir(cache, 0o755))
	out, err = exec.Command("chown", "nobody", cache).CombinedOutput()
	require.NoError(t, err, "%s", out)

	script := qemuScript(t)
	asNobody := func(args ...string) string {
		t.Helper()
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(t.Context(), qemuHang)
			cmd := exec.CommandContext(ctx, "runuser", append([]string{"-u", "nobody", "--", script, filepath.Join(agentDir, "voice-agent")}, args...)...)
			cmd.Dir = "/"
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "XDG_CACHE_HOME=" + cache, "XDG_CONFIG_HOME=" + cache}
			// The whole group goes on a hang: runuser, qemu, and the child
			// it forked.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 5 * time.Second
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			hung := ctx.Err() != nil && t.Context().Err() == nil
			cancel()
			if hung && attempt == 1 {
				// qemu-user (Debian 12's 7.2) can leave a forked child
				// waiting on a lock another thread held at the fork, before
				// it execs: seen once, in the agent's child job making ONNX
				// Runtime's copy. An agent that hangs hangs again.
				t.Logf("voice-agent %v as nobody did not end in %v under qemu; once more", args, qemuHang)
				continue
			}
			require.NoError(t, err, "voice-agent %v as nobody: %s", args, stderr.String())
			assert.NotContains(t, stderr.String(), "no mount namespace", "voice-agent %v", args)
			return string(out)
		}
	}
	version := asNobody("version")
	assert.Contains(t, version, "MNN: ", "libMNN found in lib/")
	assert.Contains(t, version, "ONNX Runtime: 1.30.0", "ONNX Runtime loaded from third_party/")
	vad := asNobody("vad", filepath.Join(dir, "demo.wav"))
	assert.Len(t, strings.Fields(vad), 6, "Silero hears the demo's two questions (start, end, length each):\n%s", vad)
}
