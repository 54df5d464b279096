package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

// toolbox is a test double for the tool registry: each tool is a function,
// and every call is recorded as the tool saw it.
type toolbox struct {
	clk   clock.Clock
	tools map[string]func(ctx context.Context, args json.RawMessage) (string, error)

	mu    sync.Mutex
	calls []toolRun
}

// toolRun is one call as the tool saw it: when it started (audio time),
// with what, and whether the reply cut it.
type toolRun struct {
	name      string
	args      string
	at        time.Duration
	cancelled bool
}

func (b *toolbox) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	b.mu.Lock()
	i := len(b.calls)
	b.calls = append(b.calls, toolRun{name: name, args: string(args), at: b.clk.Now()})
	b.mu.Unlock()
	f, ok := b.tools[name]
	if !ok {
		return "", errors.New("no such tool")
	}
	res, err := f(ctx, args)
	if ctx.Err() != nil {
		b.mu.Lock()
		b.calls[i].cancelled = true
		b.mu.Unlock()
	}
	return res, err
}

func (b *toolbox) runs() []toolRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]toolRun(nil), b.calls...)
}

// withTools runs a scenario with the toolbox made for its clock.
func withTools(s scenario, tools map[string]func(clk clock.Clock) func(context.Context, json.RawMessage) (string, error)) (scenario, *toolbox) {
	box := &toolbox{}
	tune := s.tune
	s.tune = func(c *pipeline.Config) {
		box.clk = c.Clock
		box.tools = map[string]func(context.Context, json.RawMessage) (string, error){}
		for name, make := range tools {
			box.tools[name] = make(c.Clock)
		}
		c.Tools = box
		if tune != nil {
			tune(c)
		}
	}
	return s, box
}

// answers is a tool that answers at once.
func answers(result string) func(clock.Clock) func(context.Context, json.RawMessage) (string, error) {
	return func(clock.Clock) func(context.Context, json.RawMessage) (string, error) {
		return func(context.Context, json.RawMessage) (string, error) { return result, nil }
	}
}

// takes is a tool that answers after d of audio time, or stops when its
// call is cancelled.
func takes(d time.Duration, result string) func(clock.Clock) func(context.Context, json.RawMessage) (string, error) {
	return func(clk clock.Clock) func(context.Context, json.RawMessage) (string, error) {
		return func(ctx context.Context, _ json.RawMessage) (string, error) {
			if err := clk.Sleep(ctx, d); err != nil {
				return "", err
			}
			return result, nil
		}
	}
}

func call(name, args string) string {
	return `<tool_call>{"name": "` + name + `", "arguments": ` + args + `}</tool_call>`
}

// said is what the session's replies showed and spoke: every llm_piece and
// every tts_chunk, joined.
func said(o outcome) (shown, spoken string) {
	var s, p strings.Builder
	for _, e := range o.events {
		switch e.Type {
		case pipeline.EvLLMPiece:
			s.WriteString(e.Text)
		case pipeline.EvTTSChunk:
			p.WriteString(e.Text + "|")
		}
	}
	return s.String(), p.String()
}

// lang is a language's side of the tool tests: the user's words, what the
// model answers, and the reply's own words.
type lang struct {
	name            string
	ask, answer     string
	ack, apology    string
	expectAnswered  string
	interruptPhrase string
}

var langs = []lang{
	{name: "English", ask: "what time is it", answer: "It is {tool_response} now.", expectAnswered: "It is 14:05 now.",
		ack: "One moment.", apology: "Sorry, I couldn't do that.", interruptPhrase: "no stop that now"},
	{name: "Chinese", ask: "现在几点了", answer: "现在是{tool_response}。", expectAnswered: "现在是14:05。",
		ack: "稍等。", apology: "抱歉，这个我没能做到。", interruptPhrase: "不用了停下吧"},
}

// askTime is the user asking the time in l's language, which the model
// answers by get_time (a double that says 14:05), with tune's changes.
func askTime(l lang, tune func(*pipeline.Config)) (scenario, *toolbox) {
	return withTools(scenario{
		length:  6 * time.Second,
		user:    []standin.Utterance{{Start: 500 * ms, End: 1800 * ms, Text: l.ask}},
		replies: []string{call("get_time", "{}"), l.answer},
		tune:    tune,
	}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"get_time": answers("14:05")})
}

