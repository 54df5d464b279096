package spm

import (
	"os"
	"strings"
	"testing"
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
		if err != nil {
			f.Fatal(err)
		}
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
			if m != nil {
				t.Fatal("a model and an error")
			}
			if !strings.Contains(err.Error(), "fuzz.model") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if m.Len() == 0 {
			t.Fatal("a model without pieces")
		}
		// Every piece's id maps back to that piece.
		for i := range min(m.Len(), 64) {
			p := m.Piece(i)
			id, ok := m.ID(p)
			if !ok || m.Piece(id) != p {
				t.Fatalf("piece %d %q: ID gives %d, %v", i, p, id, ok)
			}
		}
		texts := fuzzTexts
		for i := range min(m.Len(), 8) {
			texts = append(texts, m.Piece(i), " "+m.Piece(i)+m.Piece(m.Len()-1-i))
		}
		for _, text := range texts {
			ids := m.Encode(text)
			if ids == nil {
				t.Fatalf("Encode(%q) is nil", text)
			}
			for _, id := range ids {
				if id < 0 || id >= m.Len() || m.Piece(id) == "" {
					t.Fatalf("Encode(%q) = %v: id %d out of range 0..%d", text, ids, id, m.Len()-1)
				}
			}
			if strings.Trim(text, " ") == "" && m.normalizer.removeExtraWhitespaces && len(ids) != 0 {
				t.Fatalf("Encode(%q) = %v, want nothing for blank text", text, ids)
			}
			m.Decode(ids)
		}
	})
}
