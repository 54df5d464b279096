package spm

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type goldenFile struct {
	Model     string `json:"model"`
	VocabSize int    `json:"vocab_size"`
	Cases     []struct {
		Text    string   `json:"text"`
		IDs     []int    `json:"ids"`
		Pieces  []string `json:"pieces"`
		Decoded string   `json:"decoded"`
	} `json:"cases"`
	DecodeCases []struct {
		IDs     []int  `json:"ids"`
		Decoded string `json:"decoded"`
	} `json:"decode_cases"`
}

func loadGolden(t testing.TB, name string) (*goldenFile, *Model) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	m, err := Load(filepath.Join("testdata", g.Model))
	if err != nil {
		t.Fatal(err)
	}
	return &g, m
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"golden.json", "golden_nobf.json"} {
		t.Run(name, func(t *testing.T) {
			g, m := loadGolden(t, name)
			if m.Len() != g.VocabSize {
				t.Fatalf("Len() = %d, want %d", m.Len(), g.VocabSize)
			}
			if len(g.Cases) < 100 {
				t.Fatalf("only %d golden cases", len(g.Cases))
			}
			for i, c := range g.Cases {
				ids := m.Encode(c.Text)
				if !reflect.DeepEqual(ids, c.IDs) {
					got := make([]string, len(ids))
					for j, id := range ids {
						got[j] = m.Piece(id)
					}
					t.Errorf("case %d Encode(%q)\n got %v %q\nwant %v %q", i, c.Text, ids, got, c.IDs, c.Pieces)
					continue
				}
				for j, id := range ids {
					if p := m.Piece(id); p != c.Pieces[j] {
						t.Errorf("case %d: Piece(%d) = %q, want %q", i, id, p, c.Pieces[j])
					}
					if back, ok := m.ID(c.Pieces[j]); !ok || back != id {
						t.Errorf("case %d: ID(%q) = %d, %v; want %d", i, c.Pieces[j], back, ok, id)
					}
				}
				if got := m.Decode(c.IDs); got != c.Decoded {
					t.Errorf("case %d Decode(%v) = %q, want %q", i, c.IDs, got, c.Decoded)
				}
			}
			for i, c := range g.DecodeCases {
				if got := m.Decode(c.IDs); got != c.Decoded {
					t.Errorf("decode case %d Decode(%v) = %q, want %q", i, c.IDs, got, c.Decoded)
				}
			}
		})
	}
}

func TestPieceID(t *testing.T) {
	m, err := Load("testdata/tokenizer.model")
	if err != nil {
		t.Fatal(err)
	}
	for piece, want := range map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2} {
		if id, ok := m.ID(piece); !ok || id != want {
			t.Errorf("ID(%q) = %d, %v; want %d", piece, id, ok, want)
		}
		if p := m.Piece(want); p != piece {
			t.Errorf("Piece(%d) = %q, want %q", want, p, piece)
		}
	}
	if _, ok := m.ID("<0x41>"); !ok {
		t.Error("byte piece <0x41> missing")
	}
	if _, ok := m.ID("no such piece"); ok {
		t.Error("ID of unknown piece reported ok")
	}
	if p := m.Piece(-1); p != "" {
		t.Errorf("Piece(-1) = %q", p)
	}
	if p := m.Piece(m.Len()); p != "" {
		t.Errorf("Piece(Len()) = %q", p)
	}
	if got := m.Decode([]int{-5, m.Len() + 3}); got != "" {
		t.Errorf("Decode(out of range) = %q", got)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/tokenizer.model")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "missing.model"), "no such file"},
		{"truncated", write("truncated.model", good[:len(good)/2]), "truncated protobuf"},
		{"truncated-1", write("truncated1.model", good[:len(good)-1]), "truncated protobuf"},
		{"empty", write("empty.model", nil), "empty file"},
		{"text", write("text.model", []byte("this is definitely not a protobuf file\n")), "invalid sentencepiece ModelProto"},
		{"json", write("json.model", []byte(`{"pieces": []}`)), "tokenizer"},
		{"bpe", write("bpe.model", testModel(2, "", nil)), "not a unigram model"},
		{"nfkc", write("nfkc.model", testModel(1, "nmt_nfkc", []byte{1, 2, 3, 4})), `unsupported normalizer "nmt_nfkc"`},
		{"nounk", write("nounk.model", noUnkModel()), "unk is not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Load(tc.path)
			if err == nil {
				t.Fatalf("Load succeeded (%d pieces)", m.Len())
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) && !(tc.name == "json" && strings.Contains(msg, "invalid")) {
				t.Errorf("error %q does not contain %q", msg, tc.want)
			}
			if !strings.Contains(msg, tc.path) {
				t.Errorf("error %q does not name the file %q", msg, tc.path)
			}
		})
	}
}

