package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
)

// TimedTurn says an utterance's TurnComplete in the pause after it, and 0
// inside one, pauses between its words included, as a semantic detector
// hears an unfinished sentence (bug: it said the utterance before's
// "complete" in a pause inside the next, so a replay with natural pauses
// committed at each of them).
func TestTimedTurn(t *testing.T) {
	clk := clock.NewVirtual()
	d := &TimedTurn{Clock: clk, Script: []Utterance{
		{Start: 0, End: time.Second, Text: "what time is it", TurnComplete: 0.9},
		{Start: 2 * time.Second, End: 4 * time.Second, TurnComplete: 0.8, Words: []Word{
			{Text: "and", Start: 2 * time.Second, End: 2300 * time.Millisecond},
			{Text: "in", Start: 2800 * time.Millisecond, End: 3 * time.Second},
			{Text: "tokyo", Start: 3 * time.Second, End: 4 * time.Second},
		}},
	}}
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{
		{500 * time.Millisecond, 0},    // the first utterance, not ended
		{1500 * time.Millisecond, 0.9}, // the pause after it
		{2500 * time.Millisecond, 0},   // a pause between "and" and "in"
		{4500 * time.Millisecond, 0.8}, // after the second
	} {
		clk.Advance(tc.at - clk.Now())
		p, err := d.Predict(context.Background(), nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, p, "at %v", tc.at)
	}
}
