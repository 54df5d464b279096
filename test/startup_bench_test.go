package test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/voiceassistant/voice/internal/testenv"
)

// BenchmarkStartToListening is the agent's start-up: from exec to its
// "listening" state on miniaudio's null device, which covers loading the
// config, the models and ONNX Runtime, and starting the device.
func BenchmarkStartToListening(b *testing.B) {
	script := []string{"--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"}
	for _, bc := range []struct {
		name string
		vad  string
	}{
		{"doubles", "energy"},
		{"silero", "silero"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.vad == "silero" {
				testenv.Model(b, "silero_vad_v5.onnx")
			}
			args := append([]string{"run", "--json", "--backend", "null", "--vad", bc.vad}, script...)
			env := append(os.Environ(), "XDG_CONFIG_HOME="+b.TempDir())
			for b.Loop() {
				startToListening(b, env, args)
			}
		})
	}
}

// startToListening starts the agent, waits for its first state event, and
// stops it with the benchmark timer off.
func startToListening(b *testing.B, env, args []string) {
	agent := exec.Command(binary, args...)
	agent.Env = env
	stdout, err := agent.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, agent.Start())
	events := eventStream(stdout)
	e, ok := <-events
	b.StopTimer()
	defer b.StartTimer()
	if !ok || e["state"] != "listening" {
		agent.Process.Kill()
		require.FailNow(b, "not listening", "first event %v, want the listening state", e)
	}
	require.NoError(b, agent.Process.Signal(os.Interrupt))
	for range events {
	}
	require.NoError(b, agent.Wait())
}
