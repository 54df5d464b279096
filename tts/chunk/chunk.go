// Package chunk turns a streamed reply into speakable pieces as it arrives:
// the first piece as early as it can be spoken naturally, later ones at
// sentence or clause boundaries.
//
// # Speakable text
//
// A TTS should say what a reader would hear, not the markup around it. The
// speakable text of a reply (see [Speakable]) is the reply with:
//
//   - code fences removed: every line from a line that starts with ``` or
//     ~~~ (three or more, after optional indentation) through the matching
//     closing fence, or through the end of the reply if there is none;
//   - line markup removed: heading marks (# to ######), block quote marks
//     (>), list markers (-, *, + and 1. or 1) followed by a space, and task
//     boxes [ ] / [x] after them), and lines made only of - * _ = | : + ~ > #
//     and blanks (rules, table separator rows, setext underlines);
//   - inline markup removed: emphasis runs of * and _ and strike-through ~~
//     (but an asterisk between blanks or digits, as in "2 * 3" and "2*3",
//     an underscore inside a word, as in snake_case, and a single ~ are
//     text), the backticks of `code` spans (their contents are kept
//     verbatim), the brackets of links and images and their destinations
//     ([text](url) and ![alt](url) become "text" and "alt"), table pipes
//     (which separate words), and the backslash of an escaped punctuation
//     mark or of a hard line break;
//   - emoji and pictographic symbols removed: Extended_Pictographic
//     characters, other symbols (Unicode So) in the arrow, technical,
//     geometric, dingbat and emoji blocks, bullets, variation selectors,
//     skin-tone modifiers, regional indicators, tags, keycap sequences and
//     the zero-width joiners that bind emoji sequences;
//   - invisible characters removed: control and format characters (ZWJ and
//     ZWNJ outside emoji excepted) and bytes that are not valid UTF-8;
//   - whitespace normalized: every run of blanks and line breaks becomes one
//     space, none at the start or the end, and none next to a CJK character
//     (Han, kana, bopomofo, CJK punctuation, full-width forms), which is
//     written without spaces.
//
// The chunks of a reply are its speakable text cut into pieces: joining them
// with [Join] (a space between chunks, nothing where either side of the seam
// is CJK) gives back [Speakable] of the reply exactly, and the chunks depend
// only on the reply, never on how it was split into pieces.
//
// # Chunk boundaries
//
// Every line break ends a chunk, so headings, list items and table rows are
// chunks of their own. Within a line a chunk ends:
//
//   - after a sentence end: . ! ? ; (and runs such as ?! or ...) followed
//     by a space or a CJK character, or 。！？；… (with any closing quotes or
//     brackets after them); not after the period of an abbreviation (Dr.,
//     e.g., U.S., initials such as J.), nor after etc., a.m., p.m., Inc.
//     and the like unless the next word is capitalized; decimals (3.14),
//     times (10:30), numbers with separators (1,000,000 and 1.000,50), URLs
//     and e-mail addresses have no space after their marks, so they are
//     never split;
//   - for the first chunk only, at a space (one that may end a chunk, as
//     below) once the chunk holds Config.FirstWords words, so synthesis
//     can start after a few words rather than a whole sentence;
//   - for the first chunk, and the second after a first chunk cut short by
//     FirstWords (so it is ready before those few words have been spoken),
//     also after a clause mark (, : followed by a space or CJK, or ，、：)
//     once the chunk is Config.FirstMin characters long;
//   - when a chunk reaches Config.Max characters without a boundary: at its
//     last clause mark, else its last space (not the one after a title or an
//     initial, nor the one in "3 p.m."), else—for CJK text without
//     spaces—between two characters. A single word longer than Max (a long
//     URL, say) is never cut: it ends at the next boundary of any kind.
package chunk

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config bounds chunk lengths in characters (runes of speakable text).
type Config struct {
	// FirstMin is the shortest first chunk that may end at a clause
	// boundary (a comma); shorter openers wait for more text.
	FirstMin int `yaml:"first_min"`
	// FirstWords ends the first chunk at the space after this many words
	// (0: only at a clause or sentence end). Text without spaces (Chinese)
	// is not affected.
	FirstWords int `yaml:"first_words"`
	// Max forces a split at the best boundary so synthesis never waits on
	// a run-on sentence. Zero means no limit.
	Max int `yaml:"max"`
}

