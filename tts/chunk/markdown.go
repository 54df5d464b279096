package chunk

// The markdown stage of a Chunker: raw input turned into speakable text.

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// process turns as much raw input into speakable text as can be decided
// now; final means the input is complete.
func (c *Chunker) process(final bool) {
	for c.rp < len(c.raw) && c.step(c.raw[c.rp:], final) {
	}
	switch {
	case c.rp == len(c.raw):
		c.raw, c.rp = c.raw[:0], 0
	case c.rp >= 4096 && c.rp > len(c.raw)/2:
		c.raw = c.raw[:copy(c.raw, c.raw[c.rp:])]
		c.rp = 0
	}
}

// step consumes the next token of b (the unconsumed input), or reports
// false if more input is needed to know what it is. With final it always
// makes progress.
func (c *Chunker) step(b []byte, final bool) bool {
	switch {
	case b[0] == '\n':
		c.rp++
		c.bol, c.skipLine, c.code, c.link, c.prev, c.emoji = true, false, 0, 0, '\n', false
		c.endLine()
		return true
	case c.skipLine:
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		c.rp += i
		return true
	case c.bol && c.fence != 0:
		return c.fenceLine(b, final)
	case c.bol:
		return c.lineStart(b, final)
	}
	return c.inline(b, final)
}

// lineStart consumes the markers at the start of a line.
func (c *Chunker) lineStart(b []byte, final bool) bool {
	if i := blanks(b, 0); i > 0 {
		c.rp += i // indentation is not spoken
		return true
	}
	if ch := b[0]; ch == '`' || ch == '~' {
		n := run(b, ch)
		if n == len(b) && n < maxRun && !final {
			return false // "``" may be the start of "```"
		}
		if n >= 3 {
			c.fence, c.fenceLen = ch, n
			c.rp += n
			c.bol, c.skipLine = false, true // the info string is not spoken
			return true
		}
	}
	// A line of rule characters only is a rule, a table separator row or a
	// setext underline.
	j := 0
	for j < len(b) && j < maxRun && (isRuleByte(b[j]) || b[j] == ' ' || b[j] == '\t') {
		j++
	}
	switch {
	case j == maxRun:
		c.bol, c.skipLine = false, true
		return true
	case j == len(b) && !final:
		return false
	case j == len(b) || b[j] == '\n':
		c.rp += j
		return true
	}
	k, ok := markers(b, final)
	if !ok {
		return false
	}
	c.rp += k
	c.bol, c.prev = false, ' '
	return true
}

// markers returns the length of the block markers (quote marks, list
// markers, task boxes, heading marks) at the start of b, or false if more
// input is needed to tell.
func markers(b []byte, final bool) (int, bool) {
	list := false
	// more: b[k:] may still turn out to be a marker.
	more := func(k int) (int, bool) { return k, final }
	for k := 0; ; {
		k = blanks(b, k)
		if k >= maxRun {
			return k, true
		}
		if k == len(b) {
			return more(k)
		}
		switch ch := b[k]; {
		case ch == '>':
			k++
			continue
		case ch == '-' || ch == '+' || ch == '*':
			if k+1 == len(b) {
				return more(k)
			}
			if b[k+1] == ' ' || b[k+1] == '\t' {
				k, list = k+2, true
				continue
			}
		case isDigit(ch):
			d := k
			for d < len(b) && d-k <= 3 && isDigit(b[d]) {
				d++
			}
			if d-k > 3 { // a number, not a list item
				return k, true
			}
			if d == len(b) || d+1 == len(b) && (b[d] == '.' || b[d] == ')') {
				return more(k)
			}
			if (b[d] == '.' || b[d] == ')') && (b[d+1] == ' ' || b[d+1] == '\t') {
				k, list = d+2, true
				continue
			}
		case ch == '#':
			n := run(b[k:min(len(b), k+7)], '#')
			if k+n == len(b) {
				return more(k)
			}
			if n <= 6 && (b[k+n] == ' ' || b[k+n] == '\t') {
				return k + n, true
			}
		case ch == '[' && list:
			if k+3 >= len(b) {
				return more(k)
			}
			if (b[k+1] == ' ' || b[k+1] == 'x' || b[k+1] == 'X') && b[k+2] == ']' && (b[k+3] == ' ' || b[k+3] == '\t') {
				k += 4
				continue
			}
		}
		return k, true
	}
}

