// Package test holds end-to-end tests: the built voice-agent binary run
// over recorded audio with the scripted stage doubles.
package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/standin"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "voice-agent-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "voice-agent")
	// The leak checker is in test builds only (cmd/voice-agent/leakcheck.go).
	build := exec.Command("go", "build", "-tags", "leakcheck", "-o", binary, "../cmd/voice-agent")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building voice-agent: " + err.Error())
	}
	// The binary built, its tests and what they start run on a model
	// cache and config of their own.
	code := testenv.Isolated(m).Run()
	os.RemoveAll(dir)
	if code == 0 {
		// No test leaves a goroutine (a process's pipes, a server) behind.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var doubles = []string{"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"}

func agent(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return run(t, binary, args...)
}

// run runs an agent binary with its own empty config directory.
func run(t *testing.T, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// The demo conversation recorded as a 48 kHz stereo file, so the replay
// also exercises format conversion on the way in.
func demoWAV(t *testing.T) string {
	t.Helper()
	pcm := standin.Voice(9*time.Second,
		standin.Utterance{Start: 500 * time.Millisecond, End: 2 * time.Second},
		standin.Utterance{Start: 6 * time.Second, End: 7200 * time.Millisecond})
	stereo, err := audio.Convert(pcm, audio.Mono16k, audio.Format{Rate: 48000, Channels: 2})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "demo.wav")
	require.NoError(t, audio.WriteWAV(path, audio.Format{Rate: 48000, Channels: 2}, stereo, audio.PCM24))
	return path
}

func TestReplayCommand(t *testing.T) {
	in := demoWAV(t)
	dir := t.TempDir()
	out, events := filepath.Join(dir, "out.wav"), filepath.Join(dir, "events.jsonl")
	args := append([]string{"replay", in, "--out", out, "--events", events}, doubles...)
	_, stderr, err := agent(t, args...)
	require.NoError(t, err, stderr)

	f, err := os.Open(events)
	require.NoError(t, err)
	defer f.Close()
	var types []string
	var commits []string
	var playStart []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Type string  `json:"type"`
			AtMS float64 `json:"at_ms"`
			Text string  `json:"text"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		types = append(types, e.Type)
		switch e.Type {
		case "turn_commit":
			commits = append(commits, e.Text)
		case "playback_start":
			playStart = append(playStart, e.AtMS)
		}
	}
	assert.Equal(t, []string{"what is the weather like today", "and tomorrow"}, commits)
	require.Len(t, playStart, 2)
	assert.Contains(t, types, "turn_metrics")

	format, rec, err := audio.ReadWAV(out)
	require.NoError(t, err)
	assert.Equal(t, audio.Mono16k, format)
	// Silent until the first reply, sounding right after it starts.
	first := int(format.Samples(time.Duration(playStart[0] * float64(time.Millisecond))))
	assert.Zero(t, rms(rec[:first]))
	assert.Greater(t, rms(rec[first:first+1600]), 0.1)
	assert.Contains(t, stderr, "replay done")
}

// version (and --version) tell a bug report what this binary is: here a
// build without MNN, with the ONNX Runtime scripts/setup installs.
func TestVersion(t *testing.T) {
	testenv.ONNXRuntime(t)
	stdout, stderr, err := agent(t, "version", "--json")
	require.NoError(t, err, stderr)
	var v struct {
		Version, Go, MNN string
		Tags             string `json:"build_tags"`
		ONNXRuntime      string `json:"onnxruntime"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	assert.Equal(t, "devel", v.Version)
	assert.Contains(t, v.Go, "go1.")
	assert.Empty(t, v.MNN, "the test binary is built without -tags mnn")
	assert.Equal(t, "1.30.0", v.ONNXRuntime)

	stdout, stderr, err = agent(t, "--version")
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, "voice-agent devel")
	assert.Contains(t, stdout, "MNN: not built in")

	_, stderr, err = agent(t, "frobnicate")
	require.Error(t, err)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
}

func TestReplayJSONEventsOnStdout(t *testing.T) {
	stdout, stderr, err := agent(t, append([]string{"replay", demoWAV(t), "--json"}, doubles...)...)
	require.NoError(t, err, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.True(t, json.Valid([]byte(l)), l)
	}
}

