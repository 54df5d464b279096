package spm

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzTexts are what a parsed model must encode: plain, CJK, whitespace
// runs, bytes that are not UTF-8, markers and pieces of the test models.
var fuzzTexts = []string{
	"", " ", "Hello, world!", "  ab  b ", "a[X]b", "xyz a", "你好，世界。", "\xff\xfe\xe4\xbd",
	"▁<0x41><unk></s>", "\t\n\r", strings.Repeat("ab", 40),
}

// FuzzParse feeds Parse with damaged and hand-built ModelProtos. An
// error must name the file; a model that parses must encode text into
// ids in range, each naming a piece whose id it is, and decode them
// without panicking.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"testdata/tokenizer.model", "testdata/tokenizer_nobf.model"} {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(data)
		f.Add(data[:len(data)/3])
	}
	f.Add(testModel(modelUnigram, "identity", nil))
	f.Add(testModel(modelBPE, "", nil))
	f.Add(testModel(modelUnigram, "nmt_nfkc", []byte{1, 2, 3, 4}))
	f.Add(noUnkModel())
	// Byte fallback, whitespace options off, and a piece that is a
	// broken UTF-8 sequence.
	f.Add(buildModel(append(tinyPieces[:len(tinyPieces):len(tinyPieces)], tp{"<0x41>", 0, typeByte}, tp{"\xe4", -1, typeNormal}),
		append(pbVarint(3, 1), pbVarint(35, 1)...), append(pbVarint(3, 0), pbVarint(4, 0)...)))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "fuzz.model")
		if err != nil {
			require.Nil(t, m, "a model and an error")
			require.ErrorContains(t, err, "fuzz.model", "error does not name the file")
			return
		}
		require.NotZero(t, m.Len(), "a model without pieces")
		// Every piece's id maps back to that piece.
		for i := range min(m.Len(), 64) {
			p := m.Piece(i)
			id, ok := m.ID(p)
			require.True(t, ok, "piece %d %q: ID gives %d, %v", i, p, id, ok)
			require.Equal(t, p, m.Piece(id), "piece %d %q: ID gives %d", i, p, id)
		}
		texts := fuzzTexts
		for i := range min(m.Len(), 8) {
			texts = append(texts, m.Piece(i), " "+m.Piece(i)+m.Piece(m.Len()-1-i))
		}
		for _, text := range texts {
			ids := m.Encode(text)
			require.NotNil(t, ids, "Encode(%q) is nil", text)
			for _, id := range ids {
				require.GreaterOrEqual(t, id, 0, "Encode(%q) = %v: id %d out of range 0..%d", text, ids, id, m.Len()-1)
				require.Less(t, id, m.Len(), "Encode(%q) = %v: id %d out of range 0..%d", text, ids, id, m.Len()-1)
				require.NotEmpty(t, m.Piece(id), "Encode(%q) = %v: id %d has no piece", text, ids, id)
			}
			if strings.Trim(text, " ") == "" && m.normalizer.removeExtraWhitespaces {
				require.Empty(t, ids, "Encode(%q) = %v, want nothing for blank text", text, ids)
			}
			m.Decode(ids)
		}
	})
}
