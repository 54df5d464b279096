package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLiveRunOnPulseAudio runs the agent live against a real audio server:
// the demo conversation is played into a null sink whose monitor is the
// agent's microphone, and the agent answers into another sink. It needs
// the server scripts/pulse-test-server.sh starts, and skips without it.
func TestLiveRunOnPulseAudio(t *testing.T) {
	if err := exec.Command("pactl", "info").Run(); err != nil {
		t.Skip("no PulseAudio server answers (run scripts/pulse-test-server.sh)")
	}
	if _, err := exec.LookPath("paplay"); err != nil {
		t.Skip("paplay not installed")
	}
	args := append([]string{"run", "--json", "--backend", "pulseaudio",
		"--capture", "Monitor of va_test_sink", "--playback", "va_spare_sink"}, doubles...)
	agent := exec.Command(binary, args...)
	agent.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdout, err := agent.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedBuffer{}
	agent.Stderr = stderr
	require.NoError(t, agent.Start())
	defer agent.Process.Kill()

	events := make(chan map[string]any)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events <- e
			}
		}
	}()
	// The agent reports the listening state once its device runs.
	waitFor(t, events, "state", 10*time.Second)
	play := exec.Command("paplay", "-d", "va_test_sink", "testdata/demo.wav")
	require.NoError(t, play.Start())
	defer play.Wait()

	var commits []string
	deadline := time.After(30 * time.Second)
	for len(commits) < 2 {
		select {
		case e, ok := <-events:
			require.True(t, ok, "agent exited early: %s", stderr.String())
			if e["type"] == "turn_commit" {
				commits = append(commits, e["text"].(string))
			}
		case <-deadline:
			t.Fatalf("only %d turns committed in 30 s; stderr:\n%s", len(commits), stderr.String())
		}
	}
	assert.Equal(t, []string{"what is the weather like today", "and tomorrow"}, commits)
	waitFor(t, events, "playback_start", 10*time.Second)

	// SIGINT ends the session cleanly: the reply is cancelled, the device
	// released, and the exit status is success.
	require.NoError(t, agent.Process.Signal(syscall.SIGINT))
	for range events {
	}
	require.NoError(t, agent.Wait(), stderr.String())
	assert.Contains(t, stderr.String(), "stopped")
}

func waitFor(t *testing.T, events <-chan map[string]any, typ string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case e, ok := <-events:
			require.True(t, ok, "agent exited before %s", typ)
			if e["type"] == typ {
				return
			}
		case <-deadline:
			t.Fatalf("no %s event within %v", typ, within)
		}
	}
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
