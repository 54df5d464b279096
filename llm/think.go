package llm

import (
	"strings"
	"unicode"
)

// The tags around a reasoning model's thinking (Qwen3 and the models made
// like it, MNN-Pocket among them).
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// ThinkFilter passes a streamed reply on without the model's thinking,
// which is not for the user to hear: every <think>...</think> span is
// dropped with the white space after it (Qwen3 told not to think other
// than by its template, with /no_think, still starts its reply with an
// empty "<think>\n\n</think>\n\n"), and so is an unclosed one at the end of
// the reply. A tag may come split over pieces, so text that could be the
// start of one is held until the next piece settles it. Nothing empty is
// passed on: the first piece passed is the first of the reply proper.
type ThinkFilter struct {
	emit  func(string) error
	state thinkState
	held  string // the end of the text so far, which may start a tag
}

type thinkState int

const (
	replying thinkState = iota
	thinking
	afterThinking // dropping the white space after </think>
)

// NewThinkFilter returns a filter that passes what it keeps of each piece
// to emit.
func NewThinkFilter(emit func(string) error) *ThinkFilter {
	return &ThinkFilter{emit: emit}
}

// Write takes the next piece of the reply, and returns emit's error.
func (f *ThinkFilter) Write(piece string) error {
	text := f.held + piece
	f.held = ""
	var out strings.Builder
	for text != "" {
		switch f.state {
		case replying:
			i := strings.Index(text, thinkOpen)
			if i < 0 {
				keep := len(text) - tagStart(text, thinkOpen)
				out.WriteString(text[:keep])
				f.held, text = text[keep:], ""
				continue
			}
			out.WriteString(text[:i])
			text, f.state = text[i+len(thinkOpen):], thinking
		case thinking:
			i := strings.Index(text, thinkClose)
			if i < 0 {
				f.held, text = text[len(text)-tagStart(text, thinkClose):], ""
				continue
			}
			text, f.state = text[i+len(thinkClose):], afterThinking
		case afterThinking:
			if text = strings.TrimLeftFunc(text, unicode.IsSpace); text != "" {
				f.state = replying
			}
		}
	}
	return f.pass(out.String())
}

// Flush ends the reply: what was held as the possible start of a tag is
// text after all, unless it was thinking that never closed.
func (f *ThinkFilter) Flush() error {
	held := f.held
	f.held = ""
	if f.state != replying {
		return nil
	}
	return f.pass(held)
}

func (f *ThinkFilter) pass(text string) error {
	if text == "" {
		return nil
	}
	return f.emit(text)
}

// tagStart is the length of the longest end of text that is the start of
// tag but not all of it.
func tagStart(text, tag string) int {
	for n := min(len(text), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(text, tag[:n]) {
			return n
		}
	}
	return 0
}
