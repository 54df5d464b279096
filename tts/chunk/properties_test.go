package chunk_test

// The properties every chunking has, checked on random replies here and
// by FuzzChunker on any.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/chunk"
)

// unbreakable reports whether the first max characters of chunk c offer
// no place for a Max split: no clause mark, no space but after an
// abbreviation or initial or between a number and a.m./p.m., and no seam
// between a CJK character and its neighbour.
func unbreakable(c string, max int) bool {
	runes := []rune(c)
	for i := 0; i < max && i < len(runes); i++ {
		r, next := runes[i], rune(-1)
		if i+1 < len(runes) {
			next = runes[i+1]
		}
		switch {
		case r == ' ':
			before, after := string(runes[:i]), strings.ToLower(string(runes[i+1:]))
			ampm := strings.HasPrefix(after, "am") || strings.HasPrefix(after, "pm") ||
				strings.HasPrefix(after, "a.m") || strings.HasPrefix(after, "p.m")
			if !strings.HasSuffix(before, ".") && !(unicode.IsDigit(runes[i-1]) && ampm) {
				return false
			}
		case (r == ',' || r == ':') && (next == ' ' || next >= 0 && wide(next)):
			return false
		case strings.ContainsRune("，、：", r) && (next < 0 || !strings.ContainsRune(`"')]}`, next) && !unicode.In(next, unicode.Pe, unicode.Pf)):
			return false
		case next >= 0 && next != ' ' && (wide(r) || wide(next)) && !isASCIIDigit(r) && !isASCIIDigit(next) &&
			!unicode.In(r, unicode.Ps, unicode.Pi) && !unicode.In(next, unicode.Pe, unicode.Pf, unicode.Po):
			return false
		}
	}
	return true
}

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

// wide: the CJK characters that are written without spaces.
func wide(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo) ||
		0x3000 <= r && r <= 0x303f || 0xff00 <= r && r <= 0xffef
}

// vocabulary holds the fragments that random replies are made of: the
// tricky ones for chunking and markdown.
var vocabulary = []string{
	"Hello", "world", "the", "a", "and", "I", "we", "Smith", "Then", "ok", "Go", "iPhone", "한국어",
	"3.14", "3.", "14", "1,000,000", "1.000,50", "$12.50", "10:30", "3 p.m.", "9 am", "a.m.",
	"Dr.", "Mr.", "e.g.", "i.e.", "U.S.", "etc.", "Ph.D.", "No.", "J.",
	"https://example.com/a.b?c=d", "john.doe@example.com", "www.x.io",
	".", ",", "!", "?", ";", ":", "...", "?!", "\"", "(", ")", "'",
	"**", "*", "__", "_", "~~", "~", "`", "``", "```", "\n```go\nx := 1. y\n```\n", "\n~~~\ncode\n",
	"# ", "## ", "\n- ", "\n* ", "\n1. ", "\n2) ", "\n> ", "\n| a | b |\n|---|---|\n", "|", "---",
	"[", "](", "[link](https://x.y/z)", "![img](a.png)", "\\*", "\\", "- [ ] ",
	"😀", "👨‍👩‍👧", "❤️", "1️⃣", "🇺🇸", "👍🏽", "→", "★", "©", "\u200b", "\u00a0", "\ufe0f", "\u200d",
	"你好", "世界", "天气很好", "我们", "，", "。", "！", "？", "；", "、", "：", "…", "……", "“", "”", "「", "」", "３",
	"\n", "\n\n", "  ", "\t", "\r\n", "\u3000", "\xff", "\xe4\xbd",
	"supercalifragilistic", "abcdefghijklmnopqrstuvwxyz0123456789",
}

// randomReply strings random fragments together.
func randomReply(rng *rand.Rand) string {
	var b strings.Builder
	for range 1 + rng.IntN(60) {
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		b.WriteString([]string{"", " ", " ", " ", "\n"}[rng.IntN(5)])
	}
	return b.String()
}

// TestChunkerProperties checks on random replies that (1) the chunks do
// not depend on how the reply is split into pieces and (2) they are the
// reply's speakable text, cut at seams that Join restores.
func TestChunkerProperties(t *testing.T) {
	firstMins := []int{0, 1, 5, 12, 40}
	maxes := []int{0, 1, 2, 3, 5, 8, 13, 30, 200}
	for seed := range uint64(600) {
		rng := rand.New(rand.NewPCG(seed, 7))
		text := randomReply(rng)
		cfg := chunk.Config{FirstMin: firstMins[rng.IntN(len(firstMins))], FirstChars: []int{0, 1, 4}[rng.IntN(3)], Max: maxes[rng.IntN(len(maxes))]}
		want := whole(cfg, text)
		fail := func(msg string, args ...any) {
			t.Helper()
			require.FailNow(t, fmt.Sprintf(msg, args...), "seed %d, %+v, text %q", seed, cfg, text)
		}

		speakable := chunk.Speakable(text)
		if got := chunk.Join(want); got != speakable {
			fail("joined chunks\n%q\nare not the speakable text\n%q", got, speakable)
		}
		for _, c := range want {
			switch {
			case c == "" || strings.TrimSpace(c) != c || !utf8.ValidString(c):
				fail("chunk %q is empty, untrimmed or not UTF-8", c)
			case strings.Contains(c, "\n") || strings.Contains(c, "  "):
				fail("chunk %q has a line break or a double space", c)
			case cfg.Max > 0 && utf8.RuneCountInString(c) > cfg.Max && !unbreakable(c, cfg.Max):
				fail("chunk %q is longer than Max but could be split", c)
			}
		}

		for name, pieces := range map[string][]string{
			"bytes":       bytesEach(text),
			"runes":       runesEach(text),
			"words":       wordPieces(text),
			"byte pieces": bytePieces(rng, text, 8),
			"rune pieces": runePieces(rng, text),
		} {
			if got := streamed(cfg, pieces); !assert.ObjectsAreEqual(want, got) {
				fail("%s %q:\ngot  %q\nwant %q", name, pieces, got, want)
			}
		}
	}
}
