package llm

import (
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
	// (see trimmed). Zero means no bound.
	maxChars int
	msgs     []Message
}

// NewHistory returns an empty history with a system prompt and a budget.
func NewHistory(system string, maxChars int) *History {
	return &History{system: system, maxChars: maxChars}
}

// AddUser appends a committed user turn. A user turn that follows one
// never answered (its reply failed, or was interrupted before a word was
// heard) joins it, so the conversation alternates as chat templates expect.
func (h *History) AddUser(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = trimmed(withUser(h.msgs, text), h.maxChars)
}

// WithUser is the conversation Messages would return after AddUser(text),
// leaving the history as it is: what a reply speculated before the turn
// is committed answers.
func (h *History) WithUser(text string) []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.withSystem(trimmed(withUser(slices.Clone(h.msgs), text), h.maxChars))
}

func withUser(msgs []Message, text string) []Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == User {
		msgs[n-1].Content += "\n" + text
		return msgs
	}
	return append(msgs, Message{Role: User, Content: text})
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

// AddAssistant appends a reply. An interrupted reply holds only what was
// played; if nothing was played it is not remembered at all, since the
// user never heard it.
func (h *History) AddAssistant(text string, interrupted bool) {
	if text == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = trimmed(append(h.msgs, Message{Role: Assistant, Content: text, Interrupted: interrupted}), h.maxChars)
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

// trimmed drops whole exchanges from the front of msgs (a user message and
// the replies that follow it) once they are over maxChars, until they fit
// in half of it, always keeping the newest user message so the model has
// something to answer. Trimming to half rather than just under the budget
// keeps the conversation's start the same for the turns after: an engine
// that keeps its KV cache across replies (llm/mnn) must run again every
// token after the first one that changed, so dropping one exchange a turn
// would prefill the whole history on every turn once it is full.
func trimmed(msgs []Message, maxChars int) []Message {
	if maxChars <= 0 {
		return msgs
	}
	total := 0
	for _, m := range msgs {
		total += utf8.RuneCountInString(m.Content)
	}
	if total <= maxChars {
		return msgs
	}
	for total > maxChars/2 {
		drop := 1
		for drop < len(msgs) && msgs[drop].Role != User {
			drop++
		}
		if drop == len(msgs) {
			break // the newest exchange: keep its user message and replies
		}
		for _, m := range msgs[:drop] {
			total -= utf8.RuneCountInString(m.Content)
		}
		msgs = msgs[drop:]
	}
	return msgs
}
