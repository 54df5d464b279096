package pipeline_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// commitsWithTurn replays s with det as the turn model and returns its
// turn commits.
func commitsWithTurn(t *testing.T, s scenario, det pipeline.TurnDetector) []pipeline.Event {
	t.Helper()
	clk := clock.NewVirtual()
	cfg, _ := s.config(clk)
	cfg.Turn = det
	var commits []pipeline.Event
	_, err := replay(t, clk, cfg, audio.VirtualConfig{Input: standin.Voice(s.length, s.user...)},
		func(e pipeline.Event) {
			if e.Type == pipeline.EvTurnCommit {
				commits = append(commits, e)
			}
		})
	require.NoError(t, err)
	return commits
}

func TestTurnDetectorDecides(t *testing.T) {
	user := []standin.Utterance{
		{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "I would like"},
		{Start: 2 * time.Second, End: 3 * time.Second, Text: "a cup of tea"},
	}
	for _, tc := range []struct {
		name    string
		probs   []float64
		commits []string
		reason  string
		at      time.Duration // commit time
	}{
		// The pause after "I would like" is judged incomplete; the next
		// one complete, so both parts make one turn, committed as soon as
		// the VAD reports the second pause (200 ms of silence).
		{"incomplete then complete", []float64{0.2, 0.9}, []string{"I would like a cup of tea"}, "complete", 3200 * time.Millisecond},
		// Never judged complete: the silence fallback commits 3 s after
		// the speech ended.
		{"fallback", []float64{0.1}, []string{"I would like a cup of tea"}, "fallback", 6 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			det := &standin.ScriptedTurn{Probs: tc.probs}
			commits := commitsWithTurn(t, scenario{length: 8 * time.Second, user: user, replies: []string{"Sure."}}, det)
			require.Len(t, commits, len(tc.commits))
			assert.Equal(t, tc.commits[0], commits[0].Text)
			assert.Equal(t, tc.reason, commits[0].Reason)
			assert.Equal(t, tc.at, commits[0].At)
			require.Len(t, det.Lens, 2, "one prediction per pause")
			// The turn audio starts with the pre-roll before the first speech.
			assert.Equal(t, int(audio.Mono16k.Samples(1700*time.Millisecond)), det.Lens[0])
		})
	}
}

// The turn model hears 500 ms before the speech, as pipecat gives Smart
// Turn (pipecat-ai/pipecat src/pipecat/audio/turn/smart_turn/base_smart_turn.py:28,215-221:
// pre_speech_ms 500), not the recognizer's whole 700 ms pre-roll.
func TestTurnModelHearsHalfASecondBeforeTheSpeech(t *testing.T) {
	for _, lang := range []struct {
		name string
		text string
	}{{"en", "what time is it"}, {"zh", "现在几点了"}} {
		t.Run(lang.name, func(t *testing.T) {
			user := []standin.Utterance{{Start: 2 * time.Second, End: 3 * time.Second, Text: lang.text}}
			det := &standin.ScriptedTurn{Probs: []float64{0.9}}
			commits := commitsWithTurn(t, scenario{length: 5 * time.Second, user: user, replies: []string{"Sure."}}, det)
			require.Len(t, commits, 1)
			assert.Equal(t, lang.text, commits[0].Text)
			require.Len(t, det.Lens, 1)
			// From 500 ms before the speech to the 200 ms pause that asks.
			assert.Equal(t, int(audio.Mono16k.Samples(1700*time.Millisecond)), det.Lens[0])
		})
	}
}

// The recognizer is told how much quiet it was given after the speech,
// the endpointing wait, which a recognizer that pads need not pad again.
func TestFinalTranscriptAfterTheEndpointingWait(t *testing.T) {
	var asr *standin.ScriptedASR
	s := scenario{
		length:  4 * time.Second,
		user:    []standin.Utterance{{Start: 500 * time.Millisecond, End: 2 * time.Second, Text: "what is the weather today"}},
		replies: []string{"Sunny."},
		tune:    func(c *pipeline.Config) { asr = c.ASR.(*standin.ScriptedASR) },
	}
	o := s.run(t)
	require.Len(t, o.result.Metrics, 1)
	require.Len(t, asr.Quiet, 1)
	wait := o.result.Metrics[0].EndpointingMS
	require.Positive(t, wait)
	assert.InDelta(t, wait, float64(asr.Quiet[0])/float64(time.Millisecond), 20, "quiet given to the ASR (ms) against the endpointing wait")
}

// X-ASR closes its final transcripts with a full stop its partials never
// have: a reply speculated on the partial still answers the turn, and the
// history keeps the words the LLM was given.
func TestSpeculationHitsDespiteTheFinalStop(t *testing.T) {
	s := scenario{
		length:  9 * time.Second,
		user:    weatherQuestions,
		replies: []string{"It is sunny today.", "Tomorrow it will rain."},
		tune:    func(c *pipeline.Config) { c.ASR.(*standin.ScriptedASR).FinalStop = "." },
	}
	o := s.run(t)
	assert.Len(t, o.of(pipeline.EvSpeculationHit), 2)
	assert.Empty(t, o.of(pipeline.EvSpeculationMiss))
	commits := o.of(pipeline.EvTurnCommit)
	require.Len(t, commits, 2)
	assert.Equal(t, "what is the weather today.", commits[0].Text, "the final transcript, as the recognizer gave it")
	convs := o.llm.Conversations()
	require.Len(t, convs, 2)
	assert.Equal(t, llm.Message{Role: llm.User, Content: "what is the weather today"}, convs[1][1])
}
