package app

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/chunk"
)

// numberedLLM is a stand-in generator that ends each reply with its
// number, so that every reply's text is its own.
type numberedLLM struct {
	*standin.ScriptedLLM
	calls atomic.Int32
}

func (g *numberedLLM) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	n := g.calls.Add(1)
	st, err := g.ScriptedLLM.Generate(ctx, conv, emit)
	if err != nil {
		return st, err
	}
	return st, emit(fmt.Sprintf(" #%d", n))
}

// The real pipeline, a sentence said in three pieces with pauses the
// turn detector calls complete, and the window folding its events: the
// turn is continued twice, and the window shows one user entry with the
// whole sentence and one reply, the last; no text of a dropped reply, and
// no barge-in in the latency summary. In English and in Chinese.
func TestContinuedTurnShowsOnlyTheLastReply(t *testing.T) {
	for _, tc := range []struct {
		pieces []string
		whole  string
	}{
		{[]string{"can you tell me", "about the weather", "in paris tomorrow"}, "can you tell me about the weather in paris tomorrow"},
		{[]string{"请告诉我", "明天巴黎", "的天气"}, "请告诉我明天巴黎的天气"},
	} {
		t.Run(tc.whole, func(t *testing.T) {
			var said []standin.Utterance
			for i, p := range tc.pieces {
				at := 500*time.Millisecond + time.Duration(i)*1400*time.Millisecond
				said = append(said, standin.Utterance{Start: at, End: at + time.Second, Text: p})
			}
			clk := clock.NewVirtual()
			cfg := pipeline.DefaultConfig()
			cfg.VAD = standin.NewEnergyVAD()
			cfg.ASR = &standin.ScriptedASR{Script: said}
			cfg.Turn = &standin.ScriptedTurn{Probs: []float64{0.9}}
			gen := &numberedLLM{ScriptedLLM: &standin.ScriptedLLM{Clock: clk, Replies: []string{"Let me look that up."},
				FirstToken: 100 * time.Millisecond, TokensPerSecond: 50}}
			cfg.LLM = gen
			cfg.NewChunker = func() pipeline.Chunker { return chunk.New(chunk.DefaultConfig()) }
			cfg.TTS = standin.NewToneTTS()
			cfg.History = llm.NewHistory("", 0)

			var m Model
			var events []event.Event
			// The ends of the replies as published, and those of the
			// replies dropped since: the window must not show one, at any
			// point after its drop.
			ends, dropped := map[int]string{}, []string{}
			res, err := pipeline.Replay(context.Background(), clk, cfg,
				audio.VirtualConfig{Input: standin.Voice(8*time.Second, said...), Stall: 5 * time.Second},
				func(e event.Event) {
					events = append(events, e)
					m.Apply(e)
					switch {
					case e.Type == event.EvLLMPiece && strings.HasPrefix(e.Text, " #"):
						ends[e.Turn] = e.Text
					case e.Type == event.EvReplyState && e.Reply == event.ReplyDropped && ends[e.Turn] != "":
						dropped = append(dropped, ends[e.Turn])
					}
					for _, d := range dropped {
						assert.NotContains(t, m.Transcript(), d, "a dropped reply's text is shown after %s", e.Type)
					}
				})
			require.NoError(t, err)
			require.Len(t, filter(events, event.EvTurnContinued), len(tc.pieces)-1, "each early commit continued")

			var users, replies []Entry
			for _, e := range m.Entries {
				if e.Role == User {
					users = append(users, e)
				} else {
					replies = append(replies, e)
				}
			}
			require.Len(t, users, 1, "%+v", m.Entries)
			assert.Equal(t, tc.whole, users[0].Text)
			require.Len(t, replies, 1, "%+v", m.Entries)
			done := filter(events, event.EvLLMDone)
			last := done[len(done)-1].Text
			assert.Equal(t, last, replies[0].Text, "the reply to the whole sentence")
			require.NotEmpty(t, dropped, "no dropped reply had its text out: the test checks nothing")
			assert.Equal(t, 1, m.Summary().Turns)
			assert.Zero(t, m.Summary().Interrupted, "a continued turn is not a barge-in")
			assert.Len(t, res.Metrics, 1)
		})
	}
}

func filter(events []event.Event, typ event.EventType) []event.Event {
	var out []event.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
