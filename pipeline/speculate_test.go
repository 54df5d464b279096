package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

const ms = time.Millisecond

// The reply starts at the user's pause and is ready before the turn is
// committed, but nothing of it is heard or shown before the commit.
func TestSpeculationHitPlaysOnlyAfterTheCommit(t *testing.T) {
	s := scenario{
		length:  6 * time.Second,
		user:    []standin.Utterance{{Start: 500 * ms, End: 2000 * ms, Text: "what is the weather today"}},
		replies: []string{"It is sunny and warm today."},
	}
	o := s.run(t)
	starts, hits := o.of(pipeline.EvSpeculationStart), o.of(pipeline.EvSpeculationHit)
	require.Len(t, starts, 1)
	require.Len(t, hits, 1)
	assert.Empty(t, o.of(pipeline.EvSpeculationMiss))
	assert.Equal(t, "what is the weather today", starts[0].Text)
	assert.Equal(t, 1, hits[0].Turn)

	m := o.result.Metrics[0]
	commit := o.of(pipeline.EvTurnCommit)[0]
	assert.Less(t, m.FirstAudio, m.Commit, "synthesized before the commit")
	assert.Zero(t, o.rms(0, commit.At), "silent until the commit")
	assert.Greater(t, o.rms(m.PlaybackStart, m.PlaybackStart+500*ms), 0.1)

	// The reply's events come after the commit, in order.
	var seen []pipeline.EventType
	for _, e := range o.events {
		switch e.Type {
		case pipeline.EvSpeculationStart, pipeline.EvTurnCommit, pipeline.EvSpeculationHit,
			pipeline.EvLLMPiece, pipeline.EvTTSChunk, pipeline.EvPlaybackStart:
			if len(seen) == 0 || seen[len(seen)-1] != e.Type {
				seen = append(seen, e.Type)
			}
		}
	}
	assert.Equal(t, []pipeline.EventType{pipeline.EvSpeculationStart, pipeline.EvTurnCommit, pipeline.EvSpeculationHit,
		pipeline.EvLLMPiece, pipeline.EvTTSChunk, pipeline.EvLLMPiece, pipeline.EvTTSChunk, pipeline.EvPlaybackStart}, seen[:8])
	assert.Len(t, o.llm.Conversations(), 1, "one generation")
}

// goesOn is a turn the user pauses in and goes on with, so that a reply
// speculated at the pause is dropped, and one at its end answers it.
func goesOn() scenario {
	return scenario{
		length: 7 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * ms, End: 1500 * ms, Text: "what is the"},
			// 300 ms: a pause the energy VAD ends speech at (200 ms), short
			// of the 700 ms that commit a turn without a turn model.
			{Start: 1800 * ms, End: 2800 * ms, Text: "weather today"},
		},
		replies: []string{"It is sunny and warm today.", "Never used."},
	}
}

// The user pauses and goes on: the speculative reply is dropped unheard
// and unshown, the history never holds it, and the whole turn is answered
// with the reply the script has for it.
func TestSpeculationMissWhenTheUserGoesOn(t *testing.T) {
	o := goesOn().run(t)
	starts, misses, hits := o.of(pipeline.EvSpeculationStart), o.of(pipeline.EvSpeculationMiss), o.of(pipeline.EvSpeculationHit)
	assert.Equal(t, []string{"what is the", "what is the weather today"}, texts(starts))
	require.Len(t, misses, 1)
	assert.Equal(t, "speech_resumed", misses[0].Reason)
	assert.Equal(t, "what is the", misses[0].Text)
	require.Len(t, hits, 1)
	assert.Equal(t, []string{"what is the weather today"}, texts(o.of(pipeline.EvTurnCommit)))

	// Published once, for the committed turn only.
	assert.Len(t, o.of(pipeline.EvLLMDone), 1)
	for _, e := range o.of(pipeline.EvLLMPiece) {
		assert.Greater(t, e.At, misses[0].At, "no piece of the dropped reply is shown")
	}
	commit := o.of(pipeline.EvTurnCommit)[0]
	assert.Zero(t, o.rms(0, commit.At), "nothing played before the commit")

	convs := o.llm.Conversations()
	require.Len(t, convs, 2)
	assert.Equal(t, llm.Message{Role: llm.User, Content: "what is the"}, convs[0][1], "the dropped speculation")
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "You are a helpful assistant."},
		{Role: llm.User, Content: "what is the weather today"},
	}, convs[1])
	assert.Equal(t, "It is sunny and warm today.", o.of(pipeline.EvLLMDone)[0].Text)
}