// Hand-built protobufs for error and feature tests.

func pbKey(num, wt int) []byte { return binary.AppendUvarint(nil, uint64(num<<3|wt)) }

func pbBytes(num int, v []byte) []byte {
	b := pbKey(num, wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func pbVarint(num int, v uint64) []byte { return binary.AppendUvarint(pbKey(num, wireVarint), v) }

func pbPiece(piece string, score float32, typ int) []byte {
	var b []byte
	b = append(b, pbBytes(1, []byte(piece))...)
	b = append(b, pbKey(2, wireFixed32)...)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(score))
	b = append(b, pbVarint(3, uint64(typ))...)
	return pbBytes(1, b)
}

type tp struct {
	piece string
	score float32
	typ   int
}

func buildModel(pieces []tp, trainer, normalizer []byte) []byte {
	var b []byte
	for _, p := range pieces {
		b = append(b, pbPiece(p.piece, p.score, p.typ)...)
	}
	b = append(b, pbBytes(2, trainer)...)
	b = append(b, pbBytes(3, normalizer)...)
	// An unknown field that must be skipped.
	b = append(b, pbVarint(99, 7)...)
	return b
}

var tinyPieces = []tp{
	{"<unk>", 0, typeUnknown}, {"<s>", 0, typeControl}, {"</s>", 0, typeControl},
	{"▁", -1, typeNormal}, {"a", -2, typeNormal}, {"b", -2, typeNormal}, {"ab", -3, typeNormal},
	{"▁ab", -3.5, typeNormal}, {"[X]", 0, typeUserDefined}, {"abab", 0, typeUnused},
}

func testModel(modelType int, normName string, charsmap []byte) []byte {
	trainer := pbVarint(3, uint64(modelType))
	var norm []byte
	if normName != "" {
		norm = append(norm, pbBytes(1, []byte(normName))...)
	}
	if charsmap != nil {
		norm = append(norm, pbBytes(2, charsmap)...)
	}
	return buildModel(tinyPieces, trainer, norm)
}

func noUnkModel() []byte {
	return buildModel([]tp{{"a", -1, typeNormal}}, pbVarint(3, 1), nil)
}

func TestTinyModel(t *testing.T) {
	m, err := Parse(testModel(1, "identity", nil), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"ab", []int{7}},
		{"  ab  b ", []int{7, 3, 5}},
		{"abab", []int{7, 6}},        // unused piece "abab" is never matched
		{"a[X]b", []int{3, 4, 8, 5}}, // user-defined piece
		{"xyz a", []int{3, 0, 3, 4}}, // unknown run merged into one <unk>
		{"", []int{}},
	}
	for _, tc := range tests {
		if got := m.Encode(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Encode(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if got, want := m.Decode([]int{1, 7, 0, 3, 5, 2}), "ab ⁇  b"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}

	// Whitespace options off: no dummy prefix, spaces kept verbatim.
	norm := append(pbBytes(1, []byte("identity")), pbVarint(3, 0)...)
	norm = append(norm, pbVarint(4, 0)...)
	m2, err := Parse(buildModel(tinyPieces, pbVarint(3, 1), norm), "tiny2")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m2.Encode(" ab"), []int{7}; !reflect.DeepEqual(got, want) {
		t.Errorf("no-dummy Encode(%q) = %v, want %v", " ab", got, want)
	}
	if got, want := m2.Encode("ab  "), []int{6, 3, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("no-dummy Encode(%q) = %v, want %v", "ab  ", got, want)
	}
}

func BenchmarkEncode(b *testing.B) {
	g, m := loadGolden(b, "golden.json")
	texts := make([]string, len(g.Cases))
	n := 0
	for i, c := range g.Cases {
		texts[i] = c.Text
		n += len(c.Text)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			m.Encode(s)
		}
	}
}
