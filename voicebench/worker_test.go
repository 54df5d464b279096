package voicebench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline/event"
)

// A sample's result is its first turn: a turn the user went on with is
// committed again under its number with the whole sentence, which is the
// transcript; the reply dropped for it publishes nothing more, and the
// next turn's commit does not count.
func TestFirstTurnFollowsAContinuedTurn(t *testing.T) {
	// A language's words: the turn as first committed, its whole sentence,
	// the reply, and the next turn.
	for lang, w := range map[string][4]string{
		"English": {"what is", "what is the capital of France", "Paris.", "and of Spain"},
		"Chinese": {"法国的首都", "法国的首都是哪里", "巴黎。", "西班牙呢"},
	} {
		t.Run(lang, func(t *testing.T) {
			first, whole, reply, next := w[0], w[1], w[2], w[3]
			var turn firstTurn
			for _, e := range []event.Event{
				{Type: event.EvTurnCommit, Turn: 1, Text: first},
				{Type: event.EvReplyState, Turn: 1, Reply: event.ReplyCurrent},
				{Type: event.EvTurnContinued, Turn: 1, Text: first},
				{Type: event.EvReplyState, Turn: 1, Reply: event.ReplyDropped, Reason: "continued"},
				{Type: event.EvTurnCommit, Turn: 1, Text: whole},
				{Type: event.EvReplyState, Turn: 1, Reply: event.ReplyCurrent},
				{Type: event.EvLLMDone, Turn: 1, Text: reply},
				{Type: event.EvTurnMetrics, Turn: 1, Metrics: &event.TurnMetrics{EndpointingMS: 700, PlaybackStart: 1, EndToEndMS: 900}},
				{Type: event.EvTurnCommit, Turn: 2, Text: next},
			} {
				turn.observe(e)
			}
			res := turn.result(Sample{ID: "0"}, nil)
			require.NotNil(t, res.Transcript)
			assert.Equal(t, whole, *res.Transcript)
			assert.Equal(t, reply, res.Response)
			require.NotNil(t, res.Latency.EndToEnd)
			assert.Equal(t, 900.0, *res.Latency.EndToEnd)
			assert.Empty(t, res.Error)
		})
	}
}