// fenceLine handles a line inside a code block: a closing fence ends the
// block, anything else is dropped.
func (c *Chunker) fenceLine(b []byte, final bool) bool {
	if i := blanks(b, 0); i > 0 {
		c.rp += i
		return true
	}
	if b[0] == c.fence {
		n := run(b, c.fence)
		j := blanks(b[:min(len(b), n+maxRun)], n)
		if j == len(b) && j < n+maxRun && !final {
			return false
		}
		if n >= c.fenceLen && (j == len(b) || b[j] == '\n') {
			c.fence = 0
			c.rp += j
			c.bol = false
			return true
		}
	}
	c.bol, c.skipLine = false, true
	return true
}

// inline consumes one character (or markup run) inside a line.
func (c *Chunker) inline(b []byte, final bool) bool {
	r, size := rune(b[0]), 1
	if r >= utf8.RuneSelf {
		if !final && !utf8.FullRune(b) {
			return false // a character split across pieces
		}
		r, size = utf8.DecodeRune(b)
	}
	if c.link > 0 { // a link destination is not spoken
		switch r {
		case '(':
			c.link++
		case ')':
			c.link--
		}
		c.rp += size
		c.prev = r
		return true
	}
	if r < utf8.RuneSelf {
		return c.ascii(b, byte(r), final)
	}
	emoji := false
	switch {
	case r == utf8.RuneError && size == 1: // not UTF-8
	case unicode.IsSpace(r):
		c.space = true
	case isEmojiPart(r) || isPictographic(r):
		emoji = true
	case r == zwj && c.emoji:
		emoji = true
	case r != zwj && r != zwnj && unicode.Is(unicode.Cf, r), unicode.IsControl(r):
	default:
		c.emit(r)
	}
	c.emoji = emoji
	c.rp += size
	c.prev = r
	return true
}

const (
	zwj  = '\u200d'
	zwnj = '\u200c'
	// keycap is the tail of a keycap emoji such as 1️⃣.
	keycap = "\ufe0f\u20e3"
)

// ascii handles an ASCII character at the start of b.
//
// The markup readers it calls return how many bytes they consume and the
// last character consumed, or 0 when their reading depends on bytes that
// have not come yet.
func (c *Chunker) ascii(b []byte, ch byte, final bool) bool {
	n := 1           // bytes consumed
	prev := rune(ch) // the last character consumed
	code := c.code > 0
	switch {
	case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f':
		c.space = true
	case ch == '`':
		n = c.backticks(b, final)
	case (ch == '*' || ch == '_' || ch == '~') && !code:
		n = c.emphasis(b, ch, final)
	case ch == '[' && !code:
	case ch == ']' && !code:
		n, prev = c.closeBracket(b, final)
	case ch == '!' && !code:
		n = c.bang(b, final)
	case ch == '|' && !code:
		c.space = true
	case ch == '\\' && !code:
		n, prev = c.escape(b, final)
	case isDigit(ch) || ch == '#' || ch == '*':
		n, prev = c.keycapBase(b, ch, final)
	case ch < 0x20 || ch == 0x7f: // control characters are not spoken
	default:
		c.emit(rune(ch))
	}
	if n == 0 {
		return false
	}
	c.emoji = prev == 0x20e3
	c.rp += n
	c.prev = prev
	return true
}

// backticks opens or closes inline code with a run of backticks; a run
// closes only the code that a run of its own length opened.
func (c *Chunker) backticks(b []byte, final bool) int {
	n := run(b, '`')
	if n == len(b) && n < maxRun && !final {
		return 0
	}
	switch c.code {
	case 0:
		c.code = n
	case n:
		c.code = 0
	}
	return n
}

