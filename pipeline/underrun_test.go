package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/normalize"
)

// lateChunkTTS is the tone double, taking delay on the clock before the
// chunk numbered late (from 1) of everything it is asked to speak: a
// synthesizer that falls behind playback there.
type lateChunkTTS struct {
	*standin.ToneTTS
	clk   clock.Clock
	late  int64
	delay time.Duration
	calls atomic.Int64
}

func (l *lateChunkTTS) Synthesize(ctx context.Context, text string, lang normalize.Language, emit func([]float32) error) error {
	if l.calls.Add(1) == l.late {
		if err := l.clk.Sleep(ctx, l.delay); err != nil {
			return err
		}
	}
	return l.ToneTTS.Synthesize(ctx, text, lang, emit)
}

// A replay says where a reply's playback ran dry: which reply, which of
// its chunks, how far into its audio and for how long, and whether the
// chunk had played whole before the next began (the next one's synthesis
// late) — in English and Chinese. A reply synthesized in time has none.
func TestReplayPlacesUnderrunGaps(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"en", "Sure, I can help with that. The weather will be sunny all day long."},
		{"zh", "好的，我来帮你查一下。明天全天都是晴天，气温二十度左右。"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(delay time.Duration) *pipeline.ReplayResult {
				s := scenario{
					length:  12 * time.Second,
					user:    []standin.Utterance{{Start: 500 * ms, End: 1500 * ms, Text: "what is the weather tomorrow"}},
					replies: []string{tc.reply},
					tune: func(c *pipeline.Config) {
						c.TTS = &lateChunkTTS{ToneTTS: standin.NewToneTTS(), clk: c.Clock, late: 2, delay: delay}
					},
				}
				return s.run(t).result
			}
			assert.Empty(t, run(0).Gaps, "a reply synthesized in time")
			assert.Zero(t, run(0).Underruns)

			res := run(2 * time.Second)
			require.NotEmpty(t, res.Gaps)
			g := res.Gaps[0]
			assert.Equal(t, 1, g.Reply)
			assert.Equal(t, 1, g.Chunk, "after the first chunk")
			assert.GreaterOrEqual(t, g.Chunks, 2)
			assert.True(t, g.Between, "the first chunk had played whole")
			assert.Positive(t, g.At, "into the reply's audio")
			assert.Greater(t, g.Length, time.Second, "the second chunk's 2 s late start, less the first chunk's audio")
			assert.NotZero(t, res.Underruns)
		})
	}
}
