package mnn

import (
	"strings"
	"unicode/utf8"

	"github.com/voiceassistant/voice/llm"
)

// stream reassembles UTF-8 from the engine's pieces (a token can end in
// the middle of a multi-byte character) and hands whole characters on,
// without the model's thinking: every reply passes here, and a model that
// thinks (a Qwen3-style template with thinking on, or one that ignores
// enable_thinking) would otherwise speak its reasoning.
type stream struct {
	out     *llm.ThinkFilter
	pending []byte
	err     error
}

func newStream(emit func(string) error) *stream {
	return &stream{out: llm.NewThinkFilter(emit)}
}

func (s *stream) write(p []byte) {
	if s.err != nil {
		return
	}
	s.pending = append(s.pending, p...)
	n := completeUTF8(s.pending)
	if n == 0 {
		return
	}
	s.err = s.out.Write(string(s.pending[:n]))
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

// flush passes on what is left at the end of a reply, repairing bytes that
// never became a character.
func (s *stream) flush() error {
	if s.err == nil && len(s.pending) > 0 {
		s.err = s.out.Write(strings.ToValidUTF8(string(s.pending), "\ufffd"))
		s.pending = nil
	}
	if s.err == nil {
		s.err = s.out.Flush()
	}
	return s.err
}

// completeUTF8 is the length of the longest prefix of b that does not end
// inside a multi-byte character.
func completeUTF8(b []byte) int {
	for back := 1; back <= utf8.UTFMax && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < utf8.RuneSelf {
			return len(b) // ASCII: everything before it is whole
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-back:]) {
				return len(b)
			}
			return len(b) - back
		}
	}
	return len(b) // not UTF-8 at all: pass it on for emit to deal with
}
