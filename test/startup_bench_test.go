package test

import (
	"os"
	"os/exec"
	"testing"

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
	if err != nil {
		b.Fatal(err)
	}
	if err := agent.Start(); err != nil {
		b.Fatal(err)
	}
	events := eventStream(stdout)
	e, ok := <-events
	b.StopTimer()
	defer b.StartTimer()
	if !ok || e["state"] != "listening" {
		agent.Process.Kill()
		b.Fatalf("first event %v, want the listening state", e)
	}
	if err := agent.Process.Signal(os.Interrupt); err != nil {
		b.Fatal(err)
	}
	for range events {
	}
	if err := agent.Wait(); err != nil {
		b.Fatal(err)
	}
}
