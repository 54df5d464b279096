package llm_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// filter runs pieces through a ThinkFilter and returns what it passed on.
func filter(t *testing.T, pieces []string) []string {
	t.Helper()
	var out []string
	f := llm.NewThinkFilter(func(p string) error {
		out = append(out, p)
		return nil
	})
	for _, p := range pieces {
		require.NoError(t, f.Write(p))
	}
	require.NoError(t, f.Flush())
	return out
}

// splits are the ways a reply can come in pieces that the test tries: cut
// in three (two, where a piece is empty) at every pair of places, and one
// character at a time. A tag can be cut anywhere; a character never is,
// since the engine's bytes are made whole characters before they are
// filtered (llm/mnn's stream).
func splits(s string) [][]string {
	var at []int // where a character starts
	for i := range s {
		at = append(at, i)
	}
	at = append(at, len(s))
	var out [][]string
	for a := range at {
		for b := a; b < len(at); b++ {
			out = append(out, []string{s[:at[a]], s[at[a]:at[b]], s[at[b]:]})
		}
	}
	var chars []string
	for _, r := range s {
		chars = append(chars, string(r))
	}
	return append(out, chars)
}

func TestThinkFilter(t *testing.T) {
	for _, tc := range []struct {
		name, reply, want string
	}{
		{"Qwen3's empty thinking, told /no_think", "<think>\n\n</think>\n\nHello! How can I help you today?", "Hello! How can I help you today?"},
		{"Qwen3's empty thinking, Chinese", "<think>\n\n</think>\n\n你好！今天有什么可以帮你的？", "你好！今天有什么可以帮你的？"},
		{"thinking then the reply", "<think>\nThe user greets me, so I greet back.\n</think>\n\nHi there.", "Hi there."},
		{"Chinese thinking then the reply", "<think>\n用户在打招呼，我应该友好地回应。\n</think>\n\n你好！很高兴见到你。", "你好！很高兴见到你。"},
		{"no thinking", "The weather is nice today.", "The weather is nice today."},
		{"no thinking, Chinese", "今天天气很好，适合出去走走。", "今天天气很好，适合出去走走。"},
		{"text before and after", "Sure. <think>what day is it</think> It is Monday.", "Sure. It is Monday."},
		{"Chinese before and after", "好的。<think>查一下日期</think>\n今天是星期一。", "好的。今天是星期一。"},
		{"two spans", "<think>a</think>One, <think>b</think>two.", "One, two."},
		{"unclosed at the end", "好的。<think>让我想想这个问题", "好的。"},
		{"nothing but unclosed thinking", "<think>\nLet me think about", ""},
		{"nothing after the thinking", "<think>\n\n</think>\n\n", ""},
		{"the start of a tag at the end is text", "Compare a <th", "Compare a <th"},
		{"angle brackets that are no tag", "1 < 2, <b>bold</b> and <thinking> stay.", "1 < 2, <b>bold</b> and <thinking> stay."},
		{"a tag's start inside thinking", "<think>x </th y</think>z", "z"},
		{"white space inside the reply stays", "<think></think>你好， 世界\n\n再见", "你好， 世界\n\n再见"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, pieces := range splits(tc.reply) {
				got := filter(t, pieces)
				require.Equal(t, tc.want, strings.Join(got, ""), "pieces %q", pieces)
				require.NotContains(t, got, "", "pieces %q: an empty piece passed on", pieces)
			}
		})
	}
}

// Text is passed on as it comes, but for what may start a tag: a reply is
// heard no later than without the filter.
func TestThinkFilterPassesTextAtOnce(t *testing.T) {
	var got []string
	f := llm.NewThinkFilter(func(p string) error { got = append(got, p); return nil })
	require.NoError(t, f.Write("<think>\n\n</think>\n\n你好"))
	assert.Equal(t, []string{"你好"}, got)
	require.NoError(t, f.Write("，a <"))
	assert.Equal(t, []string{"你好", "，a "}, got, "'<' waits for what follows")
	require.NoError(t, f.Write(" b"))
	assert.Equal(t, []string{"你好", "，a ", "< b"}, got)
}

func TestThinkFilterReturnsEmitsError(t *testing.T) {
	f := llm.NewThinkFilter(func(string) error { return assert.AnError })
	require.NoError(t, f.Write("<think>still thinking"), "nothing passed on")
	require.ErrorIs(t, f.Write("</think>Hi"), assert.AnError)

	f = llm.NewThinkFilter(func(string) error { return assert.AnError })
	require.NoError(t, f.Write("<"), "held: it may start a tag")
	require.ErrorIs(t, f.Flush(), assert.AnError)
}
