//go:build mnn

package mnn

// The MNN lines cited are at alibaba/MNN commit
// 4d40bdbd7efb73a58383bb5da867a6f41eb1776e (the one scripts/build-mnn
// builds), under transformers/llm/engine/src/ but for rapidjson, under
// 3rd_party/. The template lines are testdata/qwen3_chat_template.jinja's.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// timerTools are a tool without arguments, whose parameters SetTools
// gives as Hugging Face's empty schema, and one whose schema's keys are
// in an order tojson does not keep.
var timerTools = []llm.ToolSpec{
	{Name: "get_time", Description: "Tells the current local time."},
	{Name: "set_timer", Description: "Starts a countdown timer.", Parameters: json.RawMessage(
		`{"required": ["seconds"], "properties": {"seconds": {"description": "How long it runs, in seconds.", "type": "integer"}, "label": {"description": "What it is for.", "type": "string"}}, "type": "object"}`)},
}

// timerCall is a turn that called set_timer: the model's words as it
// wrote them, then the tool's result.
func timerCall(system, user, call, result string) []llm.Message {
	return []llm.Message{
		{Role: llm.System, Content: system},
		{Role: llm.User, Content: user},
		{Role: llm.Assistant, Content: "<tool_call>\n" + call + "\n</tool_call>"},
		{Role: llm.Tool, Content: result},
	}
}

// The tools' turn, written out from the template's rules:
//
//   - With tools (line 1), the system turn is the system message, a blank
//     line, and the tools' preamble (lines 2-6), each tool on a line of its
//     own as tojson writes it (7-10), and the instructions for a call
//     (11). MNN's tojson writes keys in its own order, not the schema's:
//     type, function, name, description, parameters, properties,
//     required, enum, then the rest alphabetically, with ", " and ": "
//     between them (tokenizer/jinja.hpp:169-230, used by the filter at
//     920-930); strings are rapidjson's (jinja.hpp:173), which writes
//     UTF-8 as it is (rapidjson/writer.h:390-430: only an ASCII target
//     encoding escapes it), as Hugging Face's tojson (ensure_ascii=False)
//     does. That Go escapes "<" as \u003c on the way in is not seen: MNN
//     parses the JSON and writes it again.
//   - The user's query is the last user turn that is not a tool response
//     (17-24); the assistant's turn after it is rendered without a think
//     block unless it is the conversation's last message or has
//     reasoning (39-44), and a call written in its content is rendered as
//     written (46-47 render message.tool_calls, which a plain message has
//     not).
//   - The tool's result is a user turn of its own in <tool_response>
//     tags (68-77).
//   - The prompt ends with the generation prompt and, as the engine
//     keeps enable_thinking false in the template's context, the empty
//     think block (80-84): SetTools has kept what the context held.
//
// MNN renders with the context set_config gave (llm.cpp:111-140) as the
// base of the template's variables, to which its own apply_chat_template
// adds only an empty tools list, which sets nothing, and the messages
// (tokenizer/tokenizer.cpp:1046-1054, jinja.hpp:2234-2237), with the
// generation prompt (llm.cpp:1014-1016).
func TestToolsRenderIntoTheQwen3Prompt(t *testing.T) {
	chinese := []llm.ToolSpec{
		timerTools[0],
		{Name: "set_timer", Description: "设置一个倒计时。", Parameters: json.RawMessage(
			`{"type": "object", "properties": {"seconds": {"type": "integer", "description": "倒计时的秒数（<= 86400）。"}}, "required": ["seconds"]}`)},
	}
	for _, tc := range []struct {
		name   string
		tools  []llm.ToolSpec
		conv   []llm.Message
		golden string
	}{
		{
			"english", timerTools,
			timerCall("you are a test", "Set a timer for five minutes.", `{"name": "set_timer", "arguments": {"seconds": 300}}`, `{"ok": true}`),
			`<|im_start|>system
you are a test

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_time", "description": "Tells the current local time.", "parameters": {"type": "object", "properties": {}}}}
{"type": "function", "function": {"name": "set_timer", "description": "Starts a countdown timer.", "parameters": {"type": "object", "properties": {"label": {"type": "string", "description": "What it is for."}, "seconds": {"type": "integer", "description": "How long it runs, in seconds."}}, "required": ["seconds"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
Set a timer for five minutes.<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "set_timer", "arguments": {"seconds": 300}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"ok": true}
</tool_response><|im_end|>
<|im_start|>assistant
<think>

</think>

`,
		},
		{
			"chinese", chinese,
			timerCall("你是一个语音助手。", "帮我定一个五分钟的计时器。", `{"name": "set_timer", "arguments": {"seconds": 300}}`, `{"ok": true, "message": "计时器已开始"}`),
			`<|im_start|>system
你是一个语音助手。

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_time", "description": "Tells the current local time.", "parameters": {"type": "object", "properties": {}}}}
{"type": "function", "function": {"name": "set_timer", "description": "设置一个倒计时。", "parameters": {"type": "object", "properties": {"seconds": {"type": "integer", "description": "倒计时的秒数（<= 86400）。"}}, "required": ["seconds"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
帮我定一个五分钟的计时器。<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "set_timer", "arguments": {"seconds": 300}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"ok": true, "message": "计时器已开始"}
</tool_response><|im_end|>
<|im_start|>assistant
<think>

</think>

`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := openExport(t, qwen3Export(t), 4)
			require.NoError(t, m.SetTools(tc.tools))
			prompt, err := m.Prompt(tc.conv)
			require.NoError(t, err)
			assert.Equal(t, tc.golden, prompt)

			// The model replies to it (the tiny model's tokenizer skips
			// the bytes it has no token for, Chinese among them).
			ctx := context.Background()
			reply, st, err := generate(t, m, ctx, tc.conv, 0, nil)
			require.NoError(t, err)
			assert.Equal(t, 4, st.GeneratedTokens)

			// The conversation up to the next user turn, prefilled while
			// the assistant is idle, is the reply's prompt but for its
			// last turn's start: the reply prefills little more.
			m.Reset()
			idle, err := m.Prefill(ctx, tc.conv)
			require.NoError(t, err)
			again, st, err := generate(t, m, ctx, tc.conv, 0, nil)
			require.NoError(t, err)
			assert.Equal(t, reply, again)
			t.Logf("prompt %d tokens, %d of them prefilled while idle, %d held for the reply", st.PromptTokens, idle.PromptTokens, st.CachedTokens)
			assert.Positive(t, st.CachedTokens)
			// The start's last tokens ("<|im_start|>user\n") may part
			// from the prompt's, and the batch rounds down where the
			// prefill starts.
			assert.GreaterOrEqual(t, st.CachedTokens, idle.PromptTokens-3-m.batch)
		})
	}
}

