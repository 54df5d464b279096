package mnn

import (
	"strings"
	"unicode/utf8"
)

// stream reassembles UTF-8 from the engine's pieces (a token can end in
// the middle of a multi-byte character) and hands whole characters on.
type stream struct {
	emit    func(string) error
	pending []byte
	err     error
	text    strings.Builder // everything emitted
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
	s.pass(string(s.pending[:n]))
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

// flush passes on what is left at the end of a reply, repairing bytes that
// never became a character.
func (s *stream) flush() error {
	if s.err == nil && len(s.pending) > 0 {
		s.pass(strings.ToValidUTF8(string(s.pending), "\ufffd"))
		s.pending = nil
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

func (s *stream) pass(piece string) {
	s.text.WriteString(piece)
	s.err = s.emit(piece)
}
