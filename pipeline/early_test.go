package pipeline_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// forking makes the scenario's recognizer one that forks, its partials a
// word behind as X-ASR's are, its forks delay long on the clock.
func forking(s *scenario, delay time.Duration) **standin.ForkingASR {
	var asr *standin.ForkingASR
	s.tune = func(c *pipeline.Config) {
		scripted := c.ASR.(*standin.ScriptedASR)
		scripted.PartialLag = 400 * ms
		asr = &standin.ForkingASR{ScriptedASR: scripted, Clock: c.Clock, Delay: delay}
		c.ASR = asr
	}
	return &asr
}

// oneQuestion is a replay of length with one spoken question, its speech
// ending at 2 s.
func oneQuestion(length time.Duration) scenario {
	return scenario{
		length:  length,
		user:    []standin.Utterance{{Start: 500 * ms, End: 2000 * ms, Text: "what is the weather today"}},
		replies: []string{"It is sunny and warm today."},
	}
}

// The recognizer is copied when the VAD ends the speech, and the copy
// finalized at once: the speculative reply to the partial, which lacks
// the last word, is restarted with the copy's transcript before the
// commit, and the commit takes that transcript without finalizing the
// recognizer.
func TestEarlyFinalTranscript(t *testing.T) {
	s := oneQuestion(6 * time.Second)
	asr := forking(&s, 0)
	o := s.run(t)
	// The partials behind the speech restart the speculation until the
	// copy's transcript does, before the partial has the last word (400 ms
	// after the speech).
	starts := o.of(pipeline.EvSpeculationStart)
	require.NotEmpty(t, starts)
	last := starts[len(starts)-1]
	assert.Equal(t, "what is the weather today", last.Text)
	ends := o.of(pipeline.EvSpeechEnd)
	require.Len(t, ends, 1)
	assert.Equal(t, ends[0].At, last.At, "as the copy's transcript is in, with the VAD's end of speech")
	for _, m := range o.of(pipeline.EvSpeculationMiss) {
		assert.Equal(t, "transcript_changed", m.Reason)
	}
	assert.Equal(t, []string{"what is the weather today"}, texts(o.of(pipeline.EvTurnCommit)))
	assert.Len(t, o.of(pipeline.EvSpeculationHit), 1)
	assert.Equal(t, int32(1), (*asr).Forked.Load(), "one copy finalized")
	// The energy VAD ends speech 200 ms into the quiet: the copy pads
	// that much less.
	assert.InDelta(t, 200*ms, (*asr).ForkQuiet, float64(20*ms))
	assert.Empty(t, (*asr).Quiet, "the recognizer itself was never finalized")
	// Nor given the quiet after the copy was made: its compute would
	// compete with the copy's and the reply's.
	assert.LessOrEqual(t, (*asr).Heard, ends[0].At)
	assert.Zero(t, (*asr).Stopped.Load())
}

// A copy that takes longer than the endpointing wait holds the commit
// until its transcript is in.
func TestCommitWaitsForTheEarlyFinal(t *testing.T) {
	const delay = 1500 * ms
	s := oneQuestion(7 * time.Second)
	asr := forking(&s, delay)
	o := s.run(t)
	commits := o.of(pipeline.EvTurnCommit)
	require.Len(t, commits, 1)
	assert.Equal(t, "what is the weather today", commits[0].Text)
	ends := o.of(pipeline.EvSpeechEnd)
	require.NotEmpty(t, ends)
	assert.GreaterOrEqual(t, commits[0].At, ends[0].At+delay, "after the copy's transcript")
	m := o.result.Metrics[0]
	assert.Less(t, m.Commit, m.ASRFinal-delay/2, "decided long before")
	assert.Empty(t, (*asr).Quiet)
}

// Speech that resumes while the commit waits for the copy drops both: no
// word of the turn is lost, and it is committed once, whole.
func TestSpeechWhileTheCommitWaitsGoesOnTheTurn(t *testing.T) {
	s := scenario{
		length: 8 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * ms, End: 1500 * ms, Text: "what is the"},
			// After the 700 ms that commit without a turn model, before
			// the copy made at the VAD's end of speech is in.
			{Start: 2400 * ms, End: 3400 * ms, Text: "weather today"},
		},
		replies: []string{"It is sunny and warm today.", "Never used."},
	}
	asr := forking(&s, 1500*ms)
	o := s.run(t)
	assert.Equal(t, []string{"what is the weather today"}, texts(o.of(pipeline.EvTurnCommit)))
	require.Len(t, o.result.Metrics, 1)
	assert.Greater(t, o.result.Metrics[0].Commit, 3400*ms, "decided after the whole turn")
	assert.Equal(t, int32(1), (*asr).Stopped.Load(), "the copy made at the first end of speech, stopped as the speech resumed")
	assert.Equal(t, int32(1), (*asr).Forked.Load(), "the copy made at the second")
}

// A copy that fails leaves the commit to the recognizer, given the quiet
// it missed while it waited.
func TestFailedCopyLeavesTheFinalToTheRecognizer(t *testing.T) {
	s := oneQuestion(6 * time.Second)
	asr := forking(&s, 300*ms)
	tune := s.tune
	s.tune = func(c *pipeline.Config) {
		tune(c)
		(*asr).Fail = errors.New("out of memory")
	}
	o := s.run(t)
	assert.Equal(t, []string{"what is the weather today"}, texts(o.of(pipeline.EvTurnCommit)))
	require.Len(t, (*asr).Quiet, 1, "the recognizer finalized")
	assert.GreaterOrEqual(t, (*asr).Quiet[0], 600*ms, "after the whole endpointing wait's quiet")
}