// A question the model answers by a tool: the call is never shown or
// spoken, the tool's result reaches the model as its tool message, the
// model's second generation speaks the answer, and the history keeps the
// call and the result as the model wrote and was given them.
func TestToolAnswersTheQuestion(t *testing.T) {
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			s, box := askTime(l, nil)
			o := s.run(t)

			runs := box.runs()
			require.Len(t, runs, 1)
			assert.Equal(t, "get_time", runs[0].name)
			assert.Equal(t, "{}", runs[0].args)
			assert.GreaterOrEqual(t, runs[0].at, o.of(pipeline.EvTurnCommit)[0].At, "run once the turn is committed")

			shown, spoken := said(o)
			assert.Equal(t, l.expectAnswered, shown)
			assert.NotContains(t, spoken, "tool_call")
			assert.NotContains(t, spoken, l.ack, "a tool that answers at once needs no acknowledgement")

			require.Len(t, o.of(pipeline.EvToolCall), 1)
			assert.Equal(t, "get_time", o.of(pipeline.EvToolCall)[0].Tool.Name)
			results := o.of(pipeline.EvToolResult)
			require.Len(t, results, 1)
			assert.Equal(t, "14:05", results[0].Tool.Result)
			require.Len(t, o.result.Metrics, 1)
			require.Len(t, o.result.Metrics[0].Tools, 1)
			assert.Equal(t, "get_time", o.result.Metrics[0].Tools[0].Name)

			convs := o.llm.Conversations()
			require.Len(t, convs, 2, "the call's round and the answer's")
			round := convs[1][len(convs[1])-2:]
			assert.Equal(t, llm.Assistant, round[0].Role)
			assert.Contains(t, round[0].Content, "<tool_call>", "the call as the model wrote it")
			assert.Equal(t, llm.Message{Role: llm.Tool, Content: "14:05"}, round[1])
		})
	}
}

// The history after a tool round holds the call, its result and the
// answer, in the order the template renders them, for the next turn.
func TestToolRoundIsInTheHistory(t *testing.T) {
	s, _ := withTools(scenario{
		length: 9 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * ms, End: 1800 * ms, Text: "what time is it"},
			{Start: 6 * time.Second, End: 7 * time.Second, Text: "thanks"},
		},
		replies: []string{call("get_time", "{}"), "It is {tool_response}.", "You're welcome."},
	}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"get_time": answers(`{"time":"14:05"}`)})
	o := s.run(t)
	convs := o.llm.Conversations()
	require.Len(t, convs, 3)
	roles := []llm.Role{}
	for _, m := range convs[2] {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []llm.Role{llm.System, llm.User, llm.Assistant, llm.Tool, llm.Assistant, llm.User}, roles)
	assert.Equal(t, `It is {"time":"14:05"}.`, convs[2][4].Content)
	assert.False(t, convs[2][4].Interrupted)
}

// A tool call split over many tokens (a tokenizer can cut the marker
// anywhere) is never shown or spoken, in either language.
func TestSplitToolCallIsNeverSpoken(t *testing.T) {
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			s, box := askTime(l, func(c *pipeline.Config) { c.LLM = byRune{c.LLM.(*standin.ScriptedLLM)} })
			o := s.run(t)
			require.Len(t, box.runs(), 1)
			pieces := o.of(pipeline.EvLLMPiece)
			require.NotEmpty(t, pieces)
			shown, spoken := said(o)
			assert.Equal(t, l.expectAnswered, shown)
			for _, bit := range []string{"<", ">", "{", "tool", "name"} {
				assert.NotContains(t, spoken, bit)
				assert.NotContains(t, shown, bit)
			}
		})
	}
}

// byRune streams the scripted LLM's replies a character a piece.
type byRune struct{ *standin.ScriptedLLM }

func (b byRune) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	return b.ScriptedLLM.Generate(ctx, conv, func(piece string) error {
		for _, r := range piece {
			if err := emit(string(r)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Never on a guess: a speculated reply that calls a tool and is dropped
// (the user went on) runs nothing; the committed turn's reply runs it
// once, after the commit.
func TestDroppedSpeculationRunsNoTool(t *testing.T) {
	for _, tc := range []struct{ lang, first, rest string }{
		{"English", "set a timer", "for five minutes"},
		{"Chinese", "设一个计时", "五分钟的"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			s, box := withTools(scenario{
				length: 7 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * ms, End: 1500 * ms, Text: tc.first},
					{Start: 1800 * ms, End: 2800 * ms, Text: tc.rest},
				},
				replies:         []string{call("set_timer", `{"seconds": 300}`), "Done."},
				tokensPerSecond: -1,
			}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"set_timer": answers(`{"ok":true}`)})
			o := s.run(t)
			misses := o.of(pipeline.EvSpeculationMiss)
			require.NotEmpty(t, misses, "the speculation was dropped")
			assert.Equal(t, tc.first, misses[0].Text)
			runs := box.runs()
			require.Len(t, runs, 1, "only the committed turn's call ran")
			commits := o.of(pipeline.EvTurnCommit)
			require.Len(t, commits, 1)
			assert.Contains(t, commits[0].Text, tc.rest)
			assert.GreaterOrEqual(t, runs[0].at, commits[0].At)
			assert.Len(t, o.of(pipeline.EvToolCall), 1, "the dropped reply's call was never published")
		})
	}
}

// A speculated reply that is adopted runs its tool at the commit, not
// before.
func TestAdoptedSpeculationRunsTheToolAtTheCommit(t *testing.T) {
	s, box := withTools(scenario{
		length:          6 * time.Second,
		user:            []standin.Utterance{{Start: 500 * ms, End: 1800 * ms, Text: "what time is it"}},
		replies:         []string{call("get_time", "{}"), "It is {tool_response}."},
		tokensPerSecond: -1,
	}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"get_time": answers("14:05")})
	o := s.run(t)
	require.Len(t, o.of(pipeline.EvSpeculationHit), 1)
	start := o.of(pipeline.EvSpeculationStart)[0].At
	commit := o.of(pipeline.EvTurnCommit)[0].At
	runs := box.runs()
	require.Len(t, runs, 1)
	assert.Greater(t, commit, start+300*ms, "the call was written long before the commit")
	assert.GreaterOrEqual(t, runs[0].at, commit, "and ran only at it")
}

