package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/reply"
)

// The guesses are counted from the events alone, each miss under its
// reason; the other events count for nothing.
func TestGuessesCountTheEvents(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []pipeline.Event
		want   Guesses
	}{
		{name: "none", want: Guesses{Dropped: map[string]int{}}},
		{
			name: "a hit after a miss",
			events: []pipeline.Event{
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvSpeculationMiss, Reason: reply.MissSpeechResumed},
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvTurnCommit}, {Type: pipeline.EvSpeculationHit},
			},
			want: Guesses{Speculations: 2, Hits: 1, Dropped: map[string]int{reply.MissSpeechResumed: 1}},
		},
		{
			name: "misses by reason",
			events: []pipeline.Event{
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvSpeculationMiss, Reason: reply.MissTranscript},
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvSpeculationMiss, Reason: reply.MissTranscript},
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvSpeculationMiss, Reason: reply.MissFailed},
				{Type: pipeline.EvSpeculationStart}, {Type: pipeline.EvSpeculationMiss, Reason: reply.MissSessionEnd},
			},
			want: Guesses{Speculations: 4, Dropped: map[string]int{reply.MissTranscript: 2, reply.MissFailed: 1, reply.MissSessionEnd: 1}},
		},
		{
			name: "continuations and barge-ins",
			events: []pipeline.Event{
				{Type: pipeline.EvTurnCommit}, {Type: pipeline.EvTurnContinued}, {Type: pipeline.EvReplyState, Reason: reply.DropContinued},
				{Type: pipeline.EvBargeInPending}, {Type: pipeline.EvBargeIn}, {Type: pipeline.EvBargeIn, Reason: pipeline.ReasonStopKey},
				{Type: pipeline.EvBargeInPending}, {Type: pipeline.EvBargeInResumed},
			},
			want: Guesses{Dropped: map[string]int{}, Continuations: 1, BargeIns: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Guesses{Dropped: map[string]int{}}
			for _, e := range tc.events {
				g.count(e)
			}
			assert.Equal(t, tc.want, g)
		})
	}
}
