package chunk_test

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

// whole pushes text at once and then flushes.
func whole(cfg chunk.Config, text string) []string {
	c := chunk.New(cfg)
	return append(c.Push(text), c.Flush()...)
}

// streamed pushes pieces one by one and then flushes.
func streamed(cfg chunk.Config, pieces []string) []string {
	c := chunk.New(cfg)
	var out []string
	for _, p := range pieces {
		out = append(out, c.Push(p)...)
	}
	return append(out, c.Flush()...)
}

// runePieces splits text into pieces of random rune counts (1..8).
func runePieces(rng *rand.Rand, text string) []string {
	var out []string
	for text != "" {
		n := 1 + rng.IntN(8)
		cut := 0
		for range n {
			if cut >= len(text) {
				break
			}
			_, size := utf8.DecodeRuneInString(text[cut:])
			cut += size
		}
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// wordPieces splits text the way LLM tokens usually arrive: each piece is
// a word with its leading space, and punctuation on its own.
func wordPieces(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if i > start && (unicode.IsSpace(r) || unicode.IsPunct(r)) {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// bytePieces splits text into pieces of random byte counts (1..n), which
// cut multi-byte characters in two.
func bytePieces(rng *rand.Rand, text string, n int) []string {
	var out []string
	for text != "" {
		k := min(len(text), 1+rng.IntN(n))
		out = append(out, text[:k])
		text = text[k:]
	}
	return out
}

// bytesEach is one piece per byte.
func bytesEach(text string) []string {
	out := make([]string, len(text))
	for i := range len(text) {
		out[i] = text[i : i+1]
	}
	return out
}

// runesEach is one piece per rune.
func runesEach(text string) []string {
	var out []string
	for len(text) > 0 {
		_, size := utf8.DecodeRuneInString(text)
		out = append(out, text[:size])
		text = text[size:]
	}
	return out
}

func TestChunker(t *testing.T) {
	cases := chunkCases()
	require.GreaterOrEqual(t, len(cases), 60)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, whole(tc.cfg, tc.text), "pushed whole")
			assert.Equal(t, chunk.Speakable(tc.text), chunk.Join(tc.want), "the chunks are the speakable text")
			if tc.pieces != nil {
				require.Equal(t, tc.text, strings.Join(tc.pieces, ""))
				assert.Equal(t, tc.want, streamed(tc.cfg, tc.pieces), "pieces %q", tc.pieces)
			}
			assert.Equal(t, tc.want, streamed(tc.cfg, runesEach(tc.text)), "rune by rune")
			assert.Equal(t, tc.want, streamed(tc.cfg, bytesEach(tc.text)), "byte by byte")
			assert.Equal(t, tc.want, streamed(tc.cfg, wordPieces(tc.text)), "word pieces %q", wordPieces(tc.text))
			for seed := range uint64(10) {
				rng := rand.New(rand.NewPCG(seed, 1))
				pieces := runePieces(rng, tc.text)
				assert.Equal(t, tc.want, streamed(tc.cfg, pieces), "random pieces %q", pieces)
				pieces = bytePieces(rng, tc.text, 6)
				assert.Equal(t, tc.want, streamed(tc.cfg, pieces), "random byte pieces %q", pieces)
			}
		})
	}
}

// TestChunkerStreamingMatchesWhole checks on a long mixed reply, with
// several limits, that how the text is split into pieces never changes the
// chunks.
func TestChunkerStreamingMatchesWhole(t *testing.T) {
	text := strings.Repeat("Sure, here it is: at 10:30 Dr. Smith paid $1,000.50 for e.g. apples! "+
		"Was it J. Doe? No, it was the U.S. team, which then went on and on without stopping for breath or punctuation of any kind whatsoever. "+
		"你好，世界。好的！", 5)
	for _, cfg := range []chunk.Config{chunk.DefaultConfig(), {FirstMin: 1, Max: 7}, {FirstMin: 30, Max: 40}, {FirstMin: 5, Max: 0}} {
		want := whole(cfg, text)
		require.NotEmpty(t, want)
		// Nothing is lost or invented: the chunks are the text with the
		// whitespace between them removed.
		assert.Equal(t, strings.Join(strings.Fields(text), ""), strings.Join(strings.Fields(strings.Join(want, "")), ""))
		for _, c := range want {
			assert.Equal(t, strings.TrimSpace(c), c, "chunks are trimmed")
			assert.NotEmpty(t, c)
			if cfg.Max > 0 && utf8.RuneCountInString(c) > cfg.Max {
				// Changed: a chunk runs past Max only when its first Max
				// characters offer no place to split.
				assert.True(t, unbreakable(c, cfg.Max), "%+v: chunk %q", cfg, c)
			}
		}
		sameChunks(t, want, streamed(cfg, runesEach(text)), "%+v: rune by rune", cfg)
		sameChunks(t, want, streamed(cfg, wordPieces(text)), "%+v: word pieces", cfg)
		for seed := range uint64(30) {
			sameChunks(t, want, streamed(cfg, runePieces(rand.New(rand.NewPCG(seed, 2)), text)), "%+v: seed %d", cfg, seed)
		}
	}
}

