package bench

import (
	"testing"
	"time"

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

// Compute-only latency is over the answered turns, as voice to voice is;
// its parts are the turns' compute beside the other stages'.
func TestSummarizeGivesComputeOnly(t *testing.T) {
	answered := func(asrFinal, firstToken, firstAudio float64) pipeline.TurnMetrics {
		m := pipeline.TurnMetrics{SpeechEnd: time.Second, Commit: 1500 * time.Millisecond, ASRFinal: 1600 * time.Millisecond,
			LLMStart: 1600 * time.Millisecond, FirstToken: 1700 * time.Millisecond, FirstAudio: 1800 * time.Millisecond,
			PlaybackStart: 1900 * time.Millisecond,
			Compute:       &pipeline.StageCompute{ASR: 50, ASRFinal: asrFinal, LLMFirstToken: firstToken, TTSFirstAudio: firstAudio}}
		m.Derive()
		return m
	}
	unanswered := pipeline.TurnMetrics{Compute: &pipeline.StageCompute{ASRFinal: 1000}}
	b := summarize([]pipeline.TurnMetrics{answered(40, 70, 30), unanswered, answered(20, 100, 80)})
	assert.Equal(t, Percentiles{P50: 140, P95: 200}, b.ComputeOnly)
	assert.Equal(t, Percentiles{P50: 40, P95: 1000}, b.Compute["asr_final"])
	assert.Equal(t, Percentiles{P50: 70, P95: 100}, b.Compute["llm_first_token"])
	assert.Equal(t, Percentiles{P50: 30, P95: 80}, b.Compute["tts_first_audio"])
}
