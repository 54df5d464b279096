//go:build mnn

package mnn

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// questions of a long conversation, in English and Chinese, a few words
// to two sentences.
var questions = []string{
	"What's the weather like in Paris tomorrow?",
	"明天北京会下雨吗？",
	"I'm planning a trip to Japan next spring with my two kids. Which cities would you suggest?",
	"帮我定一个十分钟的计时器。",
	"How far away is the moon?",
	"我最近睡得不太好，晚上总是醒好几次。你有什么简单的建议吗？",
}

// qwen3Export is the tiny model with Qwen3's chat template (see
// TestQwen3TemplateThinksOnlyWhenTold): its prompt ends in an empty think
// block, which it renders in no earlier reply.
func qwen3Export(t *testing.T) string {
	template, err := os.ReadFile(filepath.Join("testdata", "qwen3_chat_template.jinja"))
	require.NoError(t, err)
	return tinyExport(t, map[string]map[string]any{"llm_config.json": {"jinja": map[string]any{"chat_template": string(template), "eos": "<|im_end|>"}}})
}

func openExport(t *testing.T, dir string, maxTokens int) *Model {
	m, err := Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: maxTokens})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	m.batch = minPrefill
	return m
}

// A long conversation prefills at each turn only its new user turn and the
// template's own tokens (and what rounds them up to whole batches), with
// either template and past every trim of the history: after each reply the
// conversation up to the next user turn is prefilled while the assistant
// is idle (Prefill), as the template renders it then, without the think
// block the reply was generated after, and from its new start where the
// reply took the history past its budget; with the user's words so far
// (a partial transcript), and the reply prefills little more than the template's
// tokens after them. Nothing of that changes a reply: the last one is what
// an engine that never held the conversation gives.
func TestLongConversationPrefillsOnlyTheNewTurn(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(*testing.T) string
	}{
		{"chatml", func(t *testing.T) string { return tinyExport(t, nil) }},
		{"qwen3", qwen3Export},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			m := openExport(t, dir, 16)
			ctx := context.Background()
			history := llm.NewHistory("you are a test", 400)
			trims, idlePrefilled := 0, 0
			var reply string
			var conv []llm.Message
			for turn := range 40 {
				idle, err := m.Prefill(ctx, history.Messages())
				require.NoError(t, err)
				if turn > 0 && trims > 0 {
					idlePrefilled = max(idlePrefilled, idle.PromptTokens-idle.CachedTokens)
				}
				// The words so far, as a partial transcript has them
				// (without the final one's closing punctuation).
				question := questions[turn%len(questions)]
				spoken, err := m.Prefill(ctx, history.WithUser(strings.TrimRightFunc(question, unicode.IsPunct)))
				require.NoError(t, err)
				history.AddUser(question)
				conv = history.Messages()
				var st llm.Stats
				reply, st, err = generate(t, m, ctx, conv, 0, nil)
				require.NoError(t, err)
				fresh := st.PromptTokens - idle.PromptTokens // the user turn and the template's tokens around it
				prefilled := st.PromptTokens - st.CachedTokens
				t.Logf("turn %2d: prompt %3d tokens, %3d prefilled while idle (%3d of them held), %3d as spoken, %3d new, %3d prefilled", turn+1, st.PromptTokens, idle.PromptTokens, idle.CachedTokens, spoken.PromptTokens, fresh, prefilled)
				assert.Positive(t, fresh, "turn %d", turn+1)
				assert.LessOrEqual(t, prefilled, fresh+32, "turn %d: only the new turn is prefilled", turn+1)
				// The words' tokens but the last two (which may part
				// from the final transcript's) are held; the batch rounds
				// down where the prefill starts.
				assert.GreaterOrEqual(t, st.CachedTokens, spoken.PromptTokens-2-m.batch, "turn %d: what was prefilled as the user spoke is kept", turn+1)
				if history.AddAssistant(reply, false) > 0 {
					trims++
				}
			}
			require.GreaterOrEqual(t, trims, 3, "the history was trimmed")
			assert.Greater(t, idlePrefilled, 3*m.batch, "a trimmed history was prefilled again while idle")

			again, _, err := generate(t, openExport(t, dir, 16), ctx, conv, 0, nil)
			require.NoError(t, err)
			assert.Equal(t, again, reply)
		})
	}
}

// The prefill of the next prompt's start stops within one batch of its
// ctx's cancellation (the user's next turn wants the engine), and the
// reply after it starts from what it ran.
func TestIdlePrefillStopsWithinOneBatch(t *testing.T) {
	m := openTiny(t, 8)
	conv := []llm.Message{hello[0], {Role: llm.User, Content: strings.Repeat("tell me about the river bank ", 30)}, {Role: llm.Assistant, Content: "It is green."}}
	// Err is asked once as the engine is taken, then before each batch.
	st, err := m.Prefill(&cancelAfter{Context: context.Background(), n: 3}, conv)
	require.ErrorIs(t, err, context.Canceled)
	assert.Greater(t, st.PromptTokens, 4*m.batch, "a long conversation")

	next := append(slices.Clone(conv), llm.Message{Role: llm.User, Content: "and then"})
	_, st, err = generate(t, m, context.Background(), next, 0, nil)
	require.NoError(t, err)
	assert.Positive(t, st.CachedTokens)
	assert.LessOrEqual(t, st.CachedTokens, m.batch)
}

// Prefilling what the cache holds already runs nothing.
func TestIdlePrefillOfAHeldStartRunsNothing(t *testing.T) {
	m := openTiny(t, 8)
	for i := range 2 {
		st, err := m.Prefill(context.Background(), hello[:1])
		require.NoError(t, err)
		if i == 1 {
			assert.Equal(t, st.PromptTokens, st.CachedTokens)
			assert.Zero(t, st.Prefill)
		}
	}
}

// The template's tokens after the user's words, which a reply prefills
// after its words were prefilled as they were spoken: ChatML's end of the
// user's turn and start of the assistant's, and Qwen3's empty think block
// after them (5 and 9 tokens with MNN-Pocket's tokenizer; the tiny
// model's knows no special tokens). The model's batch holds them and
// tailSlack more, so that the reply's first token waits for one prefill
// call.
func TestBatchHoldsTheTemplatesTail(t *testing.T) {
	const chatml = "<|im_end|>\n<|im_start|>assistant\n"
	for _, tc := range []struct {
		name string
		dir  func(*testing.T) string
		tail string
	}{
		{"chatml", func(t *testing.T) string { return tinyExport(t, nil) }, chatml},
		{"qwen3", qwen3Export, chatml + "<think>\n\n</think>\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Open(Config{Dir: tc.dir(t), ConfigFile: "config_greedy.json", Threads: 1})
			require.NoError(t, err)
			defer m.Close()
			want, err := m.countTokens(tc.tail)
			require.NoError(t, err)
			tail, err := m.templateTail(hello)
			require.NoError(t, err)
			assert.Equal(t, want, tail)
			assert.GreaterOrEqual(t, m.batch, tail+tailSlack)
		})
	}
}