// A slow tool gets a short spoken acknowledgement; a barge-in while it
// runs cancels it, and nothing of its result is spoken or remembered.
func TestBargeInCancelsASlowTool(t *testing.T) {
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			s, box := withTools(scenario{
				length: 10 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * ms, End: 1800 * ms, Text: l.ask},
					// Past the acknowledgement, and past the window in which
					// speech would continue the turn (listen.Continuation).
					{Start: 4500 * ms, End: 5500 * ms, Text: l.interruptPhrase},
				},
				replies: []string{call("take_photo", "{}"), "Here it is: {tool_response}", "Okay."},
			}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"take_photo": takes(5*time.Second, "photo.jpg")})
			o := s.run(t)

			runs := box.runs()
			require.Len(t, runs, 1)
			assert.True(t, runs[0].cancelled, "the barge-in cancelled the tool")
			_, spoken := said(o)
			assert.Contains(t, spoken, l.ack, "the user heard an acknowledgement, not silence")
			for _, e := range o.of(pipeline.EvTTSChunk) {
				if e.Text == l.ack {
					assert.Equal(t, runs[0].at+400*ms, e.At, "said once the tool had run 400 ms")
				}
			}
			assert.NotContains(t, spoken, "photo.jpg")
			assert.Empty(t, o.of(pipeline.EvToolResult))
			require.Len(t, o.of(pipeline.EvBargeIn), 1)

			// The interrupting speech is the next turn, joined to the
			// question it leaves unanswered; the history has no trace of
			// the cut round (the tool never answered), nor of the
			// acknowledgement, which is no words of the model's.
			convs := o.llm.Conversations()
			last := convs[len(convs)-1]
			for _, m := range last {
				assert.NotEqual(t, llm.Tool, m.Role)
				assert.NotContains(t, m.Content, l.ack)
			}
			assert.Equal(t, llm.Message{Role: llm.User, Content: l.ask + "\n" + l.interruptPhrase}, last[len(last)-1])
		})
	}
}

// A call that cannot be read, that names no tool, or whose tool fails
// gets a brief spoken apology: never silence, never a crash.
func TestFailedToolCallsGetAnApology(t *testing.T) {
	failing := func(clock.Clock) func(context.Context, json.RawMessage) (string, error) {
		return func(context.Context, json.RawMessage) (string, error) { return "", errors.New("camera busy") }
	}
	for _, l := range langs {
		for _, tc := range []struct {
			name, reply, err string
		}{
			{"unknown tool", call("launch_rocket", "{}"), "no such tool"},
			{"malformed JSON", `<tool_call>{"name": "get_time", "arguments": {</tool_call>`, "not JSON"},
			{"tool error", call("take_photo", "{}"), "camera busy"},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				s, _ := withTools(scenario{
					length:  6 * time.Second,
					user:    []standin.Utterance{{Start: 500 * ms, End: 1800 * ms, Text: l.ask}},
					replies: []string{tc.reply, "Never said."},
				}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"get_time": answers("14:05"), "take_photo": failing})
				o := s.run(t)
				errs := o.of(pipeline.EvToolError)
				require.Len(t, errs, 1)
				assert.Contains(t, errs[0].Err, tc.err)
				shown, spoken := said(o)
				assert.Equal(t, l.apology, shown)
				bare := strings.NewReplacer("|", "", " ", "")
				assert.Contains(t, bare.Replace(spoken), bare.Replace(l.apology))
				assert.Len(t, o.llm.Conversations(), 1, "no second generation")
				assert.Empty(t, o.of(pipeline.EvError))
				require.Len(t, o.of(pipeline.EvPlaybackStop), 1, "the apology played out")
			})
		}
	}
}

// A model that keeps calling tools is stopped after the policy's rounds,
// with an apology.
func TestToolLoopIsStopped(t *testing.T) {
	s, box := withTools(scenario{
		length:  8 * time.Second,
		user:    []standin.Utterance{{Start: 500 * ms, End: 1800 * ms, Text: "what time is it"}},
		replies: []string{call("get_time", "{}")},
		tune:    func(c *pipeline.Config) { c.ToolPolicy.Rounds = 2 },
	}, map[string]func(clock.Clock) func(context.Context, json.RawMessage) (string, error){"get_time": answers("14:05")})
	o := s.run(t)
	assert.Len(t, box.runs(), 2, "two rounds ran")
	assert.Len(t, o.llm.Conversations(), 3, "the third generation's calls were not run")
	errs := o.of(pipeline.EvToolError)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Err, "after 2 rounds")
	shown, _ := said(o)
	assert.Equal(t, "Sorry, I couldn't do that.", shown)
}