func TestMissingModelsSayWhatToDo(t *testing.T) {
	t.Setenv("VOICE_MODELS", t.TempDir())
	_, stderr, err := agent(t, "replay", demoWAV(t))
	require.Error(t, err)
	for _, want := range []string{"X-ASR not found", "voice-agent models pull xasr-zh-en-streaming-160ms",
		"Smart Turn v3.2 not found", "voice-agent models pull smart-turn-v3.2-cpu",
		"LLM: this build has no MNN; run scripts/setup",
		"MOSS-TTS-Nano not found", "voice-agent models pull MOSS-TTS-Nano-100M-ONNX MOSS-Audio-Tokenizer-Nano-ONNX"} {
		assert.Contains(t, stderr, want)
	}
	assert.NotContains(t, stderr, "panic")
	// Short: a line per missing stage, and one saying where the rest is.
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	assert.Len(t, lines, 5, stderr)
	for _, l := range lines {
		assert.Less(t, len(l), 200, l)
	}
	assert.NotContains(t, stderr, "looked for xasr")

	_, stderr, err = agent(t, "replay", demoWAV(t), "--log-level", "debug")
	require.Error(t, err)
	assert.Contains(t, stderr, "looked for xasr-zh-en-streaming-160ms in")
	assert.Contains(t, stderr, "huggingface.co/pipecat-ai/smart-turn-v3")
}

func TestBadWAVNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"empty.wav":     nil,
		"garbage.wav":   []byte("this is not a wav file at all, not even close"),
		"truncated.wav": truncatedWAV(t),
		"1hz.wav":       wavAt(t, 1),
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		for _, cmd := range [][]string{append([]string{"replay", path}, doubles...), {"vad", path, "--vad-model", "/nonexistent.onnx"}} {
			_, stderr, err := agent(t, cmd...)
			require.Error(t, err, name)
			assert.Contains(t, stderr, name)
			assert.NotContains(t, stderr, "panic")
		}
	}
}

