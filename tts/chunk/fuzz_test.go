package chunk_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/chunk"
)

// fuzzPieces splits text into pieces whose byte lengths are the bytes of
// sizes in turn (0 is an empty piece), the rest of text being the last
// piece: splits anywhere, inside UTF-8 characters and markup runs too.
func fuzzPieces(text string, sizes []byte) []string {
	var out []string
	for _, n := range sizes {
		if text == "" {
			break
		}
		k := min(len(text), int(n))
		out = append(out, text[:k])
		text = text[k:]
	}
	return append(out, text)
}

// FuzzChunker checks what the package documentation promises of any
// reply, split into pieces anyhow, under any Config:
//
//   - the chunks depend only on the reply: pushing it in the pieces sizes
//     gives the chunks pushing it whole gives;
//   - they are its speakable text cut into pieces: Join of the chunks is
//     Speakable of the reply exactly, whitespace normalization included
//     (runs of blanks and line breaks become one space, none at the ends
//     nor next to a CJK character), since every chunk is trimmed and
//     Join puts back one space at a seam unless a side of it is CJK;
//   - every chunk is non-empty valid UTF-8 without line breaks, spaces at
//     its ends or double spaces, and is longer than Max only when its
//     first Max characters offer no place to split;
//   - Flush leaves the chunker as New does, so a reused one chunks the
//     reply the same way again.
func FuzzChunker(f *testing.F) {
	for i, tc := range chunkCases() {
		f.Add(tc.text, []byte{byte(i % 7), 3, 1, 0, 5}, uint16(tc.cfg.FirstMin), uint16(tc.cfg.Max))
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		sizes := make([]byte, 40)
		for i := range sizes {
			sizes[i] = byte(rng.IntN(9))
		}
		f.Add(randomReply(rng), sizes, uint16(rng.IntN(40)), uint16(rng.IntN(40)))
	}
	f.Add(benchmarkReply, []byte{4, 4, 1, 2, 3}, uint16(12), uint16(200))

	f.Fuzz(func(t *testing.T, text string, sizes []byte, firstMin, max uint16) {
		// FirstChars follows FirstMin, so the corpus's entries stay valid.
		cfg := chunk.Config{FirstMin: int(firstMin), FirstChars: int(firstMin % 6), Max: int(max)}
		want := whole(cfg, text)
		pieces := fuzzPieces(text, sizes)
		got := streamed(cfg, pieces)
		require.True(t, equal(got, want), "%+v: pushed whole\n%q\nin pieces %q\n%q", cfg, want, pieces, got)
		require.Equal(t, chunk.Speakable(text), chunk.Join(want), "%+v: joined chunks are not the speakable text", cfg)
		for _, c := range want {
			require.NotEmpty(t, c, "%+v: chunk is empty", cfg)
			require.Equal(t, strings.TrimSpace(c), c, "%+v: chunk is untrimmed", cfg)
			require.True(t, utf8.ValidString(c), "%+v: chunk %q is not UTF-8", cfg, c)
			require.NotContains(t, c, "\n", "%+v: chunk has a line break", cfg)
			require.NotContains(t, c, "  ", "%+v: chunk has a double space", cfg)
			require.False(t, cfg.Max > 0 && utf8.RuneCountInString(c) > cfg.Max && !unbreakable(c, cfg.Max),
				"%+v: chunk %q is longer than Max but could be split", cfg, c)
		}
		c := chunk.New(cfg)
		for range 2 {
			var got []string
			for _, p := range pieces {
				got = append(got, c.Push(p)...)
			}
			got = append(got, c.Flush()...)
			require.True(t, equal(got, want), "%+v: a reused chunker gives\n%q\nnot\n%q", cfg, got, want)
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