// Validate names the first setting that makes no sense, by its config key.
func (c Config) Validate() error {
	for _, v := range []struct {
		key string
		n   int
	}{{"first_min", c.FirstMin}, {"first_words", c.FirstWords}, {"max", c.Max}} {
		if v.n < 0 || v.n > 100000 {
			return fmt.Errorf("%s: %d is not between 0 and 100000", v.key, v.n)
		}
	}
	return nil
}

// DefaultConfig suits speech at ~3 words/s: a first chunk of two words,
// which an LLM at 30 tokens/s has written some 70 ms after its first
// token (a whole first sentence takes over half a second), later chunks up
// to a long sentence. The first two words are synthesized on their own,
// which a listener may hear as a slight seam after them; FirstWords 0
// trades that for latency.
func DefaultConfig() Config { return Config{FirstMin: 12, FirstWords: 2, Max: 200} }

// Chunker turns the pieces of one streamed reply into chunks of speakable
// text. It works in two stages: the markdown stage turns raw input into
// speakable text as soon as its meaning is known, and the split stage cuts
// that text into chunks. Each keeps a read position and looks at most a
// bounded distance ahead, so a Push costs time in proportion to the new
// text, not to what is pending. Not safe for concurrent use.
type Chunker struct {
	cfg Config

	// Markdown stage.
	raw      []byte // input not yet consumed, from rp on
	rp       int
	bol      bool // at the beginning of a line: its markers are not parsed yet
	skipLine bool // dropping the rest of the line (a fence and its body)
	fence    byte // the fence character while in a code block, else 0
	fenceLen int  // the opening fence's length
	code     int  // the backtick run that opened the current code span, or 0
	link     int  // parenthesis depth inside a link destination, or 0
	prev     rune // the last input character consumed, for emphasis rules
	emoji    bool // the last character dropped was part of an emoji
	space    bool // whitespace seen since the last speakable character
	last     rune // the last speakable character of this line, or 0

	// Split stage: buf holds the speakable text of the current line from
	// the start of the pending chunk on.
	buf      []byte
	start    int // where the pending chunk starts in buf
	scan     int // the next character of buf to look at
	runes    int // characters in buf[start:scan]
	spaces   int // spaces in buf[start:scan]: its words, less one
	clauseAt int // the pending chunk's last clause boundary, or 0
	spaceAt  int // its last space that may end it, or 0
	seamAt   int // its last CJK seam, or 0
	over     bool
	emitted  int // chunks emitted so far
	out      []string

	// speaking collects the whole speakable text instead of chunks.
	speaking bool
	spoken   []byte
}

// New returns a chunker for one reply.
func New(cfg Config) *Chunker {
	c := &Chunker{cfg: cfg}
	c.Reset()
	return c
}

// Reset discards everything pending and readies the chunker for a new
// reply, as after New.
func (c *Chunker) Reset() {
	*c = Chunker{cfg: c.cfg, raw: c.raw[:0], buf: c.buf[:0], speaking: c.speaking, spoken: c.spoken[:0]}
	c.bol, c.prev = true, '\n'
}

// Push adds a streamed piece and returns the chunks that are now complete.
// A piece may end anywhere, even inside a UTF-8 character.
func (c *Chunker) Push(piece string) []string {
	c.raw = append(c.raw, piece...)
	c.process(false)
	c.split(false)
	c.compact()
	out := c.out
	c.out = nil
	return out
}

// Flush returns whatever is left at the end of the reply and resets the
// chunker.
func (c *Chunker) Flush() []string {
	c.process(true)
	c.endLine()
	out := c.out
	c.out = nil
	c.Reset()
	return out
}

// Speakable returns the speakable text of a whole reply: what its chunks
// say, joined by [Join]. See the package documentation for the rules.
func Speakable(text string) string {
	c := &Chunker{speaking: true}
	c.Reset()
	c.raw = append(c.raw, text...)
	c.process(true)
	c.endLine()
	return string(c.spoken)
}

// Join joins chunks back into speakable text: with a space between two
// chunks, or nothing where the character on either side is CJK.
func Join(chunks []string) string {
	var b []byte
	for _, s := range chunks {
		b = joinTo(b, s)
	}
	return string(b)
}