// wavAt is 64 KB of 16-bit mono silence declared at rate Hz.
func wavAt(t *testing.T, rate int) []byte {
	path := filepath.Join(t.TempDir(), "rate.wav")
	require.NoError(t, audio.WriteWAV(path, audio.Format{Rate: rate, Channels: 1}, make([]float32, 32<<10), audio.PCM16))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

func truncatedWAV(t *testing.T) []byte {
	path := filepath.Join(t.TempDir(), "full.wav")
	require.NoError(t, audio.WriteWAV(path, audio.Mono16k, make([]float32, 16000), audio.PCM16))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data[:len(data)/2]
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	if len(x) == 0 {
		return 0
	}
	return math.Sqrt(s / float64(len(x)))
}

// testdata/demo.wav is espeak-ng speech: "what is the weather like today"
// at 0.500-2.295 s and "and tomorrow" at 6.000-6.758 s (demo.json).
func TestReplaySpokenAudioWithSilero(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	args := []string{"replay", "testdata/demo.wav", "--events", events, "--vad", "silero",
		"--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json"}
	_, stderr, err := agent(t, args...)
	require.NoError(t, err, stderr)

	data, err := os.ReadFile(events)
	require.NoError(t, err)
	var commits []string
	var speech []float64
	bargeIns := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Type string  `json:"type"`
			AtMS float64 `json:"at_ms"`
			Pos  int64   `json:"pos"`
			Text string  `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		switch e.Type {
		case "turn_commit":
			commits = append(commits, e.Text)
		case "speech_start", "speech_end":
			speech = append(speech, float64(e.Pos)/16)
			// Reported once the VAD is sure: a start after its minimum
			// speech, an end after its minimum silence.
			assert.GreaterOrEqual(t, e.AtMS, float64(e.Pos)/16, e.Type)
		case "barge_in":
			bargeIns++
		}
	}
	// The first reply is still playing when "and tomorrow" starts.
	assert.Equal(t, 1, bargeIns)
	assert.Equal(t, []string{"what is the weather like today", "and tomorrow"}, commits)
	// Silero's boundaries (pos, in 16 kHz samples) fall within 100 ms of
	// the spoken audio.
	require.Len(t, speech, 4)
	for i, want := range []float64{500, 2295, 6000, 6758} {
		assert.InDelta(t, want, speech[i], 100, "boundary %d", i)
	}
}

func TestVADCommand(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	stdout, stderr, err := agent(t, "vad", "testdata/demo.wav", "--json")
	require.NoError(t, err, stderr)
	var out struct {
		Segments []struct {
			Start float64 `json:"start_s"`
			End   float64 `json:"end_s"`
		} `json:"segments"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.Len(t, out.Segments, 2)
	for i, want := range [][2]float64{{0.5, 2.295}, {6.0, 6.758}} {
		assert.InDelta(t, want[0], out.Segments[i].Start, 0.1)
		assert.InDelta(t, want[1], out.Segments[i].End, 0.1)
	}

	// Silence has no segments.
	silent := filepath.Join(t.TempDir(), "silence.wav")
	require.NoError(t, audio.WriteWAV(silent, audio.Mono16k, make([]float32, 32000), audio.PCM16))
	stdout, stderr, err = agent(t, "vad", silent, "--json")
	require.NoError(t, err, stderr)
	assert.JSONEq(t, `{"segments":[]}`, stdout)
}

func TestTurnCommand(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	stdout, stderr, err := agent(t, "turn", "testdata/demo.wav", "--turn-model", "../turn/smartturn/testdata/smart_turn_tiny.onnx", "--json")
	require.NoError(t, err, stderr)
	var out struct {
		Probability float64 `json:"probability"`
		Complete    bool    `json:"complete"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Greater(t, out.Probability, 0.0)
	assert.Less(t, out.Probability, 1.0)
	assert.Equal(t, out.Probability >= 0.5, out.Complete)

	_, stderr, err = agent(t, "turn", "testdata/demo.wav", "--turn-model", "/nonexistent/smart-turn.onnx")
	require.Error(t, err)
	assert.Contains(t, stderr, "/nonexistent/smart-turn.onnx")
}

// tinyXASR lays out the tiny random-weight X-ASR model set as a model
// directory.
func tinyXASR(t *testing.T) string {
	t.Helper()
	testenv.ONNXRuntime(t)
	dir := t.TempDir()
	for src, dst := range map[string]string{
		"../asr/xasr/testdata/tiny/encoder.int8.onnx": "encoder.int8.onnx",
		"../asr/xasr/testdata/tiny/decoder.onnx":      "decoder.onnx",
		"../asr/xasr/testdata/tiny/joiner.int8.onnx":  "joiner.int8.onnx",
		"../asr/xasr/testdata/tokens.txt":             "tokens.txt",
	} {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, dst), data, 0o644))
	}
	return dir
}

// The whole listening side on real code: Silero, X-ASR (tiny weights) and
// the endpointing policy commit both spoken turns with their transcripts.
func TestReplayWithRealRecognizer(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	_, stderr, err := agent(t, "replay", "testdata/demo.wav", "--events", events, "--asr", "xasr", "--asr-model-dir", tinyXASR(t),
		"--turn", "none", "--llm", "scripted", "--tts", "tone", "--script", "testdata/demo.json")
	require.NoError(t, err, stderr)
	data, err := os.ReadFile(events)
	require.NoError(t, err)
	var commits []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type == "turn_commit" {
			commits = append(commits, e.Text)
		}
	}
	require.Len(t, commits, 2)
	for _, c := range commits {
		assert.NotEmpty(t, c)
	}
}

// The asr command streams partials and a final result; the tiny
// random-weight X-ASR model makes no sense of the words, but the stream of
// results is the real recognizer's.
func TestASRCommand(t *testing.T) {
	dir := tinyXASR(t)
	stdout, stderr, err := agent(t, "asr", "testdata/demo.wav", "--model-dir", dir, "--json")
	require.NoError(t, err, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	var last struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	for i, l := range lines {
		require.NoError(t, json.Unmarshal([]byte(l), &last))
		if i < len(lines)-1 {
			assert.Equal(t, "partial", last.Type)
		}
	}
	assert.Equal(t, "final", last.Type)
	assert.NotEmpty(t, last.Text)

	// A recording at 8 kHz is resampled on the way in, not refused.
	pcm, err := audio.Convert(standin.Voice(time.Second), audio.Mono16k, audio.Format{Rate: 8000, Channels: 1})
	require.NoError(t, err)
	low := filepath.Join(t.TempDir(), "8k.wav")
	require.NoError(t, audio.WriteWAV(low, audio.Format{Rate: 8000, Channels: 1}, pcm, audio.PCM16))
	_, stderr, err = agent(t, "asr", low, "--model-dir", dir)
	require.NoError(t, err, stderr)

	_, stderr, err = agent(t, "asr", "testdata/demo.wav", "--model-dir", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, stderr, "encoder.int8.onnx")
}

// With a simulated echo path and no echo canceller in the build, replay
// falls back to half duplex and the assistant does not interrupt itself.
func TestReplayEchoFallsBackToHalfDuplex(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events.jsonl")
	args := append([]string{"replay", demoWAV(t), "--events", events, "--echo-gain", "0.5", "--echo-delay", "60ms"}, doubles...)
	_, stderr, err := agent(t, args...)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "running half duplex")
	data, err := os.ReadFile(events)
	require.NoError(t, err)
	assert.NotContains(t, string(data), `"type":"barge_in"`)
	// The second question comes while the first reply still plays: half
	// duplex does not hear it, and the reply plays to its end.
	assert.Equal(t, 1, strings.Count(string(data), `"type":"turn_commit"`))
	assert.Equal(t, 1, strings.Count(string(data), `"type":"playback_stop"`))
}