// No tools, nil or none, render the template's form without them (lines
// 12-16): the plain system turn, the think block still at the end.
func TestNoToolsRenderThePlainPrompt(t *testing.T) {
	const plain = "<|im_start|>system\nyou are a test<|im_end|>\n<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
	m := openExport(t, qwen3Export(t), 4)
	for _, tools := range [][]llm.ToolSpec{nil, {}} {
		require.NoError(t, m.SetTools(timerTools))
		prompt, err := m.Prompt(hello)
		require.NoError(t, err)
		require.Contains(t, prompt, "<tools>")
		require.NoError(t, m.SetTools(tools))
		prompt, err = m.Prompt(hello)
		require.NoError(t, err)
		assert.Equal(t, plain, prompt, "tools %#v", tools)
	}
}

// Tools that change mid-conversation change the system turn, at the
// prompt's start: the next reply keeps of the KV cache only what comes
// before, and is what an engine that held nothing gives.
func TestToolsChangedMidConversation(t *testing.T) {
	dir := qwen3Export(t)
	ctx := context.Background()
	conv := timerCall("you are a test", "Set a timer for five minutes.", `{"name": "set_timer", "arguments": {"seconds": 300}}`, `{"ok": true}`)

	m := openExport(t, dir, 4)
	_, before, err := generate(t, m, ctx, conv, 0, nil)
	require.NoError(t, err)
	require.NoError(t, m.SetTools(timerTools))
	got, st, err := generate(t, m, ctx, conv, 0, nil)
	require.NoError(t, err)
	assert.Greater(t, st.PromptTokens, before.PromptTokens, "the tools are in the prompt")
	kept, err := m.countTokens("<|im_start|>system\nyou are a test")
	require.NoError(t, err)
	assert.LessOrEqual(t, st.CachedTokens, kept)
	t.Logf("prompt %d tokens without tools, %d with, %d of them held", before.PromptTokens, st.PromptTokens, st.CachedTokens)

	fresh := openExport(t, dir, 4)
	require.NoError(t, fresh.SetTools(timerTools))
	want, _, err := generate(t, fresh, ctx, conv, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}
