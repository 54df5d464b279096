package xasr

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzParseTokens feeds ParseTokens with damaged token tables. An error
// must name the table; a table that parses must be dense and unique
// (every id 0..Len-1 has a piece, which maps back to it), have <blk> as
// id 0, print back to a table that parses to the same pieces, and
// detokenize any ids into valid UTF-8 with no space at either end, the
// text of a prefix of the ids being a prefix of the text.
func FuzzParseTokens(f *testing.F) {
	real, err := os.ReadFile(realTokens)
	require.NoError(f, err)
	lines := bytes.SplitAfter(real, []byte("\n"))
	f.Add(bytes.Join(lines[:40], nil))                           // specials, punctuation, CJK
	f.Add(bytes.Join(append(lines[:3:3], lines[4990:]...), nil)) // a gap in the ids
	f.Add(append(bytes.Join(lines[:20], nil), "▁I 20\r\n"...))   // CRLF
	f.Add([]byte("<blk> 0\n▁2024 1\n▁年 2\n▁3 3\n. 4\n5 5\n▁kg 6\n▁， 7\n▁价 8\n▁, 9\n"))
	for _, bad := range []string{
		"<blk> 0\na b 1\n", "<blk> 0\n\n▁a 1\n", "<blk> 0\n▁a -1\n", "<blk> 0\n▁a 1\n▁b 1\n",
		"<blk> 0\n▁a 99999999999999999999\n", "▁a 0\n<blk> 1\n", "<blk> 0\n\xff\xfe 1\n", "",
		"<blk> 0\n" + strings.Repeat("x", 70000) + " 1\n",
	} {
		f.Add([]byte(bad))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseTokens(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			require.Nil(t, tok, "a table and an error")
			require.ErrorContains(t, err, "fuzz.txt", "error does not name the table")
			return
		}
		n := tok.Len()
		require.NotZero(t, n, "no tokens")
		require.Equal(t, BlankPiece, tok.Piece(0), "%d tokens, id 0", n)
		var table strings.Builder
		ids := make([]int, 0, n+2)
		for id := range n {
			p := tok.Piece(id)
			require.NotEmpty(t, p, "id %d has an empty piece", id)
			require.True(t, utf8.ValidString(p), "id %d has piece %q", id, p)
			require.NotContains(t, p, "\n", "id %d has piece %q", id, p)
			back, ok := tok.ID(p)
			require.True(t, ok, "piece %q of id %d maps back to %d, %v", p, id, back, ok)
			require.Equal(t, id, back, "piece %q of id %d maps back", p, id)
			fmt.Fprintf(&table, "%s %d\n", p, id)
			ids = append(ids, id)
		}
		again, err := ParseTokens(strings.NewReader(table.String()), "again.txt")
		require.NoError(t, err, "the table printed back does not parse")
		for id := range n {
			require.Equal(t, tok.Piece(id), again.Piece(id), "printed back, id %d", id)
		}
		// A sequence of ids, out-of-range ones included, from the input.
		seq := make([]int, 0, 256)
		for _, b := range data[:min(len(data), cap(seq))] {
			seq = append(seq, int(b)%(n+2)-1)
		}
		for _, seq := range [][]int{append(ids, -1, n), seq} {
			text := tok.Detokenize(seq)
			require.True(t, utf8.ValidString(text), "Detokenize(%v) = %q", seq, text)
			require.Equal(t, strings.TrimSpace(text), text, "Detokenize(%v)", seq)
			// Partial results grow monotonically.
			for _, k := range []int{len(seq) / 3, len(seq) / 2, len(seq) - 1} {
				if k >= 0 {
					p := tok.Detokenize(seq[:k])
					require.True(t, strings.HasPrefix(text, p), "Detokenize of %v is %q, of its first %d ids %q: not a prefix", seq, text, k, p)
				}
			}
		}
	})
}
