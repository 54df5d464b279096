package test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
)

// fullAgent is the agent as scripts/setup builds it, with the LLM (MNN)
// and echo cancellation, built once for the tests that need it.
var fullAgent = sync.OnceValues(func() (string, error) {
	path := filepath.Join(filepath.Dir(binary), "voice-agent-full")
	out, err := exec.Command("go", "build", "-tags", "mnn,webrtcapm", "-o", path, "../cmd/voice-agent").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -tags mnn,webrtcapm: %w\n%s", err, out)
	}
	return path, nil
})

func buildFullAgent(t *testing.T) string {
	t.Helper()
	testenv.MNN(t)
	path, err := fullAgent()
	require.NoError(t, err)
	return path
}

// greedyTinyLLM is a copy of the tiny MNN model that decodes greedily, so
// a replay gives the same reply every time. Settings, if any, are written
// into its config.json over the model's own (precision, say).
func greedyTinyLLM(t *testing.T, settings ...map[string]any) string {
	t.Helper()
	src, dir := testenv.TinyLLM(t), t.TempDir()
	testenv.CopyDir(t, src, dir)
	greedy, err := os.ReadFile(filepath.Join(src, "config_greedy.json"))
	require.NoError(t, err)
	var config map[string]any
	require.NoError(t, json.Unmarshal(greedy, &config))
	for _, s := range settings {
		maps.Copy(config, s)
	}
	data, err := json.Marshal(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644))
	return dir
}

// mnnReplay is the spoken demo through the real engines where this
// machine has them: Silero VAD and the tiny MNN LLM; scripted ASR and
// tone TTS.
func mnnReplay(t *testing.T, maxTokens int, settings ...map[string]any) []string {
	return []string{"replay", "testdata/demo.wav", "--json", "--vad", "silero", "--asr", "scripted", "--turn", "none",
		"--llm", "mnn", "--llm-model-dir", greedyTinyLLM(t, settings...), "--llm-max-tokens", fmt.Sprint(maxTokens), "--llm-threads", "1",
		"--tts", "tone", "--script", "testdata/demo.json"}
}

// echoPath adds the simulated echo path, so the echo canceller runs.
var echoPath = []string{"--echo-gain", "0.5", "--echo-delay", "60ms"}

// The user interrupts the first reply while MNN is still generating it:
// the engine stops, and the next turn is answered by the same engine in
// full. --compute-scale puts the engine's measured compute on the replay
// clock, slowed so that a whole reply of the tiny model's 4096 tokens
// takes 18 s of it, calibrated by a replay with compute free. The two
// runs decode at different speeds on a shared machine (CI ran the second
// twice as slow as the first), so the scale leaves room both ways: the
// second reply has about 62 s of replay (to the 60 s a replay runs past
// its input) for its 18, and the 3.4 s between the first turn and the
// barge-in hold about 1,500 tokens of the first (the first thousand
// decode about twice as fast as the average), well short of its 4096.
func TestMNNReplayBargeInCancelsGeneration(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	bin := buildFullAgent(t)
	const maxTokens = 4096
	args := append(mnnReplay(t, maxTokens), echoPath...)
	scale := 18 / wholeReplySeconds(t, bin, maxTokens)
	out, stderr, err := run(t, bin, append(args, "--compute-scale", fmt.Sprintf("%.2f", scale))...)
	require.NoError(t, err, stderr)
	events := replayEvents(t, out)
	assert.Equal(t, 2, count(events, "turn_commit"), "both questions are answered")
	assert.Equal(t, 1, count(events, "barge_in"), "the second question interrupts the first reply")
	assert.Zero(t, count(events, "error"), stderr)

	var done []replayEvent
	var bargeAt float64
	for _, e := range events {
		switch e.Type {
		case "llm_done":
			done = append(done, e)
		case "barge_in":
			bargeAt = e.AtMS
		}
	}
	require.Len(t, done, 2)
	require.NotNil(t, done[0].Stats)
	require.NotNil(t, done[1].Stats)
	t.Logf("scale %.2f: %d tokens before the barge-in, %d in the second reply", scale, done[0].Stats.GeneratedTokens, done[1].Stats.GeneratedTokens)
	assert.Equal(t, 1, done[0].Turn)
	assert.InDelta(t, bargeAt, done[0].AtMS, 10, "generation stops at the barge-in")
	assert.Less(t, done[0].Stats.GeneratedTokens, maxTokens, "the barge-in came while the reply was being generated")
	// The tiny model never ends a reply by itself: the second one runs to
	// the bound, on an engine that was cancelled a turn earlier.
	assert.Equal(t, maxTokens, done[1].Stats.GeneratedTokens)
	assert.NotEmpty(t, done[1].Text)
}

// wholeReplySeconds is how long this machine takes to decode a reply of
// maxTokens tokens of the tiny model, from a replay of the demo with
// compute free (both its replies run to the bound).
func wholeReplySeconds(t *testing.T, bin string, maxTokens int) float64 {
	t.Helper()
	out, stderr, err := run(t, bin, mnnReplay(t, maxTokens)...)
	require.NoError(t, err, stderr)
	var tokens, seconds float64
	for _, e := range replayEvents(t, out) {
		if e.Type == "llm_done" && e.Stats != nil {
			tokens += float64(e.Stats.GeneratedTokens)
			seconds += e.Stats.Decode.Seconds()
		}
	}
	require.Positive(t, tokens, "the demo decodes")
	return seconds / tokens * float64(maxTokens)
}

// The spoken three-turn conversation through the real code of every stage
// (Silero, X-ASR, Smart Turn, MNN and MOSS-TTS-Nano, the last four with
// tiny random weights) with their measured compute on the replay clock:
// every turn is still committed and answered, and each turn reports what
// every stage computed.
func TestComputeOnTheClockWithTinyModels(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	bin := buildFullAgent(t)
	wav, script := threeTurns(t)
	out, stderr, err := run(t, bin, "replay", wav, "--json", "--compute-scale", "1", "--script", script,
		"--vad", "silero", "--asr", "xasr", "--asr-model-dir", tinyXASR(t),
		"--turn", "smart-turn", "--turn-model", "../turn/smartturn/testdata/smart_turn_tiny.onnx",
		"--llm", "mnn", "--llm-model-dir", greedyTinyLLM(t), "--llm-max-tokens", "16", "--llm-threads", "1",
		"--tts", "moss", "--tts-model-dir", "../tts/moss/testdata/tiny")
	require.NoError(t, err, stderr)
	events := replayEvents(t, out)
	assert.Equal(t, 3, count(events, "turn_commit"), stderr)
	assert.Zero(t, count(events, "error"), stderr)
	turns := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Type    string                `json:"type"`
			Metrics *pipeline.TurnMetrics `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type != "turn_metrics" {
			continue
		}
		turns++
		c := e.Metrics.Compute
		require.NotNil(t, c, "turn %d reports its compute", turns)
		for stage, ms := range map[string]float64{"vad": c.VAD, "asr": c.ASR, "turn": c.Turn, "llm": c.LLM,
			"llm_prefill": c.LLMPrefill, "llm_decode": c.LLMDecode, "tts": c.TTS} {
			assert.Positive(t, ms, "turn %d: %s", turns, stage)
		}
		assert.Positive(t, e.Metrics.EndToEndMS, "turn %d is answered", turns)
	}
	assert.Equal(t, 3, turns)
}
