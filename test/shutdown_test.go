package test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// TestSignalMidReplyShutsDownCleanly stops the live agent with SIGTERM (what
// systemd sends) or SIGINT while it is speaking: the reply is cancelled,
// the device closed, and the process exits with success within a second.
// The agent runs with VOICE_AGENT_LEAKCHECK, so a goroutine of any stage or
// of the device still running after the command returned fails its exit
// status.
func TestSignalMidReplyShutsDownCleanly(t *testing.T) {
	needPulse(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			agent, events, stderr := startLive(t, "VOICE_AGENT_LEAKCHECK=1")
			pid := agent.Process.Pid
			waitFor(t, events, "state", 10*time.Second)
			play := exec.Command("paplay", "-d", "va_test_sink", "testdata/demo.wav")
			require.NoError(t, play.Start())
			// The rest of the recording is not needed once the agent is gone.
			defer func() { play.Process.Kill(); play.Wait() }()
			// The first reply plays for about four seconds from here.
			waitFor(t, events, "playback_start", 20*time.Second)
			require.NotEmpty(t, streamsOf(t, pid), "the agent's streams are on the server while it runs")

			require.NoError(t, agent.Process.Signal(sig))
			sent := time.Now()
			var after []string
			for e := range events {
				after = append(after, e["type"].(string))
			}
			err := agent.Wait()
			// A functional bound, not a speed figure: a service manager
			// waits for the agent before it reopens the device.
			elapsed := time.Since(sent)
			t.Logf("exited %v after the signal", elapsed)
			require.NoError(t, err, "exit status; stderr:\n%s", stderr.String())
			assert.Less(t, elapsed, time.Second, "exit after the signal")
			assert.NotContains(t, after, "playback_stop", "the reply was cut, not played out")
			assert.Contains(t, stderr.String(), "stopped")
			assert.Empty(t, streamsOf(t, pid), "the server holds no stream of the agent after it exits")
		})
	}
}

// needPulse skips t unless the server scripts/pulse-test-server.sh starts
// answers and paplay can play into it.
func needPulse(t testing.TB) {
	t.Helper()
	if err := exec.Command("pactl", "info").Run(); err != nil {
		t.Skip("no PulseAudio server answers (run scripts/pulse-test-server.sh)")
	}
	if _, err := exec.LookPath("paplay"); err != nil {
		t.Skip("paplay not installed")
	}
}

// liveDoubles are the doubles for live sessions. Live, the scripted times
// drift from the recording's: the agent's stream starts some time before
// paplay plays, and a starved machine (CI, two cores) loses capture at the
// audio server, which shortens what is heard. demo-live.json puts each
// utterance's words in its first 300 ms, which every such drift still
// leaves inside the turn the recognizer hears.
var liveDoubles = []string{"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo-live.json"}

// startLive runs the agent live with the stand-ins, listening to the
// monitor of va_test_sink and playing into va_spare_sink: there is no echo
// to cancel, and barge-in stays possible. env is added to its
// environment; the agent is killed when t ends if it still runs.
func startLive(t *testing.T, env ...string) (*exec.Cmd, <-chan map[string]any, *testenv.LockedBuffer) {
	t.Helper()
	args := append([]string{"run", "--json", "--backend", "pulseaudio", "--aec=false", "--ns=false",
		"--capture", "Monitor of va_test_sink", "--playback", "va_spare_sink"}, liveDoubles...)
	agent := exec.Command(binary, args...)
	agent.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	stdout, err := agent.StdoutPipe()
	require.NoError(t, err)
	stderr := &testenv.LockedBuffer{}
	agent.Stderr = stderr
	require.NoError(t, agent.Start())
	t.Cleanup(func() { agent.Process.Kill() })
	return agent, eventStream(stdout), stderr
}

// streamsOf lists the PulseAudio playback and capture streams a process
// owns.
func streamsOf(t *testing.T, pid int) []string {
	t.Helper()
	var found []string
	for _, kind := range []string{"sink-inputs", "source-outputs"} {
		out, err := exec.Command("pactl", "list", kind).Output()
		require.NoError(t, err)
		for _, block := range strings.Split(string(out), "\n\n") {
			if strings.Contains(block, `application.process.id = "`+strconv.Itoa(pid)+`"`) {
				found = append(found, kind+": "+strings.SplitN(block, "\n", 2)[0])
			}
		}
	}
	return found
}
