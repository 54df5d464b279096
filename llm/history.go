package llm

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// History is the conversation the assistant remembers. It is safe for
// concurrent use (the GUI clears it while the pipeline appends).
type History struct {
	mu     sync.Mutex
	system string
	// maxChars bounds the characters sent to the model besides the system
	// prompt; the oldest exchanges are dropped first, down to half of it
	// (see trimmed), once a reply takes the history past three quarters of
	// it (see AddAssistant) or a user turn past all of it. Zero means no
	// bound.
	maxChars int
	// maxTokens bounds the same in the model's tokens, as tokens counts
	// them, the same way; zero means no bound. The LLM's KV cache holds
	// the whole conversation, so this bounds its memory whatever the
	// language (a Chinese character is one to three tokens, an English
	// word one or two).
	maxTokens int
	tokens    func(string) int
	msgs      []Message
}

// NewHistory returns an empty history with a system prompt and a budget.
func NewHistory(system string, maxChars int) *History {
	return &History{system: system, maxChars: maxChars}
}

// BoundTokens bounds the history in tokens too, as tokens counts them (the
// model's tokenizer), maxTokens at most.
func (h *History) BoundTokens(tokens func(string) int, maxTokens int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tokens, h.maxTokens = tokens, maxTokens
}

// budgets are the history's bounds: characters, and tokens where bound.
func (h *History) budgets() []budget {
	b := []budget{{size: utf8.RuneCountInString, max: h.maxChars}}
	if h.tokens != nil {
		b = append(b, budget{size: h.tokens, max: h.maxTokens})
	}
	return b
}

// budget is one bound on the history: of the sum of its messages' sizes.
type budget struct {
	size func(string) int
	max  int // 0: no bound
}

// AddUser appends a committed user turn and returns it as kept. A user
// turn that follows one never answered (its reply failed, or was
// interrupted before a word was heard) joins it, so the conversation
// alternates as chat templates expect.
//
// A user message holds at most half of each budget (see fitTurn): the
// history is trimmed to half when it is full, so a turn that fits there
// leaves it within its budget with room for the reply, whatever came
// before; a longer one (a page pasted into the chat: 60 KB were a
// 36,462-token prompt against a 2048-token budget) is cut to what fits,
// said once here as a log line; the kept text tells the caller.
func (h *History) AddUser(text string) (kept string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	budgets := h.budgets()
	kept = fitTurn(text, budgets)
	if kept != text {
		slog.Warn("a user turn longer than the history holds was cut to fit it",
			"kept_chars", utf8.RuneCountInString(kept), "chars", utf8.RuneCountInString(text),
			"history_chars", h.maxChars, "history_tokens", h.maxTokens)
	}
	h.msgs, _ = trimmed(withUser(h.msgs, kept, budgets), budgets, whole)
	return kept
}

// WithUser is the conversation Messages would return after AddUser(text),
// leaving the history as it is: what a reply speculated before the turn
// is committed answers.
func (h *History) WithUser(text string) []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	budgets := h.budgets()
	msgs, _ := trimmed(withUser(slices.Clone(h.msgs), fitTurn(text, budgets), budgets), budgets, whole)
	return h.withSystem(msgs)
}

// withUser adds the user's turn text to msgs: to the message of a turn
// never answered, where both fit in the bound of one (see fitTurn), else
// in its place (the user asked again, or moved on), else as a message of
// its own.
func withUser(msgs []Message, text string, budgets []budget) []Message {
	n := len(msgs)
	if n == 0 || msgs[n-1].Role != User {
		return append(msgs, Message{Role: User, Content: text})
	}
	if joined := msgs[n-1].Content + "\n" + text; fitTurn(joined, budgets) == joined {
		msgs[n-1].Content = joined
	} else {
		msgs[n-1].Content = text
	}
	return msgs
}

// TakeBackUser removes text from the end of the conversation, where
// AddUser put it (a message of its own, or the end of one it joined), and
// says whether it was there: the user went on after the turn was
// committed, and the whole sentence is added once it ends.
func (h *History) TakeBackUser(text string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.msgs)
	if n == 0 || h.msgs[n-1].Role != User {
		return false
	}
	switch last := &h.msgs[n-1]; {
	case last.Content == text:
		h.msgs = h.msgs[:n-1]
	case strings.HasSuffix(last.Content, "\n"+text):
		last.Content = strings.TrimSuffix(last.Content, "\n"+text)
	default:
		return false
	}
	return true
}

