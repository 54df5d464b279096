// Package chunk turns a streamed reply into speakable pieces as it arrives:
// the first piece as early as it can be spoken naturally, later ones at
// sentence or clause boundaries.
package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config bounds chunk lengths in characters.
type Config struct {
	// FirstMin is the shortest first chunk that may end at a clause
	// boundary (a comma); shorter openers wait for more text.
	FirstMin int
	// Max forces a split at the best boundary so synthesis never waits on
	// a run-on sentence.
	Max int
}

// DefaultConfig suits speech at ~3 words/s: a first chunk of a few words,
// later chunks up to a long sentence.
func DefaultConfig() Config { return Config{FirstMin: 12, Max: 200} }

// Chunker accumulates pieces and emits chunks. Not safe for concurrent use.
type Chunker struct {
	cfg     Config
	buf     strings.Builder
	emitted int
}

// New returns a chunker for one reply.
func New(cfg Config) *Chunker { return &Chunker{cfg: cfg} }

// Push adds a streamed piece and returns the chunks that are now complete.
func (c *Chunker) Push(piece string) []string {
	c.buf.WriteString(piece)
	var out []string
	for {
		text := c.buf.String()
		cut := c.boundary(text)
		if cut <= 0 {
			return out
		}
		if s := strings.TrimSpace(text[:cut]); s != "" {
			out = append(out, s)
			c.emitted++
		}
		rest := text[cut:]
		c.buf.Reset()
		c.buf.WriteString(rest)
	}
}

// Flush returns whatever is left at the end of the reply.
func (c *Chunker) Flush() []string {
	s := strings.TrimSpace(c.buf.String())
	c.buf.Reset()
	if s == "" {
		return nil
	}
	c.emitted++
	return []string{s}
}

// boundary returns the byte offset just past the chunk that can be cut
// from text now, or 0 if more text is needed to know.
func (c *Chunker) boundary(text string) int {
	clause := 0
	runes := 0
	for i, r := range text {
		if r == utf8.RuneError && !utf8.FullRuneInString(text[i:]) {
			return 0 // a character split across pieces: wait for the rest
		}
		runes++
		_, size := utf8.DecodeRuneInString(text[i:]) // 1 for an invalid byte
		next, ok := peek(text, i+size)
		switch {
		case isCJKTerminal(r):
			return i + size
		case isSentenceEnd(r):
			// A following space (or more text) decides between "3.14" and
			// "end. Next"; without it, wait.
			if !ok {
				return 0
			}
			// Only a period can follow an abbreviation or an initial:
			// "No! Stop." and "plan B? Yes." end sentences.
			if unicode.IsSpace(next) && (r != '.' || !isAbbreviation(text[:i])) {
				return i + size
			}
		case isClause(r):
			if !ok {
				// Whether it ends a clause depends on what follows; deciding
				// now (at Max) would make the chunks depend on how the text
				// was split into pieces.
				return 0
			}
			if unicode.IsSpace(next) || isCJKClause(r) {
				clause = i + size
				if c.emitted == 0 && runes >= c.cfg.FirstMin {
					return clause
				}
			}
		}
		if c.cfg.Max > 0 && runes >= c.cfg.Max {
			if clause > 0 {
				return clause
			}
			if sp := strings.LastIndexFunc(text[:i], unicode.IsSpace); sp > 0 {
				return sp
			}
			return i + size
		}
	}
	return 0
}

func peek(s string, at int) (rune, bool) {
	if at >= len(s) {
		return 0, false
	}
	r, _ := utf8.DecodeRuneInString(s[at:])
	return r, true
}

func isSentenceEnd(r rune) bool { return r == '.' || r == '!' || r == '?' || r == ';' }

func isCJKTerminal(r rune) bool { return strings.ContainsRune("。！？；…", r) }

func isClause(r rune) bool { return r == ',' || r == ':' || isCJKClause(r) }

func isCJKClause(r rune) bool { return strings.ContainsRune("，、：", r) }

// abbreviations that end in a period but rarely end a sentence.
var abbreviations = map[string]bool{
	"dr": true, "mr": true, "mrs": true, "ms": true, "prof": true, "st": true,
	"vs": true, "etc": true, "e.g": true, "i.e": true, "u.s": true, "no": true,
	"jr": true, "sr": true, "inc": true, "ltd": true, "approx": true,
}

func isAbbreviation(before string) bool {
	word := before[strings.LastIndexFunc(before, unicode.IsSpace)+1:]
	word = strings.ToLower(strings.TrimLeft(word, "(\"'"))
	if abbreviations[word] {
		return true
	}
	// Single letters ("J. Smith") are initials.
	return utf8.RuneCountInString(word) == 1 && unicode.IsLetter([]rune(word)[0])
}