// emphasis drops a run of emphasis marks, or speaks it where it is not
// markup: between blanks, "*" between digits ("2*3"), "_" inside a word
// ("snake_case"), a single "~".
func (c *Chunker) emphasis(b []byte, ch byte, final bool) int {
	n := run(b, ch)
	next := '\n'
	if n == maxRun {
		next = rune(ch) // a long run is dropped in pieces
	} else if n < len(b) {
		if !final && !utf8.FullRune(b[n:]) {
			return 0
		}
		next, _ = utf8.DecodeRune(b[n:])
	} else if !final {
		return 0
	}
	prevBlank, nextBlank := isBlank(c.prev), isBlank(next)
	var literal bool
	switch ch {
	case '*':
		literal = prevBlank && nextBlank || isDigitRune(c.prev) && isDigitRune(next)
	case '_':
		literal = prevBlank && nextBlank || isWordRune(c.prev) && isWordRune(next)
	case '~':
		literal = n == 1 || prevBlank && nextBlank
	}
	if literal {
		for range n {
			c.emit(rune(ch))
		}
	}
	return n
}

// closeBracket drops the "]" of a link's text, and with "](" enters its
// destination, which is not spoken.
func (c *Chunker) closeBracket(b []byte, final bool) (int, rune) {
	if len(b) < 2 && !final {
		return 0, 0
	}
	if len(b) >= 2 && b[1] == '(' {
		c.link = 1
		return 2, '('
	}
	return 1, ']'
}

// bang speaks a "!" unless it marks an image.
func (c *Chunker) bang(b []byte, final bool) int {
	if len(b) < 2 && !final {
		return 0
	}
	if len(b) < 2 || b[1] != '[' {
		c.emit('!')
	}
	return 1
}

// escape speaks the punctuation a backslash escapes; a backslash before
// a line break is a hard line break, and any other is spoken.
func (c *Chunker) escape(b []byte, final bool) (int, rune) {
	if len(b) < 2 && !final {
		return 0, 0
	}
	switch {
	case len(b) < 2:
		c.emit('\\')
	case b[1] == '\n': // a hard line break
	case isASCIIPunct(b[1]):
		c.emit(rune(b[1]))
		return 2, rune(b[1])
	default:
		c.emit('\\')
	}
	return 1, '\\'
}

// keycapBase speaks a digit, "#" or "*", taking in the keycap that makes
// it an emoji such as 1️⃣, which is not spoken.
func (c *Chunker) keycapBase(b []byte, ch byte, final bool) (int, rune) {
	rest := b[1:]
	if !final && (isPrefix(rest, keycap) || isPrefix(rest, keycap[3:])) {
		return 0, 0
	}
	switch {
	case bytes.HasPrefix(rest, []byte(keycap)):
		return 1 + len(keycap), 0x20e3
	case bytes.HasPrefix(rest, []byte(keycap[3:])):
		return 1 + len(keycap) - 3, 0x20e3
	}
	c.emit(rune(ch))
	return 1, rune(ch)
}

// emit appends a speakable character, after a space if whitespace came
// before it and neither neighbour is CJK.
func (c *Chunker) emit(r rune) {
	if c.space {
		c.space = false
		if c.last != 0 && !isCJK(c.last) && !isCJK(r) {
			c.buf = append(c.buf, ' ')
		}
	}
	c.buf = utf8.AppendRune(c.buf, r)
	c.last = r
}

// endLine ends the current line: its text is finished.
func (c *Chunker) endLine() {
	c.space = false
	if c.last == 0 {
		return
	}
	c.last = 0
	if c.speaking {
		c.spoken = joinTo(c.spoken, c.buf)
		c.buf = c.buf[:0]
		return
	}
	c.split(true)
	c.cut(len(c.buf), len(c.buf))
	c.buf, c.start, c.scan = c.buf[:0], 0, 0
}

func blanks(b []byte, k int) int {
	for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	return k
}

// run returns the length of the run of ch at the start of b, up to maxRun.
func run(b []byte, ch byte) int {
	n := 0
	for n < len(b) && n < maxRun && b[n] == ch {
		n++
	}
	return n
}

// isPrefix reports whether b is a proper prefix of s: more input may
// complete it.
func isPrefix(b []byte, s string) bool {
	return len(b) < len(s) && strings.HasPrefix(s, string(b))
}
