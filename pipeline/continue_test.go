package pipeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/standin"
)

// sentence is one sentence said in pieces, with pauses between them, and
// joined as the user message should hold it.
type sentence struct {
	lang   string
	pieces []string
	whole  string
}

var pausedSentences = []sentence{
	{"en", []string{"can you tell me", "about the weather", "in paris tomorrow"}, "can you tell me about the weather in paris tomorrow"},
	// The recognizer writes Chinese without spaces: each piece is one
	// word to the scripted recognizer.
	{"zh", []string{"请告诉我", "明天巴黎", "的天气"}, "请告诉我明天巴黎的天气"},
}

// said is the pieces as utterances from start, each 1 s long and 400 ms
// apart: pauses long enough for the VAD to end the speech and the turn
// detector to be asked, and shorter than the pre-roll, which would give
// the recognizer the piece before again.
func (s sentence) said(start time.Duration) []standin.Utterance {
	var out []standin.Utterance
	for i, p := range s.pieces {
		at := start + time.Duration(i)*1400*time.Millisecond
		out = append(out, standin.Utterance{Start: at, End: at + time.Second, Text: p})
	}
	return out
}

// userMessages is the history's user messages.
func userMessages(h *llm.History) []string {
	var out []string
	for _, m := range h.Messages() {
		if m.Role == llm.User {
			out = append(out, m.Content)
		}
	}
	return out
}

// A turn detector that says "complete" at every pause inside a sentence
// (bug: one eight-word sentence became three commits, A / A B C /
// C D E F G H, and the history held three user messages and two cut
// replies): the user goes on within the continuation window, before the
// reply was heard or after its first word, so every word is committed
// once, in order, and the history holds the sentence once, as one
// message, which the last reply answers.
func TestContinuationJoinsTheTurn(t *testing.T) {
	for _, sn := range pausedSentences {
		for _, tc := range []struct {
			name       string
			firstToken time.Duration
		}{
			{"nothing heard", 600 * time.Millisecond},
			// Speculated at the pause, the reply plays from the commit,
			// and 290 ms of it are out when the user goes on.
			{"a word heard", 100 * time.Millisecond},
		} {
			t.Run(sn.lang+" "+tc.name, func(t *testing.T) {
				var history *llm.History
				s := scenario{
					length:  8 * time.Second,
					user:    sn.said(500 * time.Millisecond),
					replies: []string{"Let me look that up for you."},
					tune: func(c *pipeline.Config) {
						c.Turn = &standin.ScriptedTurn{Probs: []float64{0.9}}
						c.LLM.(*standin.ScriptedLLM).FirstToken = tc.firstToken
						history = c.History
					},
				}
				o := s.run(t)
				// The turn is committed again as it grows, as the same turn,
				// shown whole each time.
				var growing []string
				for i := range sn.pieces {
					growing = append(growing, listen.JoinWords(strings.Join(growing[max(i-1, 0):i], ""), sn.pieces[i]))
				}
				commits := o.of(pipeline.EvTurnCommit)
				assert.Equal(t, growing, texts(commits))
				for _, c := range commits {
					assert.Equal(t, 1, c.Turn, "one turn, committed %d times", len(commits))
				}
				assert.Len(t, o.of(pipeline.EvTurnContinued), len(sn.pieces)-1, "each early commit continued")
				assert.Empty(t, o.of(pipeline.EvBargeIn))
				assertDroppedRepliesSilent(t, o.events, len(sn.pieces)-1)
				// Only the reply that answered the whole sentence is a turn:
				// a dropped one is no barge-in, and has no metrics.
				assert.Len(t, o.result.Metrics, 1)
				assert.Zero(t, pipeline.Summarize(o.result.Metrics).Interrupted, "a continued turn is not a barge-in")
				assert.Equal(t, []string{sn.whole}, userMessages(history), "the sentence once, whole")
				convs := o.llm.Conversations()
				require.NotEmpty(t, convs)
				last := convs[len(convs)-1]
				assert.Equal(t, sn.whole, last[len(last)-1].Content, "the last reply answers the whole sentence")
				for _, m := range history.Messages() {
					assert.False(t, m.Role == llm.Assistant && m.Interrupted, "no dropped reply remembered")
				}
			})
		}
	}
}

// assertDroppedRepliesSilent checks that want replies were dropped as
// their turn was continued, and that nothing of a dropped reply was
// published after its drop: not its text, its audio, its end or its
// metrics, until the next reply to the same turn started.
func assertDroppedRepliesSilent(t *testing.T, events []pipeline.Event, want int) {
	t.Helper()
	silent := map[int]bool{}
	drops := 0
	for _, e := range events {
		switch e.Type {
		case pipeline.EvReplyState:
			silent[e.Turn] = e.Reply == event.ReplyDropped
			if e.Reply == event.ReplyDropped && e.Reason == reply.DropContinued {
				drops++
			}
		case pipeline.EvLLMPiece, pipeline.EvTTSChunk, pipeline.EvLLMDone, pipeline.EvPlaybackStart,
			pipeline.EvPlaybackStop, pipeline.EvTurnMetrics:
			assert.False(t, silent[e.Turn], "%s of turn %d's reply after it was dropped (%q)", e.Type, e.Turn, e.Text)
		}
	}
	assert.Equal(t, want, drops, "replies dropped for a continuation")
}

// Without continuation the same sentence is answered piece by piece; what
// the test above checks would fail.
func TestContinuationOffCommitsEachPiece(t *testing.T) {
	sn := pausedSentences[0]
	s := scenario{
		length:  8 * time.Second,
		user:    sn.said(500 * time.Millisecond),
		replies: []string{"Let me look that up for you."},
		tune: func(c *pipeline.Config) {
			c.Turn = &standin.ScriptedTurn{Probs: []float64{0.9}}
			c.Continue.Window = 0
		},
	}
	o := s.run(t)
	assert.Empty(t, o.of(pipeline.EvTurnContinued))
	committed := texts(o.of(pipeline.EvTurnCommit))
	// Even so, no word is recognized twice: a turn's pre-roll stops at
	// the audio the commit before it took.
	assert.Equal(t, sn.pieces, committed)
}

// A question asked 2 s after the reply to the last one ended, or said
// over a reply heard for a second, is not a continuation.
func TestNewSpeechAfterTheReplyIsItsOwnTurn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		second  time.Duration // when the second question starts
		bargeIn bool
	}{
		// The first question is committed at 2.2 s, and its reply plays
		// from 2.21 s to 4.92 s.
		{"2 s after the reply", 7000 * time.Millisecond, false},
		{"over a reply heard for 1 s, within the window", 3200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var history *llm.History
			s := scenario{
				length: 10 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "what time is it"},
					{Start: tc.second, End: tc.second + time.Second, Text: "and in tokyo"},
				},
				replies: []string{"It is noon here, in the middle of the day.", "It is night there."},
				tune:    func(c *pipeline.Config) { history = c.History },
			}
			o := s.run(t)
			require.NotEmpty(t, o.of(pipeline.EvPlaybackStop))
			assert.Empty(t, o.of(pipeline.EvTurnContinued))
			assert.Len(t, o.of(pipeline.EvBargeIn), map[bool]int{true: 1}[tc.bargeIn])
			users := userMessages(history)
			assert.Equal(t, []string{"what time is it", "and in tokyo"}, users)
		})
	}
}
