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
//   - for the first chunk of text written without spaces (Chinese), at a
//     natural break once it holds half Config.FirstChars characters (after
//     a particle such as 的 了 吗 呢 吧 or a verb a predicate starts with,
//     such as 是 有 会; before a conjunction, preposition or adverb such as
//     和 在 就 不 很; at a clause mark), and at any seam between two
//     characters once it holds FirstChars, so synthesis starts after a
//     few characters as it does after a few English words; never next to
//     a digit, since the characters beside a number say how it is read
//     (2026年, 第2, 2个);
//   - for the first chunk, and the second after a first chunk cut short by
//     FirstWords (so it is ready before those few words have been spoken),
//     also after a clause mark (, : followed by a space or CJK, or ，、：)
//     once the chunk is Config.FirstMin characters long;
//   - when a chunk reaches Config.Max characters without a boundary: at its
//     last clause mark, else its last space (not the one after a title or an
//     initial, nor the one in "3 p.m."), else—for CJK text without
//     spaces—between two characters, neither of them a digit. A single word longer than Max (a long
//     URL, say) is never cut: it ends at the next boundary of any kind.
package chunk

import (
	"fmt"
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
	// FirstChars ends the first chunk of text without spaces (Chinese) at
	// a natural break once it holds half this many characters, and
	// wherever it can once it holds this many (0: only at a clause or
	// sentence end, as FirstMin and Max allow).
	FirstChars int `yaml:"first_chars"`
	// Max forces a split at the best boundary so synthesis never waits on
	// a run-on sentence. Zero means no limit.
	Max int `yaml:"max"`
}

// Validate names the first setting that makes no sense, by its config key.
func (c Config) Validate() error {
	for _, v := range []struct {
		key string
		n   int
	}{{"first_min", c.FirstMin}, {"first_words", c.FirstWords}, {"first_chars", c.FirstChars}, {"max", c.Max}} {
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
// trades that for latency. A Chinese reply's first chunk is 3 to 5
// characters (an LLM writes one or two a token, so two or three tokens,
// as two English words are), ended at a particle or where a predicate
// starts if it has one; its seam falls inside the sentence's intonation,
// as the English one does, and at 5 characters with no natural break it
// may fall inside a word (天气|预报), which a listener hears as a short
// hesitation.
func DefaultConfig() Config { return Config{FirstMin: 12, FirstWords: 2, FirstChars: 5, Max: 200} }

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

// Join is the package's Join, as a method so a Chunker can be handed
// around as one interface.
func (c *Chunker) Join(chunks []string) string { return Join(chunks) }

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

// maxRun bounds the lookahead of every decision, so that a long run of
// the same character arriving in many pieces is not rescanned on every
// Push. Longer runs are taken maxRun bytes at a time: a line that starts
// with maxRun rule characters is a rule, longer runs of markup characters
// are dropped, and a longer run of sentence marks ends no sentence.
const maxRun = 128
