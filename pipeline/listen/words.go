package listen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitWords splits text into lower-case words without punctuation or
// hyphens; each Han, kana or Hangul character is a word of its own, since
// those scripts are written without spaces.
func SplitWords(text string) []string {
	var out []string
	for _, w := range wordSpans(text) {
		out = append(out, w.word)
	}
	return out
}

// wordSpan is a word of a text and the byte offset just past it.
type wordSpan struct {
	word string
	end  int
}

func wordSpans(text string) []wordSpan {
	var out []wordSpan
	var word strings.Builder
	flush := func(end int) {
		if word.Len() > 0 {
			out = append(out, wordSpan{word.String(), end})
			word.Reset()
		}
	}
	for i, r := range text {
		switch {
		case Unspaced(r):
			flush(i)
			out = append(out, wordSpan{strings.ToLower(string(r)), i + utf8.RuneLen(r)})
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			word.WriteString(strings.ToLower(string(r)))
		default:
			// Hyphens split too: "uh-huh" matches a recognizer's "uh huh".
			flush(i)
		}
	}
	flush(len(text))
	return out
}

// JoinWords joins two stretches of one sentence (a turn and the words
// that continue it): with a space, unless the join falls next to a script
// written without spaces (Chinese).
func JoinWords(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	last, _ := utf8.DecodeLastRuneInString(a)
	first, _ := utf8.DecodeRuneInString(b)
	if Unspaced(last) || Unspaced(first) {
		return a + b
	}
	return a + " " + b
}

// Unspaced is true of the scripts written without spaces between words:
// each character is a word of its own.
func Unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
