package pipeline_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/standin"
)

// command is a host command at an audio time, with room for its answer.
func command(at time.Duration, op pipeline.Op) (timed[pipeline.Command], chan error) {
	done := make(chan error, 1)
	return timed[pipeline.Command]{at: at, v: pipeline.Command{Op: op, Done: done}}, done
}

// The host's cancel cuts the reply as the stop key does, and is answered;
// with no reply going on it does nothing, and is answered too.
func TestHostCancelsTheReply(t *testing.T) {
	early, earlyDone := command(200*time.Millisecond, pipeline.OpCancel)
	cancel, cancelDone := command(2600*time.Millisecond, pipeline.OpCancel)
	s := scenario{
		length:   6 * time.Second,
		user:     []standin.Utterance{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a long story"}},
		replies:  []string{"Once upon a time there was a small robot who lived in a lighthouse by the sea."},
		commands: []timed[pipeline.Command]{early, cancel},
	}
	o := s.run(t)
	require.NoError(t, <-earlyDone)
	require.NoError(t, <-cancelDone)
	cuts := o.of(pipeline.EvBargeIn)
	require.Len(t, cuts, 1)
	assert.Equal(t, pipeline.ReasonStopKey, cuts[0].Reason)
	assert.Equal(t, 2600*time.Millisecond, cuts[0].At)
	var states []event.ReplyState
	for _, e := range o.of(pipeline.EvReplyState) {
		states = append(states, e.Reply)
	}
	assert.Contains(t, states, event.ReplyCancelled)
}

// Muted by the host, the assistant hears nothing: speech then opens no
// turn; unmuted, it hears the next. In English and Chinese.
func TestHostMutesTheMicrophone(t *testing.T) {
	for _, words := range [][2]string{{"are you listening", "now you can hear me"}, {"你在听吗", "现在能听到我吗"}} {
		mute, muteDone := command(200*time.Millisecond, pipeline.OpMute)
		unmute, unmuteDone := command(2*time.Second, pipeline.OpUnmute)
		s := scenario{
			length: 7 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: words[0]},
				{Start: 3 * time.Second, End: 4 * time.Second, Text: words[1]},
			},
			replies:  []string{"Yes."},
			commands: []timed[pipeline.Command]{mute, unmute},
		}
		o := s.run(t)
		require.NoError(t, <-muteDone)
		require.NoError(t, <-unmuteDone)
		assert.Equal(t, []string{words[1]}, texts(o.of(pipeline.EvTurnCommit)), "only what was said unmuted")
		for _, e := range o.of(pipeline.EvSpeechStart) {
			assert.GreaterOrEqual(t, e.At, 2*time.Second, "no speech heard while muted")
		}
	}
}

// A command the session cannot act on is answered with why.
func TestHostCommandErrors(t *testing.T) {
	bogus, bogusDone := command(100*time.Millisecond, "tlak")
	s := scenario{length: time.Second, commands: []timed[pipeline.Command]{bogus}}
	s.run(t)
	assert.ErrorContains(t, <-bogusDone, `"tlak" is not a command`)
}