// sameChunks reports only the first difference, so a failure on a long
// text stays readable.
func sameChunks(t *testing.T, want, got []string, msg string, args ...any) {
	t.Helper()
	for i := range min(len(want), len(got)) {
		if !assert.Equal(t, want[i], got[i], "%s: chunk %d (previous %q)", fmt.Sprintf(msg, args...), i, want[max(0, i-1)]) {
			return
		}
	}
	assert.Equal(t, len(want), len(got), "%s: chunk count", fmt.Sprintf(msg, args...))
}

// TestChunkerCharacterSplitAcrossPieces: a token stream may cut a
// multi-byte character in two; the chunker must wait for the rest rather
// than cut (or slice) inside it.
func TestChunkerCharacterSplitAcrossPieces(t *testing.T) {
	text := "你好，今天天气很好。我们去公园吧！好吗？" + strings.Repeat("天气很好", 8) + " café naïve"
	for _, cfg := range []chunk.Config{chunk.DefaultConfig(), {FirstMin: 1, Max: 4}, {FirstMin: 3, Max: 7}} {
		want := whole(cfg, text)
		for _, c := range want {
			require.True(t, utf8.ValidString(c), "%+v: chunk %q", cfg, c)
		}
		for seed := range uint64(30) {
			rng := rand.New(rand.NewPCG(seed, 3))
			var pieces []string
			for rest := text; rest != ""; {
				n := min(len(rest), 1+rng.IntN(5)) // bytes, not runes
				pieces = append(pieces, rest[:n])
				rest = rest[n:]
			}
			var got []string
			require.NotPanics(t, func() { got = streamed(cfg, pieces) }, "%+v: seed %d", cfg, seed)
			sameChunks(t, want, got, "%+v: seed %d", cfg, seed)
		}
	}

	// Changed: bytes that are not UTF-8 are not speakable; they used to be
	// kept as single characters.
	t.Run("invalid bytes are dropped", func(t *testing.T) {
		cfg := chunk.Config{FirstMin: 1000, Max: 3}
		var got []string
		require.NotPanics(t, func() { got = whole(cfg, "ab\xffcd\xfe 天气\xe5很好") })
		assert.Equal(t, []string{"abcd", "天气很", "好"}, got)
	})
}

func TestChunkerPushReturnsChunksAsSoonAsKnown(t *testing.T) {
	c := chunk.New(chunk.DefaultConfig())
	assert.Empty(t, c.Push("Hello there"))
	assert.Empty(t, c.Push(","), "a clause needs the following space")
	assert.Equal(t, []string{"Hello there,"}, c.Push(" how"))
	assert.Empty(t, c.Push(" are you."), "a period at the end may still be a decimal point")
	assert.Equal(t, []string{"how are you."}, c.Push(" I"))
	assert.Empty(t, c.Push(""))
	assert.Equal(t, []string{"I"}, c.Flush())
	assert.Empty(t, c.Flush(), "Flush empties the chunker")
	assert.Empty(t, c.Push(" "))
	assert.Empty(t, c.Flush())
}

