package test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
)

// threeTurns is a spoken three-turn conversation (espeak-ng) with the
// script the doubles follow: an LLM whose first token takes 150 ms and
// which then says 30 tokens a second, and a turn detector that calls
// every pause after a question complete. It returns the WAV and the
// script.
func threeTurns(t *testing.T) (wav, script string) {
	t.Helper()
	return spoken(t, "three-turns", []string{"It is sunny and warm today.", "No, it will stay dry.", "You are welcome."}, 150, 30,
		testspeech.Part{Silence: 500 * time.Millisecond},
		testspeech.Part{Text: "what is the weather like today"},
		testspeech.Part{Silence: 4 * time.Second},
		testspeech.Part{Text: "should I take an umbrella"},
		testspeech.Part{Silence: 4 * time.Second},
		testspeech.Part{Text: "thank you very much"},
		testspeech.Part{Silence: 3 * time.Second},
	)
}

// turnMetrics replays with args and returns each turn's metrics.
func turnMetrics(t *testing.T, args ...string) []pipeline.TurnMetrics {
	t.Helper()
	out, stderr, err := agent(t, append([]string{"replay", "--json"}, args...)...)
	require.NoError(t, err, stderr)
	var turns []pipeline.TurnMetrics
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Type    string                `json:"type"`
			Metrics *pipeline.TurnMetrics `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		if e.Type == "turn_metrics" {
			turns = append(turns, *e.Metrics)
		}
	}
	return turns
}

// Voice to voice: with the Smart Turn path saying "complete" (the scripted
// detector), a speculative reply and a short first chunk, the first reply
// audio starts within 250 ms of the end of the user's speech (p50); without
// them it takes over a second.
func TestReplyStartsWithin250ms(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	wav, script := threeTurns(t)
	common := []string{wav, "--vad", "silero", "--asr", "scripted", "--llm", "scripted", "--tts", "tone", "--script", script}
	p50 := func(turns []pipeline.TurnMetrics) float64 {
		var e2e []float64
		for _, m := range turns {
			e2e = append(e2e, m.EndToEndMS)
		}
		return pipeline.Percentile(e2e, 50)
	}

	fast := turnMetrics(t, append(common, "--turn", "scripted")...)
	require.Len(t, fast, 3)
	for i, m := range fast {
		assert.True(t, m.Speculated, "turn %d", i+1)
		assert.False(t, m.Interrupted, "turn %d", i+1)
	}
	t.Logf("speculation, first chunk of 2 words, scripted turn detector: p50 %.0f ms", p50(fast))
	assert.LessOrEqual(t, p50(fast), 250.0)

	slow := turnMetrics(t, append(common, "--turn", "none", "--speculate=false", "--first-chunk-words", "0")...)
	require.Len(t, slow, 3)
	t.Logf("no speculation, whole first sentence, silence policy: p50 %.0f ms", p50(slow))
	assert.Greater(t, p50(slow), 1000.0)
}
