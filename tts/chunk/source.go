package chunk

import (
	"sort"
	"unicode/utf8"
)

// Source returns the start of reply (a reply as the model wrote it) whose
// speakable text is heard, a start of Speakable(reply) such as the words
// played before a barge-in: the written text up to the last character
// heard, with the markup and spacing the model put before it and none of
// what follows. It reports false when no start of reply says exactly heard.
//
// An engine that keeps its KV cache across replies holds the written
// tokens, so a history that remembers the cut reply as written (rather
// than as spoken) keeps that cache valid up to the cut.
func Source(reply, heard string) (string, bool) {
	want := utf8.RuneCountInString(heard)
	// A longer start of a reply mostly says more, so the first start that
	// says as much as heard is where to look. Not always: markup at the
	// end of a start is text until what follows makes it markup ("1. **"
	// says "**", "1. **G" says "G"), so the answer may lie a little
	// further, within the distance the chunker looks ahead.
	n := sort.Search(len(reply)+1, func(k int) bool {
		return utf8.RuneCountInString(Speakable(reply[:k])) >= want
	})
	for k := n; k <= min(len(reply), n+maxRun); k++ {
		if Speakable(reply[:k]) == heard {
			return reply[:k], true
		}
	}
	return "", false
}

// Source is the package's Source, as a method so a Chunker can be handed
// around as one interface.
func (c *Chunker) Source(reply, heard string) (string, bool) { return Source(reply, heard) }