// AddAssistant appends a reply and returns how many of the oldest
// messages it dropped. An interrupted reply holds only what was played; if
// nothing was played it is not remembered at all, since the user never
// heard it.
//
// The history is trimmed here, past three quarters of its budget, rather
// than when the next user turn takes it past the whole: a trim changes the
// prompt's start, and an engine that keeps its KV cache (llm/mnn) must
// then prefill the whole conversation again. After a reply the assistant
// is idle and can do that before the user's next turn (mnn.Model.Prefill);
// at the user's turn it would delay the reply by seconds. The quarter left
// holds any next user turn but a very long one.
func (h *History) AddAssistant(text string, interrupted bool) (dropped int) {
	return h.addAssistant(text, interrupted, threeQuarters)
}

// AddAssistantBusy is AddAssistant for a reply the user is already
// speaking after (over it, or straight after it): no idle spell follows,
// and the whole conversation prefilled again after a trim would run in
// the next reply, beside the recognizer finishing the user's words. So
// the history is trimmed only past its whole budget, half as often; the
// next reply after which the assistant is idle trims it from three
// quarters, with the prefill off the path.
func (h *History) AddAssistantBusy(text string, interrupted bool) (dropped int) {
	return h.addAssistant(text, interrupted, whole)
}

func (h *History) addAssistant(text string, interrupted bool, over func(max int) int) (dropped int) {
	if text == "" {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs, dropped = trimmed(append(h.msgs, Message{Role: Assistant, Content: text, Interrupted: interrupted}), h.budgets(), over)
	return dropped
}

// AddToolRounds appends the tool calls a reply made and their results
// (llm.Tool messages), as the reply's model wrote and was given them, so
// the prompt renders what its KV cache holds; the reply's words follow
// (AddAssistant), which trims the history.
func (h *History) AddToolRounds(msgs []Message) {
	if len(msgs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, msgs...)
}

// Last is the content of the latest message of role, "" if none: the
// reply to say again, the language the user speaks.
func (h *History) Last(role Role) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if h.msgs[i].Role == role {
			return h.msgs[i].Content
		}
	}
	return ""
}

// Messages is the conversation to send to the model: the system prompt
// followed by the remembered turns.
func (h *History) Messages() []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.withSystem(h.msgs)
}

// withSystem copies msgs behind the system prompt.
func (h *History) withSystem(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs)+1)
	if h.system != "" {
		out = append(out, Message{Role: System, Content: h.system})
	}
	return append(out, msgs...)
}

// Clear forgets every turn but keeps the system prompt.
func (h *History) Clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = nil
}

func whole(max int) int         { return max }
func threeQuarters(max int) int { return max * 3 / 4 }

// trimmed drops whole exchanges from the front of msgs (a user message and
// the replies that follow it) once they are over a budget's over(max),
// until they fit in half of every budget, always keeping the newest user
// message so the model has something to answer; it returns what is left
// and how many messages went. Trimming to half rather than just under the
// budget keeps the conversation's start the same for the turns after: an
// engine that keeps its KV cache across replies (llm/mnn) must run again
// every token after the first one that changed, so dropping one exchange a
// turn would prefill the whole history on every turn once it is full.
func trimmed(msgs []Message, budgets []budget, over func(max int) int) ([]Message, int) {
	totals := make([]int, len(budgets))
	for i, b := range budgets {
		if b.max > 0 {
			for _, m := range msgs {
				totals[i] += b.size(m.Content)
			}
		}
	}
	past := func(limit func(int) int) bool {
		for i, b := range budgets {
			if b.max > 0 && totals[i] > limit(b.max) {
				return true
			}
		}
		return false
	}
	if !past(over) {
		return msgs, 0
	}
	n := len(msgs)
	for past(func(max int) int { return max / 2 }) {
		drop := 1
		for drop < len(msgs) && msgs[drop].Role != User {
			drop++
		}
		if drop == len(msgs) {
			break // the newest exchange: keep its user message and replies
		}
		for i, b := range budgets {
			if b.max > 0 {
				for _, m := range msgs[:drop] {
					totals[i] -= b.size(m.Content)
				}
			}
		}
		msgs = msgs[drop:]
	}
	return msgs, n - len(msgs)
}
