package reply

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/tts/normalize"
)

// ToolPolicy is how a reply runs the tools its model calls.
type ToolPolicy struct {
	// AckAfter is how long a tool may run before the reply says a short
	// acknowledgement ("One moment."), so that the user never waits in
	// silence; 0 takes DefaultToolPolicy's.
	AckAfter time.Duration
	// Rounds bounds the rounds of tool calls in one reply: a model that
	// keeps calling tools is stopped there, with an apology; 0 takes
	// DefaultToolPolicy's.
	Rounds int
}

// DefaultToolPolicy acknowledges a tool still running after 400 ms (a
// pause in conversation much past that is heard as the other side having
// gone), and allows three rounds: a question rarely needs more than a
// lookup and an action.
func DefaultToolPolicy() ToolPolicy { return ToolPolicy{AckAfter: 400 * time.Millisecond, Rounds: 3} }

func (p ToolPolicy) orDefault() ToolPolicy {
	d := DefaultToolPolicy()
	if p.AckAfter <= 0 {
		p.AckAfter = d.AckAfter
	}
	if p.Rounds <= 0 {
		p.Rounds = d.Rounds
	}
	return p
}

// What a reply says of its own while it runs tools, in the user's
// language: the acknowledgement of a slow tool, and the apology for a call
// that failed (not JSON, no such tool, the tool's error) or for a model
// that would not stop calling tools.
var (
	toolAck     = map[normalize.Language]string{normalize.LangEnglish: "One moment.", normalize.LangChinese: "稍等。"}
	toolApology = map[normalize.Language]string{normalize.LangEnglish: "Sorry, I couldn't do that.", normalize.LangChinese: "抱歉，这个我没能做到。"}
)

// Apology is what a reply says when the tools it called failed, in the
// language of conv's user.
func Apology(conv []llm.Message) string { return inLanguage(toolApology, userLanguage(conv)) }

// inLanguage is the text of m in lang, English for a language it lacks.
func inLanguage(m map[normalize.Language]string, lang normalize.Language) string {
	if t, ok := m[lang]; ok {
		return t
	}
	return m[normalize.LangEnglish]
}

// converse generates the reply to conv in rounds (llm.ToolLoop): each
// round's tool calls are run once the turn is committed, and the model
// speaks the answer in the next round. say takes the reply's words; flush
// ends a run of them, so what the reply said before a call is spoken
// while the tool runs.
func (r *Reply) converse(ctx context.Context, conv []llm.Message, say func(string) error, flush func() error, chunks *chunkQueue) error {
	policy := r.s.ToolPolicy.orDefault()
	lang := userLanguage(conv)
	acked := false
	loop := llm.ToolLoop{
		Generate: r.gen.Generate,
		Say:      say,
		Rounds:   policy.Rounds,
		Run: func(ctx context.Context, calls []llm.ToolCall) ([]llm.Message, bool, error) {
			// Never on a guess: a speculated reply runs no tool before
			// its turn is committed, and a dropped one (its context
			// cancelled) none at all.
			if err := r.awaitCommit(ctx); err != nil {
				return nil, false, err
			}
			if err := flush(); err != nil {
				return nil, false, err
			}
			results, failed := r.runTools(ctx, calls, lang, &acked, chunks)
			// Cut while a tool ran: nothing of it is said or kept.
			return results, failed, ctx.Err()
		},
		Ran: func(round []llm.Message) {
			r.mu.Lock()
			r.rounds = append(r.rounds, round...)
			r.roundsSaid = r.reply.Len()
			r.mu.Unlock()
		},
	}
	end, stats, err := loop.Converse(ctx, conv)
	r.mu.Lock()
	r.stats = stats
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if end == llm.TooManyRounds {
		r.respond(event.Event{Type: event.EvToolError, At: r.s.Clock.Now(), Turn: r.turn,
			Err: fmt.Sprintf("still calling tools after %d rounds", policy.Rounds)})
	}
	if end != llm.Answered {
		if err := say(Apology(conv)); err != nil {
			return err
		}
	}
	return flush()
}

