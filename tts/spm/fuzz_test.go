package spm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzTexts are what a parsed model must encode: plain, CJK, whitespace
// runs, bytes that are not UTF-8, markers and pieces of the test models.
var fuzzTexts = []string{
	"", " ", "Hello, world!", "  ab  b ", "a[X]b", "xyz a", "你好，世界。", "\xff\xfe\xe4\xbd",
	"▁<0x41><unk></s>", "\t\n\r", strings.Repeat("ab", 40),
	"ＡＢＣ，１２３ ﬁ ① ㎏ ｶﾞ", "\u3000 \u00a8x\u3000", "ab[X]abﬁzs\xef\xac",
}

// FuzzParse feeds Parse with damaged and hand-built ModelProtos. An
// error must name the file; a model that parses must encode text into
// ids in range, each naming a piece whose id it is, and decode them
// without panicking. A damaged precompiled_charsmap must fail Parse, not
// Encode.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"tokenizer.model", "tokenizer_nobf.model", "bpe.model", "suffix.model", "bpe_nfkc.model.gz"} {
		data := readModel(f, name)
		f.Add(data)
		f.Add(data[:len(data)/3])
	}
	f.Add(testModel(modelUnigram, "identity", nil))
	f.Add(testModel(modelBPE, "", nil))
	f.Add(testModel(modelUnigram, "nmt_nfkc", []byte{1, 2, 3, 4}))
	cm := buildCharsmap(testRules)
	f.Add(testModel(modelBPE, "test", cm))
	f.Add(testModel(modelUnigram, "test", cm[:len(cm)-1]))
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
			if strings.Trim(text, " ") == "" && m.normalizer.removeExtraWhitespaces && m.charsmap == nil {
				require.Empty(t, ids, "Encode(%q) = %v, want nothing for blank text", text, ids)
			}
			m.Decode(ids)
		}
	})
}

// FuzzCharsmap feeds Parse with damaged precompiled_charsmaps: a broken
// one must fail Parse, and one that parses must encode any text without
// panicking.
func FuzzCharsmap(f *testing.F) {
	// nmt_nfkc's charsmap (FuzzParse has it) would slow every run down
	// to a few executions a second: these are small.
	f.Add(buildCharsmap(testRules), "ab abx [X] [Y zzz s\u3000ﬁ\xef\xac")
	f.Add(buildCharsmap(map[string]string{"a": "b", "ab": "", "abc": " "}), "abcab a")

	f.Fuzz(func(t *testing.T, blob []byte, text string) {
		m, err := Parse(testModel(modelUnigram, "fuzz", blob), "fuzz.model")
		if err != nil {
			require.ErrorContains(t, err, "precompiled_charsmap")
			return
		}
		for _, id := range m.Encode(text) {
			require.True(t, id >= 0 && id < m.Len(), "Encode(%q): id %d out of range", text, id)
		}
	})
}
