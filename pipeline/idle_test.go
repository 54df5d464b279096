package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/standin"
)

// prefillingLLM is the scripted LLM with a Prefill (a stand-in) that
// records the conversations it is given and, like a long prefill, runs
// until it is cancelled.
type prefillingLLM struct {
	*standin.ScriptedLLM
	mu        sync.Mutex
	prefills  [][]llm.Message
	cancelled int
}

func (g *prefillingLLM) Prefill(ctx context.Context, conv []llm.Message) (llm.Stats, error) {
	g.mu.Lock()
	g.prefills = append(g.prefills, slices.Clone(conv))
	g.mu.Unlock()
	<-ctx.Done()
	g.mu.Lock()
	g.cancelled++
	g.mu.Unlock()
	return llm.Stats{}, ctx.Err()
}

// While the assistant is idle the conversation is given to the generator
// to prefill: after every reply the history as the next turn's prompt
// starts (trimmed already where the reply took it past three quarters of
// its budget), but not while the user speaks (after a barge-in), when the
// listening path has the cores. Each is the start of a later prompt. The
// user's speech or the next response cancels it, and so does the
// session's end, which waits for it (goleak).
func TestConversationIsPrefilledWhileIdle(t *testing.T) {
	tests := []struct {
		name      string
		questions []string
		replies   []string
		budget    int
		// bargeIn: the second question is asked over the first reply.
		bargeIn bool
	}{
		{"en", []string{"first question", "second question", "third question"}, []string{"First answer.", "Second answer.", "Third answer."}, 60, false},
		{"zh", []string{"第一个问题是什么", "第二个问题是什么", "第三个问题是什么"}, []string{"这是第一个回答。", "这是第二个回答。", "这是第三个回答。"}, 40, false},
		{"en barge-in", []string{"tell me a story", "stop please", "thanks"}, []string{"Once upon a time there was a small robot who loved to sing every morning on the hill.", "Okay.", "You are welcome."}, 0, true},
		{"zh barge-in", []string{"给我讲个故事", "停一下", "谢谢"}, []string{"从前有一个小机器人，它每天早上都爬到村后的小山上，对着太阳唱歌。", "好的。", "不客气。"}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := scenario{length: 12 * time.Second, replies: tc.replies}
			starts := []time.Duration{300 * time.Millisecond, 3500 * time.Millisecond, 8 * time.Second}
			if tc.bargeIn {
				s.tokensPerSecond = 10
				starts[1] = 2500 * time.Millisecond
			}
			gen := replayQuestions(t, s, tc.questions, starts, tc.budget)

			convs := gen.Conversations()
			require.Len(t, convs, 3)
			assert.Equal(t, len(gen.prefills), gen.cancelled, "each cancelled, by the next response or the session's end")
			for i, pre := range gen.prefills[:len(gen.prefills)-1] {
				assert.Equal(t, llm.Assistant, pre[len(pre)-1].Role, "prefill %d, %v, after a reply", i, pre)
				assert.True(t, slices.ContainsFunc(convs, func(c []llm.Message) bool { return startsWith(c, pre) }), "prefill %d, %v, starts no later prompt", i, pre)
			}
			final := gen.prefills[len(gen.prefills)-1]
			assert.Equal(t, llm.Message{Role: llm.Assistant, Content: tc.replies[2]}, final[len(final)-1], "after the last reply")
			if tc.bargeIn {
				// Not after the story, cut short by the user's words, nor
				// while they were spoken; after the replies that ended.
				require.Len(t, gen.prefills, 2)
				assert.Equal(t, llm.Message{Role: llm.Assistant, Content: tc.replies[1]}, gen.prefills[0][len(gen.prefills[0])-1])
			} else {
				require.Len(t, gen.prefills, 3, "after each reply")
				// The second reply took the history past three quarters of
				// its budget: the first exchange was dropped then, not at
				// the third question.
				assert.Contains(t, gen.prefills, []llm.Message{{Role: llm.System, Content: "sys"},
					{Role: llm.User, Content: tc.questions[1]}, {Role: llm.Assistant, Content: tc.replies[1]}})
			}
		})
	}
}

// startsWith says whether a prompt of conv starts with the one of pre: the
// same messages, but for pre's last one, a user message, which conv's may
// go on from.
func startsWith(conv, pre []llm.Message) bool {
	n := len(pre)
	if len(conv) < n || !slices.Equal(conv[:n-1], pre[:n-1]) {
		return false
	}
	last := pre[n-1]
	if last.Role != llm.User {
		return conv[n-1] == last
	}
	return conv[n-1].Role == llm.User && strings.HasPrefix(conv[n-1].Content, last.Content)
}

// A reply the user speaks over leaves no idle spell to prefill a trimmed
// history in: the history is trimmed then only past its whole budget, so
// the next prompt still extends the one the KV cache holds, while a
// reply heard to its end, the assistant idle after it, trims from three
// quarters. The second reply is cut by the third question, which the
// first exchange still starts; after the third reply, which ends, it goes.
func TestHistoryTrimmedOnlyWhereIdleFollows(t *testing.T) {
	tests := []struct {
		name      string
		questions []string
		replies   []string
		// budget: the cut reply ("Once upon", "从前有一") takes the
		// history past three quarters of it, the third question not past
		// the whole.
		budget int
	}{
		{"en", []string{"first question", "tell me a story", "thanks"}, []string{"First answer.", "Once upon a time there was a small robot who loved to sing every morning on the hill.", "You are welcome."}, 60},
		{"zh", []string{"第一个问题是什么", "给我讲个故事", "谢谢"}, []string{"这是第一个回答。", "从前有一个小机器人，它每天早上都爬到村后的小山上，对着太阳唱歌。", "不客气。"}, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := scenario{length: 12 * time.Second, replies: tc.replies, tokensPerSecond: 10}
			starts := []time.Duration{300 * time.Millisecond, 3500 * time.Millisecond, 6 * time.Second}
			gen := replayQuestions(t, s, tc.questions, starts, tc.budget)
			convs := gen.Conversations()
			require.Len(t, convs, 3)
			third := convs[2]
			cut := third[len(third)-2]
			require.True(t, cut.Role == llm.Assistant && cut.Interrupted, "the story was cut: %v", third)
			assert.Equal(t, llm.Message{Role: llm.User, Content: tc.questions[0]}, third[1], "the first exchange kept after the cut reply: %v", third)
			require.NotEmpty(t, gen.prefills)
			assert.Equal(t, []llm.Message{{Role: llm.System, Content: "sys"}, {Role: llm.User, Content: tc.questions[2]},
				{Role: llm.Assistant, Content: tc.replies[2]}}, gen.prefills[len(gen.prefills)-1], "trimmed after the last reply, idle after it")
		})
	}
}

// replayQuestions replays s with the questions asked at starts, each
// 700 ms long, to the prefilling double, with a history of budget
// characters.
func replayQuestions(t *testing.T, s scenario, questions []string, starts []time.Duration, budget int) *prefillingLLM {
	t.Helper()
	for i, q := range questions {
		s.user = append(s.user, standin.Utterance{Start: starts[i], End: starts[i] + 700*time.Millisecond, Text: q})
	}
	clk := clock.NewVirtual()
	cfg, scripted := s.config(clk)
	gen := &prefillingLLM{ScriptedLLM: scripted}
	cfg.LLM = gen
	cfg.History = llm.NewHistory("sys", budget)
	_, err := replay(t, clk, cfg, audio.VirtualConfig{Input: standin.Voice(s.length, s.user...)}, nil)
	require.NoError(t, err)
	return gen
}