// runTools runs one round's calls in order and returns their results as
// the model's tool messages, and whether any failed. A call that could
// not be read or failed gets its error as its result, so the history
// says what happened.
func (r *Reply) runTools(ctx context.Context, calls []llm.ToolCall, lang normalize.Language, acked *bool, chunks *chunkQueue) (results []llm.Message, failed bool) {
	for _, call := range calls {
		use := &event.ToolUse{Name: call.Name, Arguments: call.Arguments}
		r.respond(event.Event{Type: event.EvToolCall, At: r.s.Clock.Now(), Turn: r.turn, Tool: use})
		start := r.s.Clock.Now()
		err := call.Err
		var result string
		if err == nil {
			result, err = r.callTool(ctx, call, lang, acked, chunks)
		}
		if ctx.Err() != nil {
			return results, true
		}
		took := r.s.Clock.Now() - start
		span := event.ToolSpan{Name: call.Name, MS: float64(took.Microseconds()) / 1000}
		done := &event.ToolUse{Name: call.Name, MS: span.MS}
		if err != nil {
			failed = true
			span.Error = err.Error()
			result = ErrorResult(err)
			r.respond(event.Event{Type: event.EvToolError, At: r.s.Clock.Now(), Turn: r.turn, Tool: done, Err: err.Error()})
		} else {
			done.Result = result
			r.respond(event.Event{Type: event.EvToolResult, At: r.s.Clock.Now(), Turn: r.turn, Tool: done})
		}
		r.mu.Lock()
		r.metrics.Tools = append(r.metrics.Tools, span)
		r.mu.Unlock()
		results = append(results, llm.Message{Role: llm.Tool, Content: result})
	}
	return results, failed
}

// ErrorResult is a failed call's result as the model is given it, so that
// the history says what happened.
func ErrorResult(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error()})
	return string(b)
}

// callTool runs one call. The tool runs in a goroutine of its own, holding
// the clock as any work of the session does, while this one waits on the
// clock: past policy's AckAfter it queues the acknowledgement (once a
// reply) and waits on. A cancelled ctx (a barge-in) stops the tool, which
// this waits for, off the clock, for toolGrace at most: a tool that does
// not stop is left to end on its own, its hold given back, so that neither
// the reply nor the session's end waits on it.
func (r *Reply) callTool(ctx context.Context, call llm.ToolCall, lang normalize.Language, acked *bool, chunks *chunkQueue) (string, error) {
	wait, finished := context.WithCancel(ctx)
	defer finished()
	var (
		result string
		err    error
		hold   sync.Once
	)
	release := func() { hold.Do(r.s.Clock.Release) }
	done := make(chan struct{})
	r.s.Clock.Hold()
	go func() {
		defer release()
		defer close(done)
		result, err = r.s.Tools.Call(ctx, call.Name, call.Arguments)
		finished()
	}()
	if r.s.Clock.Sleep(wait, r.s.ToolPolicy.orDefault().AckAfter) == nil && !*acked {
		*acked = true
		chunks.push(queued{text: inLanguage(toolAck, lang), aside: true})
	}
	_ = r.s.Clock.Sleep(wait, gateWait)
	select {
	case <-done:
		return result, err
	default:
	}
	// Cut: the tool winds down in its own time, which may be the clock's.
	r.s.Clock.Release()
	defer r.s.Clock.Hold()
	grace := time.NewTimer(toolGrace)
	defer grace.Stop()
	select {
	case <-done:
		return result, err
	case <-grace.C:
		release()
		slog.Warn("a tool did not stop when its reply was cut; left to end on its own", "tool", call.Name, "waited", toolGrace)
		return "", ctx.Err()
	}
}

// toolGrace is how long a cut reply waits for its tool to stop: the
// built-ins and the host's stop at once.
const toolGrace = time.Second

// userLanguage is the language of the user's latest message that has
// words (tool results, JSON, say nothing of it).
func userLanguage(conv []llm.Message) normalize.Language {
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role != llm.User {
			continue
		}
		if l := normalize.Detect(conv[i].Content); l != normalize.LangUnknown {
			return l
		}
	}
	return normalize.LangEnglish
}

// Rounds are the tool rounds of a reply that is over, for the history: the
// model's calls as it wrote them and their results, each round whole once
// its tools ran to their end, so the history renders what the engine's
// KV cache holds.
func (r *Reply) Rounds() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Message(nil), r.rounds...)
}

// afterRounds is what a reply said after its last tool round, of text
// (what it said as the model wrote it, from its start): the rounds hold
// the rest. Text that ends inside the rounds' words is none of it.
func (r *Reply) afterRounds(text string) string {
	r.mu.Lock()
	before := r.reply.String()[:r.roundsSaid]
	r.mu.Unlock()
	if after, ok := strings.CutPrefix(text, before); ok {
		return strings.TrimLeft(after, " ")
	}
	return ""
}