func TestSpeakable(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"plain text", "Hello, world.", "Hello, world."},
		{"emphasis", "**Bold** and __also__ *it* _it_ ***both***", "Bold and also it it both"},
		{"headings", "# H1\n## H2\n###### H6\n####### seven", "H1 H2 H6 ####### seven"},
		{"hash signs that are no headings", "#hashtag and C# and #1", "#hashtag and C# and #1"},
		{"block quotes", "> quote\n>> nested\n> - item", "quote nested item"},
		{"list markers", "- a\n  - b\n1. c\n10) d\n* e\n+ f", "a b c d e f"},
		{"numbers at the start of a line", "2024 was good\n1.5 is a number\n3.14", "2024 was good 1.5 is a number 3.14"},
		{"links", "[text](http://x.com/(a)b) and [ref] and [a](b \"title\")", "text and ref and a"},
		{"images", "Look: ![alt text](i.png)", "Look: alt text"},
		{"an exclamation before a link", "Hi! [x](y)", "Hi! x"},
		{"code spans", "`a*b*c` and `` x`y ``", "a*b*c and xy"},
		{"a code block", "```\ncode\n```", ""},
		{"an unterminated code block", "text\n```python\nprint(1)\n", "text"},
		{"tables", "| a | b |\n|:-:|--|\n| 1 | 2 |", "a b 1 2"},
		{"rules", "***\n---\n___\n* * *\n===", ""},
		{"underscores", "snake_case and __init__ and a _ b", "snake_case and init and a _ b"},
		{"asterisks", "2 * 3, 2*3, x*y", "2 * 3, 2*3, xy"},
		{"tildes", "~approx and ~~gone~~ and ~5", "~approx and gone and ~5"},
		{"escapes", `\*not bold\* and \\ and C:\Users`, `*not bold* and \ and C:\Users`},
		{"hard line breaks", "one\\\ntwo \\", `one two \`},
		{"emoji", "I ❤️ Go 🚀🚀 👩🏽‍💻 🇯🇵 1️⃣ #️⃣ *️⃣ ©®™ ok", "I Go ok"},
		{"symbols", "a → b ⇒ c ★ d ✓ e • f", "a b c d e f"},
		{"symbols that are spoken", "25°C, 3 × 4 = 12, 50% off, €5", "25°C, 3 × 4 = 12, 50% off, €5"},
		{"spaces next to CJK", "你好 世界 hello 世界 world", "你好世界hello世界world"},
		{"Hangul keeps its spaces", "한국어 문장 입니다", "한국어 문장 입니다"},
		{"whitespace", "a\tb\r\nc\u3000d\u00a0e", "a b c d e"},
		{"blank lines", "  lead and trail  \n\n\n  next  ", "lead and trail next"},
		{"invisible characters", "ctrl\x00\x07chars\u200b\ufeff here", "ctrlchars here"},
		{"invalid UTF-8", "bad \xff\xfe bytes \xe4\xbd", "bad bytes"},
		{"line breaks", "Line one\nLine two", "Line one Line two"},
		{"line breaks in Chinese", "中文\n换行", "中文换行"},
		{"a line break before Chinese", "end\n中文", "end中文"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, chunk.Speakable(tc.text))
		})
	}
}

func TestJoin(t *testing.T) {
	assert.Equal(t, "", chunk.Join(nil))
	assert.Equal(t, "Hello, world.", chunk.Join([]string{"Hello,", "world."}))
	assert.Equal(t, "你好，世界", chunk.Join([]string{"你好，", "世界"}))
	assert.Equal(t, "Go很好", chunk.Join([]string{"Go", "很好"}))
	assert.Equal(t, "好。Next", chunk.Join([]string{"好。", "Next"}))
}

func TestChunkerReset(t *testing.T) {
	c := chunk.New(chunk.DefaultConfig())
	assert.Equal(t, []string{"Hello there"}, c.Push("Hello there this is"))
	assert.Equal(t, []string{"this is cut off"}, c.Push(" cut off\n```go\nfmt."))
	c.Reset()
	// Nothing pending survives, the code block included, and the first
	// chunk is short again.
	assert.Equal(t, []string{"A fresh"}, c.Push("A fresh start, again. "))
	assert.Equal(t, []string{"start, again."}, c.Flush())

	// Flush resets too: the first chunk ends after a few words again.
	assert.Equal(t, []string{"Another reply"}, c.Push("Another reply is ok"))
	assert.Equal(t, []string{"is ok"}, c.Flush())
}

// TestChunkerLongRuns streams long runs of one character in small pieces:
// the chunks are the same as pushed whole, and since every lookahead is
// bounded this takes linear time (it took minutes when each Push rescanned
// the run).
func TestChunkerLongRuns(t *testing.T) {
	cfg := chunk.DefaultConfig()
	for _, unit := range []string{"-", "*", "_", "`", "~", "#", "1", "> ", " ", "。", "!", "a", "天", "Dr. "} {
		for _, text := range []string{
			"Start. " + strings.Repeat(unit, 30000) + " end.",
			"Start.\n" + strings.Repeat(unit, 30000) + "\nend.",
		} {
			want := whole(cfg, text)
			assert.Equal(t, chunk.Speakable(text), chunk.Join(want), "%q", unit)
			var pieces []string
			for i := 0; i < len(text); i += 5 {
				pieces = append(pieces, text[i:min(len(text), i+5)])
			}
			sameChunks(t, want, streamed(cfg, pieces), "%q", unit)
		}
	}
}
