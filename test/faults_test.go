package test

// Faults seen from outside: a signal mid-run, a FIFO for input, a full
// disk for output. Each command must stop promptly, say it stopped, and
// leave nothing it wrote looking complete.

import (
	"bufio"
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

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/standin"
)

// interrupt starts the agent, sends sig once ready(), and waits for it to
// exit; it fails the test if the agent is still running 5 s later.
func interrupt(t *testing.T, sig syscall.Signal, ready func() bool, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var errb strings.Builder
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.Eventually(t, ready, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(sig))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after %v; stderr:\n%s", sig, errb.String())
	}
	return errb.String(), cmd.ProcessState.ExitCode()
}

// started is true once the agent has been running for d.
func started(d time.Duration) func() bool {
	at := time.Now().Add(d)
	return func() bool { return time.Now().After(at) }
}

// An interrupted run says so and exits 130 (bug: "replay done turns=0",
// a "0 turns" report, exit 0), and a replay's --out is a whole WAV of what
// was played up to then.
func TestInterruptedRunsSaySo(t *testing.T) {
	long := filepath.Join(t.TempDir(), "long.wav")
	// Ten minutes of talk: longer than bench pipeline takes to get past
	// a second.
	var talk []standin.Utterance
	for at := time.Second; at < 10*time.Minute; at += 5 * time.Second {
		talk = append(talk, standin.Utterance{Start: at, End: at + 2*time.Second})
	}
	require.NoError(t, audio.WriteWAV(long, audio.Mono16k, standin.Voice(10*time.Minute, talk...), audio.PCM16))
	fifo := filepath.Join(t.TempDir(), "f.wav")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	out, hungUp := filepath.Join(t.TempDir(), "out.wav"), filepath.Join(t.TempDir(), "hungup.wav")
	tests := []struct {
		name string
		sig  syscall.Signal
		args []string
		says string
	}{
		{"replay in real time", syscall.SIGINT, append([]string{"replay", long, "--pace", "1", "--out", out}, doubles...), "replay: stopped "},
		// A closed terminal: the same stop, what was played kept.
		{"replay in real time, hung up", syscall.SIGHUP, append([]string{"replay", long, "--pace", "1", "--out", hungUp}, doubles...), "replay: stopped "},
		// Silero, not the energy VAD, so the bench takes seconds.
		{"bench pipeline", syscall.SIGINT, []string{"bench", "pipeline", long, "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"}, "bench pipeline: stopped after "},
		{"vad on a FIFO nobody writes", syscall.SIGINT, []string{"vad", fifo}, "read " + fifo + ": context canceled"},
		{"replay of a FIFO nobody writes", syscall.SIGINT, append([]string{"replay", fifo}, doubles...), "read " + fifo + ": context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := interrupt(t, tc.sig, started(500*time.Millisecond), tc.args...)
			assert.Equal(t, 128+int(tc.sig), code, stderr)
			assert.Contains(t, stderr, tc.says)
			assert.Contains(t, stderr, "voice-agent: interrupted ("+tc.sig.String()+"): the results above are incomplete")
			assert.NotContains(t, stderr, "replay done")
		})
	}
	for _, path := range []string{out, hungUp} {
		_, rec, err := audio.ReadWAV(path)
		require.NoError(t, err, "the interrupted replay's --out is a whole WAV")
		assert.Positive(t, len(rec), path)
		assert.Less(t, len(rec), 16000*60, "only what was played before the signal")
	}
}

// A reader of the events that goes away (`replay --json | head -1`) ends
// the run as a signal would, with what was played and the events until
// then kept (bug: killed by SIGPIPE, exit 141 and nothing said, --out
// never written, --events holding 1 of 67 events).
func TestClosedStdoutEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	out, events := filepath.Join(dir, "out.wav"), filepath.Join(dir, "events.jsonl")
	cmd := exec.Command(binary, append([]string{"replay", "testdata/demo.wav", "--json", "--out", out, "--events", events}, doubles...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb strings.Builder
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	first, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, first, `"type"`)
	require.NoError(t, stdout.Close())
	_ = cmd.Wait()
	assert.Equal(t, 128+int(syscall.SIGPIPE), cmd.ProcessState.ExitCode(), errb.String())
	assert.Contains(t, errb.String(), "voice-agent: interrupted (broken pipe): the results above are incomplete")
	_, rec, err := audio.ReadWAV(out)
	require.NoError(t, err, "--out is a whole WAV; stderr:\n%s", errb.String())
	assert.Positive(t, len(rec))
	kept, err := os.ReadFile(events)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(kept)), "\n")
	assert.GreaterOrEqual(t, len(lines), 2, "the events until the reader left")
	for _, l := range lines {
		assert.True(t, json.Valid([]byte(l)), "a whole event: %q", l)
	}
}

// Events that cannot be written stop the run with an error (bug: `replay
// --json > /dev/full` exited 0 with nothing said).
func TestLostEventsAreAnError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		says  string
	}{
		{"stdout", []string{"--json"}, "events: writing to stdout: "},
		{"--events", []string{"--events", "/dev/full"}, "events: writing to /dev/full: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			defer full.Close()
			args := append(append([]string{"replay", demoWAV(t)}, doubles...), tc.extra...)
			cmd := exec.Command(binary, args...)
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
			var errb strings.Builder
			cmd.Stdout, cmd.Stderr = full, &errb
			err = cmd.Run()
			require.Error(t, err, errb.String())
			assert.Equal(t, 1, cmd.ProcessState.ExitCode())
			assert.Contains(t, errb.String(), tc.says)
			assert.Contains(t, errb.String(), "no space left on device; the events from 0s on are lost")
		})
	}
}
