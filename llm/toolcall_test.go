package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// A reply as Qwen3 writes a call (llm/mnn/testdata/qwen3_chat_template.jinja
// asks for "<tool_call>\n{"name": <function-name>, "arguments":
// <args-json-object>}\n</tool_call>"), cut into pieces at every place a
// tokenizer could cut it: the speech around the call comes out whole, the
// call never does, and the call reads the same.
func TestCallFilterAtEveryCut(t *testing.T) {
	for _, tc := range []struct {
		name, reply, speech string
		calls               []string // name and arguments, as JSON
	}{
		{"a call alone", "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>", "", []string{`get_time {}`}},
		{"speech before", "Let me check. <tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>", "Let me check. ", []string{`get_time {}`}},
		{"Chinese speech before", "我看一下。<tool_call>{\"name\": \"set_timer\", \"arguments\": {\"seconds\": 300, \"label\": \"泡茶\"}}</tool_call>", "我看一下。",
			[]string{`set_timer {"seconds": 300, "label": "泡茶"}`}},
		{"two calls", "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 1}}</tool_call>", "\n",
			[]string{`a {}`, `b {"x": 1}`}},
		{"no call, a less-than sign", "3 < 4 and <b>bold</b>", "3 < 4 and <b>bold</b>", nil},
		{"a marker's start at the end", "the end <tool_", "the end <tool_", nil},
		{"cut off inside its call", "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}", "", []string{`get_time {}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runes := []rune(tc.reply)
			for cut := 0; cut <= len(runes); cut++ {
				for _, pieces := range [][]string{{string(runes[:cut]), string(runes[cut:])}, byRune(tc.reply)} {
					var f llm.CallFilter
					var speech strings.Builder
					for _, p := range pieces {
						speech.WriteString(f.Push(p))
					}
					speech.WriteString(f.Flush())
					require.Equal(t, tc.speech, speech.String(), "pieces %q", pieces)
					var got []string
					for _, c := range f.Calls() {
						require.NoError(t, c.Err)
						got = append(got, c.Name+" "+string(c.Arguments))
					}
					assert.Equal(t, tc.calls, got, "pieces %q", pieces)
				}
			}
		})
	}
}

func byRune(s string) []string {
	var out []string
	for len(s) > 0 {
		_, n := utf8.DecodeRuneInString(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func TestParseToolCall(t *testing.T) {
	for _, tc := range []struct {
		name, body, want, err string
	}{
		{"plain", `{"name": "get_time", "arguments": {}}`, `get_time {}`, ""},
		{"no arguments", `{"name": "get_time"}`, `get_time {}`, ""},
		{"null arguments", `{"name": "get_time", "arguments": null}`, `get_time {}`, ""},
		{"arguments as a string", `{"name": "set_timer", "arguments": "{\"seconds\": 60}"}`, `set_timer {"seconds": 60}`, ""},
		{"not JSON", `{"name": "get_time", "arguments": {`, "", "not JSON"},
		{"no name", `{"arguments": {}}`, "", "without a name"},
		{"arguments not an object", `{"name": "x", "arguments": [1]}`, "", "not a JSON object"},
		{"Chinese", `{"name": "remember_note", "arguments": {"text": "车停在三层"}}`, `remember_note {"text": "车停在三层"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := llm.ParseToolCall(tc.body)
			if tc.err != "" {
				require.Error(t, c.Err)
				assert.Contains(t, c.Err.Error(), tc.err)
				return
			}
			require.NoError(t, c.Err)
			assert.Equal(t, tc.want, c.Name+" "+string(c.Arguments))
			assert.True(t, json.Valid(c.Arguments))
		})
	}
}

// scripted is a generator double that writes its replies in turn.
type scripted struct {
	replies []string
	convs   [][]llm.Message
}

func (s *scripted) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	s.convs = append(s.convs, conv)
	reply := s.replies[min(len(s.convs), len(s.replies))-1]
	for _, p := range byRune(reply) {
		if err := emit(p); err != nil {
			return llm.Stats{}, err
		}
	}
	return llm.Stats{GeneratedTokens: utf8.RuneCountInString(reply), PromptTokens: len(conv)}, nil
}

func TestToolLoop(t *testing.T) {
	call := `<tool_call>{"name": "get_time", "arguments": {}}</tool_call>`
	for _, tc := range []struct {
		name    string
		replies []string
		fail    bool
		end     llm.LoopEnd
		said    string
		rounds  int
		gens    int
	}{
		{"no call", []string{"Hello there."}, false, llm.Answered, "Hello there.", 0, 1},
		{"a call, then the answer", []string{call, "It is noon."}, false, llm.Answered, "It is noon.", 1, 2},
		{"Chinese", []string{"我查一下。" + call, "现在是中午。"}, false, llm.Answered, "我查一下。现在是中午。", 1, 2},
		{"a failed call ends the loop", []string{call, "never"}, true, llm.ToolsFailed, "", 1, 1},
		{"calls without end", []string{call}, false, llm.TooManyRounds, "", 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := &scripted{replies: tc.replies}
			var said strings.Builder
			var rounds [][]llm.Message
			loop := llm.ToolLoop{
				Generate: gen.Generate,
				Say:      func(s string) error { said.WriteString(s); return nil },
				Run: func(_ context.Context, calls []llm.ToolCall) ([]llm.Message, bool, error) {
					require.Len(t, calls, 1)
					return []llm.Message{{Role: llm.Tool, Content: "12:00"}}, tc.fail, nil
				},
				Ran:    func(r []llm.Message) { rounds = append(rounds, r) },
				Rounds: 2,
			}
			conv := []llm.Message{{Role: llm.User, Content: "what time is it"}}
			end, stats, err := loop.Converse(context.Background(), conv)
			require.NoError(t, err)
			assert.Equal(t, tc.end, end)
			assert.Equal(t, tc.said, said.String())
			assert.Len(t, rounds, tc.rounds)
			assert.Len(t, gen.convs, tc.gens)
			for i, r := range rounds {
				assert.Equal(t, llm.Assistant, r[0].Role)
				assert.Contains(t, r[0].Content, call, "the call as the model wrote it")
				assert.Equal(t, llm.Message{Role: llm.Tool, Content: "12:00"}, r[1])
				if i+1 < len(gen.convs) {
					// The next generation is given the conversation with the round.
					assert.Equal(t, r, gen.convs[i+1][len(gen.convs[i+1])-2:])
				}
			}
			assert.Equal(t, sumPrompt(gen.convs), stats.PromptTokens, "the generations' figures, summed")
		})
	}
}

// sumPrompt is the scripted generator's prompt tokens over its calls.
func sumPrompt(convs [][]llm.Message) int {
	n := 0
	for _, c := range convs {
		n += len(c)
	}
	return n
}

// A run that fails (the reply was cut while its tool ran) ends the loop
// with that error, and the round is not kept.
func TestToolLoopCutWhileRunning(t *testing.T) {
	gen := &scripted{replies: []string{`<tool_call>{"name": "x"}</tool_call>`}}
	kept := 0
	loop := llm.ToolLoop{
		Generate: gen.Generate,
		Say:      func(string) error { return nil },
		Run: func(context.Context, []llm.ToolCall) ([]llm.Message, bool, error) {
			return nil, true, context.Canceled
		},
		Ran:    func([]llm.Message) { kept++ },
		Rounds: 3,
	}
	_, _, err := loop.Converse(context.Background(), nil)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Zero(t, kept)
}

// BenchmarkCallFilter is the filter's cost on a reply's path: a sentence
// and a call, a token a piece (English words, Chinese characters), as the
// reply streams them.
func BenchmarkCallFilter(b *testing.B) {
	for _, tc := range []struct{ name, reply string }{
		{"English", strings.Repeat("The weather is fine today, ", 8) + `<tool_call>{"name": "set_timer", "arguments": {"seconds": 300, "label": "tea"}}</tool_call>`},
		{"Chinese", strings.Repeat("今天天气很好，", 8) + `<tool_call>{"name": "remember_note", "arguments": {"text": "车停在三层"}}</tool_call>`},
	} {
		pieces := strings.SplitAfter(tc.reply, " ")
		if tc.name == "Chinese" {
			pieces = byRune(tc.reply)
		}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var f llm.CallFilter
				for _, p := range pieces {
					f.Push(p)
				}
				f.Flush()
				if len(f.Calls()) != 1 {
					b.Fatal("the call was not read")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(pieces)), "ns/piece")
		})
	}
}