// A word the recognizer delivers after the pause began changes the
// transcript the speculation answered: it is dropped and started again.
func TestSpeculationMissWhenTheTranscriptChanges(t *testing.T) {
	s := scenario{
		length: 6 * time.Second,
		user: []standin.Utterance{{Start: 500 * ms, End: 1500 * ms, Text: "what time is it",
			Words: []standin.Word{
				{Text: "what", Start: 500 * ms, End: 800 * ms}, {Text: "time", Start: 800 * ms, End: 1100 * ms},
				{Text: "is", Start: 1100 * ms, End: 1300 * ms},
				// Recognized 150 ms into the silence, as a lagging recognizer would.
				{Text: "it", Start: 1300 * ms, End: 1650 * ms},
			}}},
		replies: []string{"It is noon."},
	}
	o := s.run(t)
	assert.Equal(t, []string{"what time is", "what time is it"}, texts(o.of(pipeline.EvSpeculationStart)))
	misses := o.of(pipeline.EvSpeculationMiss)
	require.Len(t, misses, 1)
	assert.Equal(t, "transcript_changed", misses[0].Reason)
	assert.Len(t, o.of(pipeline.EvSpeculationHit), 1)
	assert.Equal(t, "It is noon.", o.of(pipeline.EvLLMDone)[0].Text)
}

// A speculation that fails is dropped at the commit and the turn gets a
// response of its own.
func TestFailedSpeculationIsRetriedAtTheCommit(t *testing.T) {
	s := scenario{
		length:  6 * time.Second,
		user:    []standin.Utterance{{Start: 500 * ms, End: 2000 * ms, Text: "hello there"}},
		replies: []string{"Hi, how can I help?"},
		tune: func(c *pipeline.Config) {
			c.LLM = &failingLLM{ScriptedLLM: c.LLM.(*standin.ScriptedLLM), failAfter: map[int]int{0: 1}}
		},
	}
	o := s.run(t)
	misses := o.of(pipeline.EvSpeculationMiss)
	require.Len(t, misses, 1)
	assert.Equal(t, "failed", misses[0].Reason)
	assert.Contains(t, misses[0].Err, "engine failure")
	assert.Empty(t, o.of(pipeline.EvError))
	done := o.of(pipeline.EvLLMDone)
	require.Len(t, done, 1)
	assert.Equal(t, "Hi, how can I help?", done[0].Text)
	assert.Len(t, o.of(pipeline.EvPlaybackStart), 1)
}

// notRollingBack hides the double's RollsBack: a generator that cannot
// take a reply back is never asked to speculate.
type notRollingBack struct{ gen pipeline.Generator }

func (n notRollingBack) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	return n.gen.Generate(ctx, conv, emit)
}

func TestNoSpeculationWithoutRollback(t *testing.T) {
	s := scenario{
		length:  5 * time.Second,
		user:    []standin.Utterance{{Start: 500 * ms, End: 2000 * ms, Text: "hello there"}},
		replies: []string{"Hi."},
		tune:    func(c *pipeline.Config) { c.LLM = notRollingBack{c.LLM} },
	}
	o := s.run(t)
	assert.Empty(t, o.of(pipeline.EvSpeculationStart))
	assert.Len(t, o.of(pipeline.EvPlaybackStart), 1)
}
