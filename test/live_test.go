package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
)

// TestLiveRunOnPulseAudio runs the agent live against a real audio server:
// the demo conversation is played into a null sink whose monitor is the
// agent's microphone, and the agent answers into another sink. It needs
// the server scripts/pulse-test-server.sh starts, and skips without it.
func TestLiveRunOnPulseAudio(t *testing.T) {
	needPulse(t)
	agent, events, stderr := startLive(t)
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
			require.FailNow(t, "not all turns committed in 30 s", "only %d turns committed in 30 s; stderr:\n%s", len(commits), stderr.String())
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
			require.FailNow(t, "event did not arrive", "no %s event within %v", typ, within)
		}
	}
}

// TestLiveEchoCancellation closes the loop through a real audio server:
// the agent listens to the very sink it plays into, so its reply comes
// back at full level. With WebRTC echo cancellation (a build with -tags
// webrtcapm) the reply plays to its end; without it, the agent pauses for
// its own voice.
func TestLiveEchoCancellation(t *testing.T) {
	if err := exec.Command("pactl", "info").Run(); err != nil {
		t.Skip("no PulseAudio server answers (run scripts/pulse-test-server.sh)")
	}
	if err := exec.Command("pkg-config", "--exists", "webrtc-audio-processing").Run(); err != nil {
		t.Skip("WebRTC audio processing not installed (scripts/setup installs it)")
	}
	withAPM := filepath.Join(t.TempDir(), "voice-agent")
	build := exec.Command("go", "build", "-tags", "webrtcapm", "-o", withAPM, "../cmd/voice-agent")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	question := filepath.Join(t.TempDir(), "q.wav")
	pcm, err := audio.ReadWAVMono16k(context.Background(), "testdata/demo.wav")
	require.NoError(t, err)
	require.NoError(t, audio.WriteWAV(question, audio.Mono16k, pcm[:3*audio.ProcessingRate], audio.PCM16))
	script := filepath.Join(t.TempDir(), "one.json")
	// The words early in the utterance, as in demo-live.json (see liveDoubles).
	require.NoError(t, os.WriteFile(script, []byte(`{"user":[{"start_ms":500,"end_ms":2295,"text":"what is the weather like today",
		"words":[{"text":"what is the weather like today","start_ms":500,"end_ms":800}]}],
		"replies":["It is sunny and warm today, with a light breeze in the afternoon, and the evening will be calm and clear."],
		"first_token_ms":120,"tokens_per_second":25}`), 0o644))

	for _, tc := range []struct {
		aec        bool
		selfPauses bool
	}{{true, false}, {false, true}} {
		args := []string{"run", "--json", "--backend", "pulseaudio", fmt.Sprintf("--aec=%v", tc.aec), "--ns=false",
			"--capture", "Monitor of va_test_sink", "--playback", "va_test_sink",
			"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", script}
		agent := exec.Command(withAPM, args...)
		agent.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		stdout, err := agent.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, agent.Start())
		events := eventStream(stdout)
		waitFor(t, events, "state", 10*time.Second)
		require.NoError(t, exec.Command("paplay", "-d", "va_test_sink", question).Run())
		// The reply either plays out or pauses for what the agent hears.
		var ended string
		deadline := time.After(30 * time.Second)
		for ended == "" {
			select {
			case e := <-events:
				if e["type"] == "playback_stop" || e["type"] == "barge_in_pending" {
					ended = e["type"].(string)
				}
			case <-deadline:
				require.FailNow(t, "the reply neither finished nor paused")
			}
		}
		require.NoError(t, agent.Process.Signal(syscall.SIGINT))
		for range events {
		}
		require.NoError(t, agent.Wait())
		if tc.selfPauses {
			assert.Equal(t, "barge_in_pending", ended, "without AEC the agent hears itself")
		} else {
			assert.Equal(t, "playback_stop", ended, "with AEC the reply plays to its end")
		}
	}
}

// eventStream decodes the agent's JSON event lines until its stdout
// closes.
func eventStream(stdout io.Reader) <-chan map[string]any {
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
	return events
}

// Without a sound server (and no sound card, as here) the agent stops
// with one error that says what to do, not dozens of lines from ALSA.
func TestRunWithoutASoundServerSaysWhatToDo(t *testing.T) {
	cmd := exec.Command(binary, append([]string{"run"}, doubles...)...)
	cmd.Env = append(os.Environ(), "PULSE_SERVER=unix:/nonexistent/pulse", "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Skip("a sound device opened without PulseAudio: this machine has a sound card")
	}
	assert.NotContains(t, string(out), "ALSA lib")
	assert.Contains(t, string(out), "sound server")
	assert.Contains(t, string(out), "voice-agent devices")
	assert.Contains(t, string(out), "run on stand-ins, not models", "the stand-ins are named as such")
	// The stand-ins, half duplex, the error and the way on: no more.
	assert.LessOrEqual(t, strings.Count(string(out), "\n"), 4, "%s", out)
}
