package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// BenchmarkTurnOverhead is the orchestration cost of one full turn (VAD,
// endpointing, commit, generation, chunking, synthesis, playback and the
// event stream) with doubles that take no time, replayed on the virtual
// clock: everything it measures is pipeline overhead.
func BenchmarkTurnOverhead(b *testing.B) {
	const turns = 20
	var user []standin.Utterance
	var replies []string
	turnLen := 2 * time.Second
	for i := range turns {
		start := time.Duration(i)*turnLen + 200*time.Millisecond
		user = append(user, standin.Utterance{Start: start, End: start + 600*time.Millisecond, Text: fmt.Sprintf("question number %d", i)})
		replies = append(replies, "Sure thing.")
	}
	s := scenario{length: turns * turnLen, user: user, replies: replies, tokensPerSecond: -1}
	s.input = standin.Voice(s.length, s.user...)
	b.ReportAllocs()
	for b.Loop() {
		o := s.run(b)
		require.Len(b, o.of(pipeline.EvPlaybackStop), turns, "replies played")
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*turns), "us/turn")
}

// BenchmarkBargeIn measures, in audio time, how long playback keeps
// sounding after the decision to stop talking (the pause when the user's
// voice starts). On the virtual device that is one period by
// construction; BenchmarkLiveBargeInToSilence in test/ measures it
// through a real sound server.
func BenchmarkBargeIn(b *testing.B) {
	s := scenario{
		length: 6 * time.Second,
		user: []standin.Utterance{
			{Start: 200 * time.Millisecond, End: 800 * time.Millisecond, Text: "tell me a story"},
			{Start: 3 * time.Second, End: 3800 * time.Millisecond, Text: "stop"},
		},
		replies:         []string{"Once upon a time, there was a small robot who loved to sing songs about the sea and the sky.", "Okay."},
		tokensPerSecond: 20,
	}
	var worst time.Duration
	for b.Loop() {
		o := s.run(b)
		paused := o.of(pipeline.EvBargeInPending)
		require.Len(b, paused, 1, "pauses")
		require.Len(b, o.of(pipeline.EvBargeIn), 1, "barge-ins")
		worst = max(worst, o.silentAfter(paused[0].At)-paused[0].At)
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "ms-to-silence")
}

// silentAfter is the audio time from which the recording stays silent for
// at least 100 ms, searching from t.
func (o outcome) silentAfter(t time.Duration) time.Duration {
	const step = time.Millisecond
	for at := t; at < t+time.Second; at += step {
		if o.rms(at, at+100*time.Millisecond) == 0 {
			return at
		}
	}
	return t + time.Second
}

// BenchmarkTokenOverhead is the pipeline's cost per streamed token
// (event, chunker, hand-off to synthesis) on a long text-only reply.
func BenchmarkTokenOverhead(b *testing.B) {
	const words = 5000
	reply := strings.Repeat("word, and another word. ", words/4)
	s := scenario{
		length:          3 * time.Second,
		user:            []standin.Utterance{{Start: 200 * time.Millisecond, End: 800 * time.Millisecond, Text: "talk"}},
		replies:         []string{reply},
		tokensPerSecond: -1,
		noTTS:           true,
	}
	s.input = standin.Voice(s.length, s.user...)
	for b.Loop() {
		o := s.run(b)
		require.Len(b, o.of(pipeline.EvLLMPiece), words, "pieces")
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*words), "us/token")
}