func joinTo[S string | []byte](b []byte, s S) []byte {
	if len(s) == 0 {
		return b
	}
	if len(b) > 0 {
		last, _ := utf8.DecodeLastRune(b)
		first, _ := utf8.DecodeRune([]byte(s[:min(len(s), utf8.UTFMax)]))
		if !isCJK(last) && !isCJK(first) {
			b = append(b, ' ')
		}
	}
	return append(b, s...)
}

// ---- Markdown stage ----

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
func (c *Chunker) ascii(b []byte, ch byte, final bool) bool {
	n := 1           // bytes consumed
	prev := rune(ch) // the last character consumed
	code := c.code > 0
	switch {
	case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f':
		c.space = true
	case ch == '`':
		n = run(b, '`')
		if n == len(b) && n < maxRun && !final {
			return false
		}
		switch c.code {
		case 0:
			c.code = n
		case n:
			c.code = 0
		}
	case (ch == '*' || ch == '_' || ch == '~') && !code:
		n = run(b, ch)
		next := '\n'
		if n == maxRun {
			next = rune(ch) // a long run is dropped in pieces
		} else if n < len(b) {
			if !final && !utf8.FullRune(b[n:]) {
				return false
			}
			next, _ = utf8.DecodeRune(b[n:])
		} else if !final {
			return false
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
	case ch == '[' && !code:
	case ch == ']' && !code:
		if len(b) < 2 && !final {
			return false
		}
		if len(b) >= 2 && b[1] == '(' {
			c.link, n, prev = 1, 2, '('
		}
	case ch == '!' && !code:
		if len(b) < 2 && !final {
			return false
		}
		if len(b) < 2 || b[1] != '[' { // else the mark of an image
			c.emit('!')
		}
	case ch == '|' && !code:
		c.space = true
	case ch == '\\' && !code:
		if len(b) < 2 && !final {
			return false
		}
		switch {
		case len(b) < 2:
			c.emit('\\')
		case b[1] == '\n': // a hard line break
		case isASCIIPunct(b[1]):
			ch, n, prev = b[1], 2, rune(b[1])
			c.emit(rune(ch))
		default:
			c.emit('\\')
		}
	case isDigit(ch) || ch == '#' || ch == '*':
		rest := b[1:]
		if !final && (isPrefix(rest, keycap) || isPrefix(rest, keycap[3:])) {
			return false
		}
		switch {
		case bytes.HasPrefix(rest, []byte(keycap)):
			n, prev = n+len(keycap), 0x20e3
		case bytes.HasPrefix(rest, []byte(keycap[3:])):
			n, prev = n+len(keycap)-3, 0x20e3
		default:
			c.emit(rune(ch))
		}
	case ch < 0x20 || ch == 0x7f: // control characters are not spoken
	default:
		c.emit(rune(ch))
	}
	c.emoji = prev == 0x20e3
	c.rp += n
	c.prev = prev
	return true
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

// ---- Split stage ----

// split cuts the chunks that are complete out of buf; final means the line
// ends with buf.
func (c *Chunker) split(final bool) {
	if c.speaking {
		return
	}
	for c.scan < len(c.buf) && c.splitStep(final) {
	}
}

// boundary kinds.
const (
	none = iota
	sentence
	clause
)

// splitStep looks at the character at c.scan, or reports false if more text
// is needed to know whether a chunk may end around it.
func (c *Chunker) splitStep(final bool) bool {
	b := c.buf
	i := c.scan
	r, size := rune(b[i]), 1
	if r >= utf8.RuneSelf {
		r, size = utf8.DecodeRune(b[i:])
	}
	end := i + size
	if end == len(b) && !final {
		return false // every decision looks at the next character
	}
	next := rune(-1)
	if end < len(b) {
		next, _ = utf8.DecodeRune(b[end:])
	}
	if r == ' ' {
		ok, need := c.spaceBreaks(i, final)
		if need {
			return false
		}
		c.scan, c.runes = end, c.runes+1
		c.spaces++
		if ok {
			firstDone := c.emitted == 0 && c.cfg.FirstWords > 0 && c.spaces >= c.cfg.FirstWords
			if c.over || firstDone {
				c.cut(i, end)
				return true
			}
			c.spaceAt = i
		}
		c.checkMax(final)
		return true
	}
	kind, at, need := c.boundary(i, r, end, next, final)
	if need {
		return false
	}
	if kind == sentence {
		// A run of marks may take the chunk past Max: then split it
		// earlier if it can be.
		if c.cfg.Max <= 0 || c.runes+utf8.RuneCount(b[i:at]) <= c.cfg.Max || !c.cutBest() {
			c.cut(at, at)
		}
		return true
	}
	c.scan, c.runes = end, c.runes+1
	if kind == clause {
		c.clauseAt = end
		if c.over || c.emitted < c.clauseChunks() && c.runes >= c.cfg.FirstMin {
			c.cut(end, end)
			return true
		}
	}
	if next >= 0 && isSeam(r, next) {
		c.seamAt = end
		if c.over {
			c.cut(end, end)
			return true
		}
	}
	c.checkMax(final)
	return true
}

// checkMax cuts the pending chunk at its best boundary once it is Max
// characters long, or lets it run on to the next boundary of any kind if it
// has none (a single long word).
func (c *Chunker) checkMax(final bool) {
	if c.cfg.Max <= 0 || c.over || c.runes < c.cfg.Max || final && c.scan == len(c.buf) {
		return
	}
	c.over = !c.cutBest()
}

// cutBest cuts the pending chunk at its best boundary so far, if it has
// one: the last clause mark, else the last space, else the last CJK seam.
func (c *Chunker) cutBest() bool {
	switch {
	case c.clauseAt > 0:
		c.cut(c.clauseAt, c.clauseAt)
	case c.spaceAt > 0:
		c.cut(c.spaceAt, c.spaceAt+1)
	case c.seamAt > 0:
		c.cut(c.seamAt, c.seamAt)
	default:
		return false
	}
	return true
}

// cut emits buf[start:end] as a chunk and starts the next one at next (or
// after the space there).
func (c *Chunker) cut(end, next int) {
	if end > c.start {
		c.out = append(c.out, string(c.buf[c.start:end]))
		c.emitted++
	}
	if next < len(c.buf) && c.buf[next] == ' ' {
		next++
	}
	c.start, c.scan, c.runes, c.spaces = next, next, 0, 0
	c.clauseAt, c.spaceAt, c.seamAt, c.over = 0, 0, 0, false
}

// compact drops emitted text from buf.
func (c *Chunker) compact() {
	if c.start < 4096 || c.start < len(c.buf)/2 {
		return
	}
	c.buf = c.buf[:copy(c.buf, c.buf[c.start:])]
	c.scan -= c.start
	for _, p := range []*int{&c.clauseAt, &c.spaceAt, &c.seamAt} {
		if *p > 0 {
			*p -= c.start
		}
	}
	c.start = 0
}

// boundary classifies the position after r (at b[i:end]): the end of a
// sentence (the chunk ends at at), a clause boundary, or none.
func (c *Chunker) boundary(i int, r rune, end int, next rune, final bool) (kind, at int, need bool) {
	b := c.buf
	switch {
	case isCJKTerminal(r):
		j, need := runEnd(b, end, final, func(r rune) bool { return isCJKTerminal(r) || isCloser(r) })
		if need || j < 0 || j == len(b) || !cuttable(b, j) {
			return none, 0, need
		}
		return sentence, j, false
	case r == '.' || r == '!' || r == '?' || r == ';':
		j, need := runEnd(b, end, final, func(r rune) bool { return r == '.' || r == '!' || r == '?' || r == ';' || isCloser(r) })
		if need || j < 0 || j == len(b) {
			return none, 0, need
		}
		after, _ := utf8.DecodeRune(b[j:])
		if after != ' ' && !isCJK(after) {
			return none, 0, false // 3.14, e.g, example.com, ?c=d
		}
		if r == '.' && (end == len(b) || b[end] != '.') {
			switch classify(b[c.start:i]) {
			case never:
				return none, 0, false
			case unlessCapital:
				w := after
				if w == ' ' {
					w, _ = utf8.DecodeRune(b[j+1:])
				}
				if !unicode.IsUpper(w) && !isCJK(w) {
					return none, 0, false
				}
			}
		}
		return sentence, j, false
	case r == ',' || r == ':':
		if next == ' ' || next >= 0 && isCJK(next) {
			return clause, 0, false
		}
	case isCJKClause(r):
		if next < 0 || !isCloser(next) {
			return clause, 0, false
		}
	}
	return none, 0, false
}

// runEnd returns the end of the run of characters in b from j on that
// satisfy in, or need if the run reaches the end of the text so far. A run
// longer than maxRun bytes ends nothing (-1).
func runEnd(b []byte, j int, final bool, in func(rune) bool) (int, bool) {
	for limit := j + maxRun; j < len(b); {
		r, size := utf8.DecodeRune(b[j:])
		if !in(r) {
			return j, false
		}
		if j += size; j > limit {
			return -1, false
		}
	}
	return j, !final
}

// cuttable reports whether a chunk may end at j without losing the space
// that Join restores: a space follows, or a CJK character is on either
// side.
func cuttable(b []byte, j int) bool {
	before, _ := utf8.DecodeLastRune(b[:j])
	after, _ := utf8.DecodeRune(b[j:])
	return after == ' ' || isCJK(before) || isCJK(after)
}

// spaceBreaks reports whether a Max split may happen at the space at i: not
// after a title or an initial ("Dr. Smith", "J. Doe"), nor between a number
// and a.m./p.m.
func (c *Chunker) spaceBreaks(i int, final bool) (ok, need bool) {
	b := c.buf
	if i > c.start && b[i-1] == '.' && classify(b[c.start:i-1]) == never {
		return false, false
	}
	if i > c.start && isDigit(b[i-1]) {
		match, need := amPM(b[i+1:], final)
		return !match, need
	}
	return true, false
}

// amPM reports whether b starts with am, a.m., pm or p.m. as a word.
func amPM(b []byte, final bool) (match, need bool) {
	if len(b) == 0 {
		return false, !final
	}
	if ch := b[0] | 0x20; ch != 'a' && ch != 'p' {
		return false, false
	}
	k := 1
	if k < len(b) && b[k] == '.' {
		k++
	}
	if k == len(b) {
		return false, !final
	}
	if b[k]|0x20 != 'm' {
		return false, false
	}
	k++
	switch {
	case k == len(b):
		return final, !final
	case b[k] == '.':
		return true, false
	}
	r, _ := utf8.DecodeRune(b[k:])
	return !unicode.IsLetter(r), false
}

// Abbreviation classes: a period after one never ends a sentence, or ends
// it only if the next word is capitalized.
const (
	notAbbrev = iota
	never
	unlessCapital
)

var abbreviations = map[string]int{
	// Titles and words that are followed by more of the sentence.
	"mr": never, "mrs": never, "ms": never, "mx": never, "dr": never, "prof": never,
	"rev": never, "hon": never, "gen": never, "col": never, "lt": never, "sgt": never,
	"capt": never, "cmdr": never, "adm": never, "gov": never, "sen": never, "rep": never,
	"pres": never, "st": never, "mt": never, "ft": never, "fr": never, "vs": never,
	"cf": never, "viz": never, "approx": never, "fig": never, "figs": never, "vol": never,
	"vols": never, "ch": never, "sec": never, "pp": never, "op": never, "dept": never,
	"est": never, "e.g": never, "i.e": never, "u.s": never, "u.k": never, "u.s.a": never,
	"jan": never, "feb": never, "mar": never, "apr": never, "jun": never, "jul": never,
	"aug": never, "sep": never, "sept": never, "oct": never, "nov": never, "dec": never,
	// Words that often end a sentence too.
	"etc": unlessCapital, "inc": unlessCapital, "ltd": unlessCapital, "co": unlessCapital,
	"corp": unlessCapital, "llc": unlessCapital, "jr": unlessCapital, "sr": unlessCapital,
	"al": unlessCapital, "no": unlessCapital, "ave": unlessCapital, "rd": unlessCapital,
	"blvd": unlessCapital, "a.m": unlessCapital, "p.m": unlessCapital,
}

// classify looks at the word that ends text (a period follows it).
func classify(text []byte) int {
	const longest = 8
	k := len(text)
	for k > 0 && len(text)-k <= longest && (isASCIILetter(text[k-1]) || text[k-1] == '.') {
		k--
	}
	word := text[k:]
	if len(word) == 0 || len(word) > longest || word[0] == '.' {
		return notAbbrev
	}
	if k > 0 {
		// An abbreviation is a word of its own: not "café." or "3rd.", nor
		// the end of "?c=d." or "x/y.".
		if r, _ := utf8.DecodeLastRune(text[:k]); !unicode.IsSpace(r) && !unicode.In(r, unicode.Ps, unicode.Pi) && r != '"' && r != '\'' {
			return notAbbrev
		}
	}
	if len(word) == 1 {
		if word[0] == 'I' {
			return notAbbrev
		}
		return never // an initial: J. Smith
	}
	var lower [longest]byte
	for j, ch := range word {
		lower[j] = ch | 0x20 // a letter or '.', which has the bit set
	}
	if class, ok := abbreviations[string(lower[:len(word)])]; ok {
		return class
	}
	// Letters with periods between them: Ph.D, U.S.A.
	if bytes.IndexByte(word, '.') > 0 {
		for part := range bytes.SplitSeq(word, []byte{'.'}) {
			if len(part) == 0 || len(part) > 2 {
				return notAbbrev
			}
		}
		return never
	}
	return notAbbrev
}

// ---- Character classes ----

func blanks(b []byte, k int) int {
	for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	return k
}

// maxRun bounds the lookahead of every decision, so that a long run of
// the same character arriving in many pieces is not rescanned on every
// Push. Longer runs are taken maxRun bytes at a time: a line that starts
// with maxRun rule characters is a rule, longer runs of markup characters
// are dropped, and a longer run of sentence marks ends no sentence.
const maxRun = 128

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

func isRuleByte(ch byte) bool { return strings.IndexByte("-*_=|:+~>#", ch) >= 0 }

func isDigit(ch byte) bool { return '0' <= ch && ch <= '9' }

func isDigitRune(r rune) bool { return '0' <= r && r <= '9' }

func isASCIILetter(ch byte) bool { return 'a' <= ch|0x20 && ch|0x20 <= 'z' }

func isASCIIPunct(ch byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", ch) >= 0
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isBlank(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || unicode.IsSpace(r) }

func isCJKTerminal(r rune) bool {
	switch r {
	case '。', '｡', '！', '？', '；', '…', '⋯':
		return true
	}
	return false
}

func isCJKClause(r rune) bool {
	switch r {
	case '，', '、', '：', '﹐', '﹑', '､':
		return true
	}
	return false
}

// isCloser: closing quotes and brackets stay with the sentence they close.
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}':
		return true
	}
	return r >= utf8.RuneSelf && unicode.In(r, unicode.Pe, unicode.Pf)
}

