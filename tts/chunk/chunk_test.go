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

// runesEach is one piece per rune.
func runesEach(text string) []string {
	var out []string
	for _, r := range text {
		out = append(out, string(r))
	}
	return out
}

func TestChunker(t *testing.T) {
	def := chunk.DefaultConfig()
	tests := []struct {
		name string
		cfg  chunk.Config
		text string
		want []string
	}{
		{"empty", def, "", nil},
		{"only spaces", def, "  \n ", nil},
		{"no boundary is flushed", def, "hello there", []string{"hello there"}},
		{
			"first chunk at a clause once FirstMin is reached", def,
			"Hello there, how are you today? I am fine.",
			[]string{"Hello there,", "how are you today?", "I am fine."},
		},
		{
			"a short opener waits for the sentence", def,
			"Hi, there. Next one",
			[]string{"Hi, there.", "Next one"},
		},
		{
			"only the first chunk ends at a clause", chunk.Config{FirstMin: 5, Max: 200},
			"Well, I think so, yes. Done.",
			[]string{"Well,", "I think so, yes.", "Done."},
		},
		{
			"sentences end at . ! ? followed by space", def,
			"Wow! Really? Yes. Fine",
			[]string{"Wow!", "Really?", "Yes.", "Fine"},
		},
		{
			"a sentence end at the very end waits for Flush", def,
			"It is done.",
			[]string{"It is done."},
		},
		{
			"no split inside decimals", def,
			"Pi is about 3.14 today. Ok",
			[]string{"Pi is about 3.14 today.", "Ok"},
		},
		{
			"no split after Dr.", def,
			"I saw Dr. Smith today. He was fine.",
			[]string{"I saw Dr. Smith today.", "He was fine."},
		},
		{
			"no split after e.g.", def,
			"Use a tool e.g. this one. Then stop.",
			[]string{"Use a tool e.g. this one.", "Then stop."},
		},
		{
			"no split after U.S.", def,
			"The U.S. economy grew. Then it shrank.",
			[]string{"The U.S. economy grew.", "Then it shrank."},
		},
		{
			"no split after an initial", def,
			"Ask J. Smith now. Then go.",
			[]string{"Ask J. Smith now.", "Then go."},
		},
		{
			"no split inside a time", def,
			"The meeting is at 10:30 today. Ok",
			[]string{"The meeting is at 10:30 today.", "Ok"},
		},
		{
			"no split inside a number with separators", def,
			"We raised 1,000,000 dollars today. Ok",
			[]string{"We raised 1,000,000 dollars today.", "Ok"},
		},
		{
			"a colon followed by space is a clause", def,
			"Here is the plan: we go now. Ok",
			[]string{"Here is the plan:", "we go now.", "Ok"},
		},
		{
			"an exclamation after a word that is also an abbreviation", def,
			"No! Stop that. Ok",
			[]string{"No!", "Stop that.", "Ok"},
		},
		{
			"a question after a single letter", def,
			"Do you mean plan B? Yes, I do.",
			[]string{"Do you mean plan B?", "Yes, I do."},
		},
		{
			"Chinese sentence punctuation", def,
			"你好，今天天气很好。我们去公园吧！好吗？",
			[]string{"你好，今天天气很好。", "我们去公园吧！", "好吗？"},
		},
		{
			"Chinese comma ends the first chunk", chunk.Config{FirstMin: 3, Max: 200},
			"你好，今天天气很好，对吧。",
			[]string{"你好，", "今天天气很好，对吧。"},
		},
		{
			"Max forces a split at a clause", chunk.Config{FirstMin: 1000, Max: 30},
			"one two three, four five six seven eight nine ten",
			[]string{"one two three,", "four five six seven eight", "nine ten"},
		},
		{
			"Max forces a split at a space", chunk.Config{FirstMin: 1000, Max: 20},
			"alpha beta gamma delta epsilon",
			[]string{"alpha beta gamma", "delta epsilon"},
		},
		{
			"Max without any space cuts hard", chunk.Config{FirstMin: 1000, Max: 4},
			"abcdefghij",
			[]string{"abcd", "efgh", "ij"},
		},
		{
			"Max counts runes, not bytes", chunk.Config{FirstMin: 1000, Max: 4},
			"天气很好天气很好天",
			[]string{"天气很好", "天气很好", "天"},
		},
		{
			"Max lands on a clause mark", chunk.Config{FirstMin: 1000, Max: 10},
			"aaa bbb c, dd", // the comma is rune 10
			[]string{"aaa bbb c,", "dd"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, whole(tc.cfg, tc.text), "pushed whole")
			assert.Equal(t, tc.want, streamed(tc.cfg, runesEach(tc.text)), "rune by rune")
			assert.Equal(t, tc.want, streamed(tc.cfg, wordPieces(tc.text)), "word pieces %q", wordPieces(tc.text))
			for seed := range uint64(20) {
				pieces := runePieces(rand.New(rand.NewPCG(seed, 1)), tc.text)
				assert.Equal(t, tc.want, streamed(tc.cfg, pieces), "random pieces %q", pieces)
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
			if cfg.Max > 0 {
				assert.LessOrEqual(t, utf8.RuneCountInString(c), cfg.Max, "%+v: chunk %q", cfg, c)
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
		if want[i] != got[i] {
			t.Errorf("%s: chunk %d is %q, want %q (previous %q)", fmt.Sprintf(msg, args...), i, got[i], want[i], want[max(0, i-1)])
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

	t.Run("invalid bytes are single characters", func(t *testing.T) {
		cfg := chunk.Config{FirstMin: 1000, Max: 3}
		var got []string
		require.NotPanics(t, func() { got = whole(cfg, "ab\xffcd\xfe") })
		assert.Equal(t, []string{"ab\xff", "cd\xfe"}, got)
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
