package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/sdnotify"
	"github.com/voiceassistant/voice/internal/sdnotify/sdnotifytest"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/chunk"
	"github.com/voiceassistant/voice/vad"
)

// watchdogUSec is the watchdog timeout the tests give: the agent pets it
// every 100 ms.
const watchdogUSec = "200000"

// Under systemd (Type=notify) `run` says it is loading, then READY=1 once
// the models are loaded and the microphone is open, pets the watchdog at
// half its timeout while the session runs, and says STOPPING=1 when it
// ends.
func TestRunTellsSystemd(t *testing.T) {
	got := sdnotifytest.Listen(t, "")
	t.Setenv("WATCHDOG_USEC", watchdogUSec)
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	root := newApp().root()
	root.SetOut(io.Discard)
	var stderr bytes.Buffer
	root.SetErr(&stderr)
	root.SetArgs([]string{"run", "--config", empty, "--backend", "null", "--aec=false", "--ns=false", "--vad", "energy",
		"--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone",
		"--script", filepath.Join("..", "..", "test", "testdata", "demo.json")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	start := time.Now()
	go func() { ran <- root.ExecuteContext(ctx) }()

	assert.Equal(t, "STATUS=loading models", receive(t, got, ran))
	assert.Equal(t, "READY=1\nSTATUS=listening", receive(t, got, ran))
	for range 5 {
		require.Equal(t, sdnotify.Watchdog, receive(t, got, ran))
	}
	// A ticker never fires early, so the fifth pet comes at least five
	// of its periods (half the timeout each) after the start; the upper
	// bound is only that the pets keep coming on a loaded machine.
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, 5*100*time.Millisecond, "pets come faster than half the watchdog's timeout")
	assert.Less(t, took, 10*time.Second)

	cancel()
	for msg := receive(t, got, ran); msg != sdnotify.Stopping; msg = receive(t, got, ran) {
		require.Equal(t, sdnotify.Watchdog, msg, "before STOPPING=1, only the pets already due")
	}
	require.NoError(t, <-ran, stderr.String())
}

// receive is the next message to the socket, failing t if the agent ends
// first (ran, if not nil) or nothing comes for a long time (a generous
// bound, not a timing).
func receive(t *testing.T, got <-chan string, ran chan error) string {
	t.Helper()
	select {
	case msg := <-got:
		return msg
	case err := <-ran:
		// The agent ends right after its last message (STOPPING=1),
		// which may still be on its way from the socket to got.
		select {
		case msg := <-got:
			ran <- err // for whoever waits for the end after it
			return msg
		case <-time.After(time.Second):
		}
		require.FailNow(t, "the agent ended before telling systemd", "%v", err)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "systemd was told nothing for 30 s")
	}
	return ""
}

// gatedVAD is a VAD that blocks in every Process until the test lets the
// frame through, so a test can stall the pipeline's loop inside a stage.
type gatedVAD struct {
	pipeline.VAD
	entered chan<- struct{}
	pass    <-chan struct{}
}

func (v gatedVAD) Process(f audio.Frame) (vad.Result, error) {
	v.entered <- struct{}{}
	<-v.pass
	return v.VAD.Process(f)
}

// A pipeline loop stuck in a stage stops petting systemd's watchdog (so
// systemd restarts the service), and the pets come back when it moves
// again: they come from the loop, not from a timer beside it.
func TestBlockedPipelineStopsTheWatchdog(t *testing.T) {
	got := sdnotifytest.Listen(t, "")
	t.Setenv("WATCHDOG_USEC", watchdogUSec)
	svc, err := newService(discardLogger(t))
	require.NoError(t, err)
	require.Equal(t, "STATUS=loading models", receive(t, got, nil))

	entered, pass := make(chan struct{}), make(chan struct{})
	clk := clock.NewVirtual()
	cfg := pipeline.DefaultConfig()
	cfg.VAD = gatedVAD{VAD: standin.NewEnergyVAD(), entered: entered, pass: pass}
	cfg.ASR = &standin.ScriptedASR{}
	cfg.LLM = &standin.ScriptedLLM{Clock: clk}
	cfg.NewChunker = func() pipeline.Chunker { return chunk.New(chunk.DefaultConfig()) }
	cfg.History = llm.NewHistory("", 0)
	cfg.Alive = svc.alive
	ctx, cancel := context.WithCancel(context.Background())
	replayed := make(chan error, 1)
	go func() {
		// Silence in real time, longer than the test.
		dev := audio.VirtualConfig{Input: make([]float32, 120*audio.ProcessingRate), Pace: 1, Stall: time.Hour}
		_, err := pipeline.Replay(ctx, clk, cfg, dev, nil)
		replayed <- err
	}()
	svc.listening(ctx)
	require.Equal(t, "READY=1\nSTATUS=listening", receive(t, got, nil))

	// block lets frames through until stop closes, then leaves the next
	// one blocked in the VAD.
	block := func(stop <-chan struct{}) {
		for {
			<-entered
			select {
			case <-stop:
				return
			case pass <- struct{}{}:
			}
		}
	}
	stop, blocked := make(chan struct{}), make(chan struct{})
	go func() { block(stop); close(blocked) }()
	for range 3 {
		require.Equal(t, sdnotify.Watchdog, receive(t, got, nil))
	}
	close(stop)
	<-blocked
	// The round before the block may still earn one pet; then none comes
	// in ten of the watchdog's periods.
	window := time.After(10 * 100 * time.Millisecond)
	var late int
	for waiting := true; waiting; {
		select {
		case <-got:
			late++
		case <-window:
			waiting = false
		}
	}
	assert.LessOrEqual(t, late, 1, "the watchdog was petted while the pipeline's loop was blocked")

	// Every frame passes from here until the replay ends.
	ended := make(chan struct{})
	go func() {
		for {
			select {
			case <-ended:
				return
			case pass <- struct{}{}:
			case <-entered:
			}
		}
	}()
	require.Equal(t, sdnotify.Watchdog, receive(t, got, nil), "the pets come back when the loop moves again")
	svc.stopping()
	for msg := receive(t, got, nil); msg != sdnotify.Stopping; msg = receive(t, got, nil) {
		require.Equal(t, sdnotify.Watchdog, msg)
	}
	cancel()
	require.NoError(t, <-replayed)
	close(ended)
}

func discardLogger(t *testing.T) *slog.Logger {
	log, err := newLogger(io.Discard, "warn", "text")
	require.NoError(t, err)
	return log
}
