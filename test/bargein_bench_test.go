package test

import (
	bin "encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// BenchmarkLiveBargeInToSilence measures what a user feels when they
// interrupt: the time from the agent's decision to stop talking (the
// barge_in_pending event, when playback pauses) to silence at the
// PulseAudio sink it plays into, read back from the sink's monitor. That
// includes everything after the decision: the pause, the audio already
// handed to the sound server, and the server's own latency.
//
// The agent listens to va_test_sink's monitor, where paplay plays the
// user's voice, and answers into va_spare_sink; parec records
// va_spare_sink's monitor. Each interruption's turn is answered with
// another long reply, which the next one interrupts: 50 in all.
//
//	go test -run '^$' -bench LiveBargeInToSilence -benchtime 1x ./test
func BenchmarkLiveBargeInToSilence(b *testing.B) {
	needPulse(b)
	const interruptions = 50
	dir := b.TempDir()
	speech := filepath.Join(dir, "stop.wav")
	require.NoError(b, audio.WriteWAV(speech, audio.Mono16k,
		standin.Voice(600*time.Millisecond, standin.Utterance{End: 600 * time.Millisecond}), audio.PCM16))
	// The recognizer double hears a word every 100 ms, whenever the user
	// speaks; every reply is long enough to interrupt.
	var words []string
	for i := range 36000 {
		words = append(words, fmt.Sprintf(`{"text":"w","start_ms":%d,"end_ms":%d}`, i*100, i*100+100))
	}
	script := filepath.Join(dir, "script.json")
	require.NoError(b, os.WriteFile(script, []byte(`{"user":[{"start_ms":0,"end_ms":3600000,"text":"w","words":[`+strings.Join(words, ",")+`]}],
		"replies":["`+strings.Repeat("This reply goes on and on. ", 8)+`"],"first_token_ms":50,"tokens_per_second":0}`), 0o644))
	config := filepath.Join(dir, "config.yaml")
	require.NoError(b, os.WriteFile(config, []byte("stages:\n  endpoint:\n    silence_without_model: 300ms\n"), 0o644))

	for b.Loop() {
		mon := startMonitor(b, "va_spare_sink.monitor")
		agent := exec.Command(binary, "run", "--json", "--config", config, "--backend", "pulseaudio", "--aec=false", "--ns=false",
			"--capture", "Monitor of va_test_sink", "--playback", "va_spare_sink",
			"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", script)
		agent.Env = append(os.Environ(), "XDG_CONFIG_HOME="+b.TempDir())
		stdout, err := agent.StdoutPipe()
		require.NoError(b, err)
		stderr := &testenv.LockedBuffer{}
		agent.Stderr = stderr
		require.NoError(b, agent.Start())
		events := timedEvents(stdout)
		waitTimed(b, events, "state", 10*time.Second, stderr)

		var latencies []float64
		for i := 0; len(latencies) < interruptions; i++ {
			// The first question, then each interruption, starts a reply.
			if i == 0 {
				require.NoError(b, exec.Command("paplay", "-d", "va_test_sink", speech).Run())
			}
			waitTimed(b, events, pipeline.EvPlaybackStart, 10*time.Second, stderr)
			time.Sleep(500 * time.Millisecond)
			require.NoError(b, exec.Command("paplay", "-d", "va_test_sink", speech).Start())
			decided := waitTimed(b, events, pipeline.EvBargeInPending, 10*time.Second, stderr)
			time.Sleep(300 * time.Millisecond) // the silence to look for
			silent, ok := mon.silentFrom(decided.Add(-100*time.Millisecond), 50*time.Millisecond)
			require.True(b, ok, "no silence on the sink after interruption %d", i+1)
			latencies = append(latencies, float64(silent.Sub(decided).Microseconds())/1000)
		}
		require.NoError(b, agent.Process.Signal(syscall.SIGINT))
		for range events {
		}
		require.NoError(b, agent.Wait(), stderr.String())
		mon.stop()
		b.ReportMetric(pipeline.Percentile(latencies, 50), "p50-ms")
		b.ReportMetric(pipeline.Percentile(latencies, 95), "p95-ms")
		b.ReportMetric(slicesMax(latencies), "max-ms")
		b.Logf("decision to silence at the sink, ms, over %d interruptions: %v", len(latencies), latencies)
	}
}

func slicesMax(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

type timedEvent struct {
	typ string
	at  time.Time
}

// timedEvents reads the agent's JSON event lines, noting when each came.
func timedEvents(stdout io.Reader) <-chan timedEvent {
	out := make(chan timedEvent, 1024)
	go func() {
		defer close(out)
		for e := range eventStream(stdout) {
			t, _ := e["type"].(string)
			out <- timedEvent{t, time.Now()}
		}
	}()
	return out
}

func waitTimed(b *testing.B, events <-chan timedEvent, typ pipeline.EventType, within time.Duration, stderr *testenv.LockedBuffer) time.Time {
	b.Helper()
	deadline := time.After(within)
	for {
		select {
		case e, ok := <-events:
			require.True(b, ok, "agent exited before %s: %s", typ, stderr.String())
			if e.typ == string(typ) {
				return e.at
			}
		case <-deadline:
			require.FailNow(b, "timed out", "no %s within %v: %s", typ, within, stderr.String())
		}
	}
}

// monitor records a PulseAudio source with parec, keeping when each
// sample arrived.
type monitor struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	// levels are the RMS of consecutive 1 ms blocks and arrived when each
	// block's last sample came in.
	levels  []float64
	arrived []time.Time
	wg      sync.WaitGroup
}

func startMonitor(b *testing.B, source string) *monitor {
	m := &monitor{cmd: exec.Command("parec", "-d", source, "--format=float32le", "--rate=16000", "--channels=1",
		"--latency-msec=5", "--raw")}
	out, err := m.cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, m.cmd.Start())
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		buf := make([]byte, 4*16*64)
		var block []float32
		for {
			n, err := out.Read(buf)
			now := time.Now()
			samples := make([]float32, n/4)
			for i := range samples {
				samples[i] = math.Float32frombits(bin.LittleEndian.Uint32(buf[4*i:]))
			}
			// Samples read together arrived together; the earlier ones
			// were in the server's buffer up to this read.
			m.mu.Lock()
			for i, s := range samples {
				block = append(block, s)
				if len(block) == 16 {
					var sum float64
					for _, v := range block {
						sum += float64(v) * float64(v)
					}
					m.levels = append(m.levels, math.Sqrt(sum/16))
					m.arrived = append(m.arrived, now.Add(-time.Duration(len(samples)-1-i)*time.Second/16000))
					block = block[:0]
				}
			}
			m.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return m
}

// silentFrom is when the sink went quiet, after from, for at least hold.
func (m *monitor) silentFrom(from time.Time, hold time.Duration) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	need := int(hold / time.Millisecond)
	quiet := 0
	for i := range m.levels {
		if m.arrived[i].Before(from) {
			continue
		}
		if m.levels[i] > 0.001 {
			quiet = 0
			continue
		}
		if quiet++; quiet == need {
			return m.arrived[i-need+1], true
		}
	}
	return time.Time{}, false
}

func (m *monitor) stop() {
	m.cmd.Process.Kill()
	m.cmd.Wait()
	m.wg.Wait()
}
