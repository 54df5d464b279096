package llm

import (
	"sync"
	"unicode/utf8"
)

// History is the conversation the assistant remembers. It is safe for
// concurrent use (the GUI clears it while the pipeline appends).
type History struct {
	mu     sync.Mutex
	system string
	// maxChars bounds the characters sent to the model besides the system
	// prompt; the oldest exchanges are dropped first. Zero means no bound.
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
	if n := len(h.msgs); n > 0 && h.msgs[n-1].Role == User {
		h.msgs[n-1].Content += "\n" + text
	} else {
		h.msgs = append(h.msgs, Message{Role: User, Content: text})
	}
	h.trimLocked()
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
	h.msgs = append(h.msgs, Message{Role: Assistant, Content: text, Interrupted: interrupted})
	h.trimLocked()
}

// Messages is the conversation to send to the model: the system prompt
// followed by the remembered turns.
func (h *History) Messages() []Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Message, 0, len(h.msgs)+1)
	if h.system != "" {
		out = append(out, Message{Role: System, Content: h.system})
	}
	return append(out, h.msgs...)
}

// Clear forgets every turn but keeps the system prompt.
func (h *History) Clear() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = nil
}

// trimLocked drops whole exchanges from the front (a user message and the
// replies that follow it) until the budget holds, always keeping the
// newest user message so the model has something to answer.
func (h *History) trimLocked() {
	if h.maxChars <= 0 {
		return
	}
	total := 0
	for _, m := range h.msgs {
		total += utf8.RuneCountInString(m.Content)
	}
	for total > h.maxChars {
		drop := 1
		for drop < len(h.msgs) && h.msgs[drop].Role != User {
			drop++
		}
		if drop == len(h.msgs) {
			break // the newest exchange: keep its user message and replies
		}
		for _, m := range h.msgs[:drop] {
			total -= utf8.RuneCountInString(m.Content)
		}
		h.msgs = h.msgs[drop:]
	}
}