// isSeam reports whether a chunk may end between a and b, which have no
// space between them: one of them is CJK, b is no closing or trailing
// punctuation and a no opening one.
func isSeam(a, b rune) bool {
	if b == ' ' || !isCJK(a) && !isCJK(b) {
		return false
	}
	return !unicode.In(a, unicode.Ps, unicode.Pi) && !unicode.In(b, unicode.Pe, unicode.Pf, unicode.Po)
}

// isCJK reports whether r belongs to a script written without spaces
// between words (Han, kana, bopomofo) or is CJK punctuation or a full-width
// form. Hangul, written with spaces, is not.
func isCJK(r rune) bool {
	switch {
	case r < 0x2e80:
		return false
	case 0x4e00 <= r && r <= 0x9fff, 0x3000 <= r && r <= 0x303f, 0xff00 <= r && r <= 0xffef,
		0xfe10 <= r && r <= 0xfe1f, 0xfe30 <= r && r <= 0xfe4f:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo)
}

// isEmojiPart: characters that only modify or combine emoji.
func isEmojiPart(r rune) bool {
	return 0xfe00 <= r && r <= 0xfe0f || // variation selectors
		r == 0x20e3 || // combining keycap
		0x1f3fb <= r && r <= 0x1f3ff || // skin tones
		0x1f1e6 <= r && r <= 0x1f1ff || // regional indicators (flags)
		0xe0020 <= r && r <= 0xe007f || // tags
		0xe0100 <= r && r <= 0xe01ef // variation selectors supplement
}

