package chunk

// The split stage of a Chunker: speakable text cut into chunks at
// boundaries.

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

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
		if c.over || c.emitted < c.clauseChunks() && c.runes >= c.cfg.FirstMin || isCJKClause(r) && c.firstChars(true) {
			c.cut(end, end)
			return true
		}
	}
	if next >= 0 && isSeam(r, next) {
		c.seamAt = end
		if c.over || c.firstChars(breaksAfter(r) || breaksBefore(next)) {
			c.cut(end, end)
			return true
		}
	}
	c.checkMax(final)
	return true
}

// firstChars reports whether the first chunk, so far without spaces (a
// Chinese one), ends here: at a natural break once it is half FirstChars
// long, or at any seam once it is FirstChars long.
func (c *Chunker) firstChars(natural bool) bool {
	n := c.cfg.FirstChars
	if n <= 0 || c.emitted > 0 || c.spaces > 0 {
		return false
	}
	return c.runes >= n || natural && 2*c.runes >= n
}

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

// isSeam reports whether a chunk may end between a and b, which have no
// space between them: one of them is CJK, neither is a digit, b is no
// closing or trailing punctuation and a no opening one. A number keeps the
// characters beside it, which say how it is read (2026年 二零二六年, 第2 第二,
// 2个 两个).
func isSeam(a, b rune) bool {
	if b == ' ' || !isCJK(a) && !isCJK(b) || isDigitRune(a) || isDigitRune(b) {
		return false
	}
	return !unicode.In(a, unicode.Ps, unicode.Pi) && !unicode.In(b, unicode.Pe, unicode.Pf, unicode.Po)
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