// isPictographic: emoji (Extended_Pictographic), other symbols of the
// symbol and emoji blocks, and bullets.
func isPictographic(r rune) bool {
	if r < 0xa9 {
		return false
	}
	lo, hi := 0, len(extendedPictographic)
	for lo < hi {
		m := (lo + hi) / 2
		switch rg := extendedPictographic[m]; {
		case r < rg[0]:
			hi = m
		case r > rg[1]:
			lo = m + 1
		default:
			return true
		}
	}
	switch {
	case 0x2190 <= r && r <= 0x21ff, 0x27f0 <= r && r <= 0x27ff, 0x2900 <= r && r <= 0x297f:
		return unicode.In(r, unicode.So, unicode.Sm) // arrows
	case 0x2300 <= r && r <= 0x2bff, 0x1f000 <= r && r <= 0x1fbff:
		return unicode.Is(unicode.So, r)
	}
	return r == '•' || r == '‣' || r == '⁃'
}

// extendedPictographic lists the Extended_Pictographic ranges of Unicode's
// emoji-data.txt (15.1), merged.
var extendedPictographic = [][2]rune{
	{0x00a9, 0x00a9}, {0x00ae, 0x00ae}, {0x203c, 0x203c}, {0x2049, 0x2049},
	{0x2122, 0x2122}, {0x2139, 0x2139}, {0x2194, 0x2199}, {0x21a9, 0x21aa},
	{0x231a, 0x231b}, {0x2328, 0x2328}, {0x2388, 0x2388}, {0x23cf, 0x23cf},
	{0x23e9, 0x23f3}, {0x23f8, 0x23fa}, {0x24c2, 0x24c2}, {0x25aa, 0x25ab},
	{0x25b6, 0x25b6}, {0x25c0, 0x25c0}, {0x25fb, 0x25fe}, {0x2600, 0x2605},
	{0x2607, 0x2612}, {0x2614, 0x2685}, {0x2690, 0x2705}, {0x2708, 0x2712},
	{0x2714, 0x2714}, {0x2716, 0x2716}, {0x271d, 0x271d}, {0x2721, 0x2721},
	{0x2728, 0x2728}, {0x2733, 0x2734}, {0x2744, 0x2744}, {0x2747, 0x2747},
	{0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757},
	{0x2763, 0x2767}, {0x2795, 0x2797}, {0x27a1, 0x27a1}, {0x27b0, 0x27b0},
	{0x27bf, 0x27bf}, {0x2934, 0x2935}, {0x2b05, 0x2b07}, {0x2b1b, 0x2b1c},
	{0x2b50, 0x2b50}, {0x2b55, 0x2b55}, {0x3030, 0x3030}, {0x303d, 0x303d},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1f000, 0x1f0ff}, {0x1f10d, 0x1f10f},
	{0x1f12f, 0x1f12f}, {0x1f16c, 0x1f171}, {0x1f17e, 0x1f17f}, {0x1f18e, 0x1f18e},
	{0x1f191, 0x1f19a}, {0x1f1ad, 0x1f1e5}, {0x1f201, 0x1f20f}, {0x1f21a, 0x1f21a},
	{0x1f22f, 0x1f22f}, {0x1f232, 0x1f23a}, {0x1f23c, 0x1f23f}, {0x1f249, 0x1f3fa},
	{0x1f400, 0x1f53d}, {0x1f546, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f774, 0x1f77f},
	{0x1f7d5, 0x1f7ff}, {0x1f80c, 0x1f80f}, {0x1f848, 0x1f84f}, {0x1f85a, 0x1f85f},
	{0x1f888, 0x1f88f}, {0x1f8ae, 0x1f8ff}, {0x1f90c, 0x1f93a}, {0x1f93c, 0x1f945},
	{0x1f947, 0x1faff}, {0x1fc00, 0x1fffd},
}

// Join is the package's Join, as a method so a Chunker can be handed
// around as one interface.
func (c *Chunker) Join(chunks []string) string { return Join(chunks) }

// clauseChunks is how many chunks at the start of a reply may end at a
// clause mark: the first, and after a first chunk cut short by FirstWords
// the second too, so that it is ready before the few words of the first
// have been spoken.
func (c *Chunker) clauseChunks() int {
	if c.cfg.FirstWords > 0 {
		return 2
	}
	return 1
}
