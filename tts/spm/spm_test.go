package spm

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(data, &g))
	m, err := Load(filepath.Join("testdata", g.Model))
	require.NoError(t, err)
	return &g, m
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"golden.json", "golden_nobf.json"} {
		t.Run(name, func(t *testing.T) {
			g, m := loadGolden(t, name)
			require.Equal(t, g.VocabSize, m.Len(), "Len()")
			require.GreaterOrEqual(t, len(g.Cases), 100, "only %d golden cases", len(g.Cases))
			for i, c := range g.Cases {
				ids := m.Encode(c.Text)
				got := make([]string, len(ids))
				for j, id := range ids {
					got[j] = m.Piece(id)
				}
				if !assert.Equal(t, c.IDs, ids, "case %d Encode(%q)\n got %q\nwant %q", i, c.Text, got, c.Pieces) {
					continue
				}
				for j, id := range ids {
					assert.Equal(t, c.Pieces[j], m.Piece(id), "case %d: Piece(%d)", i, id)
					back, ok := m.ID(c.Pieces[j])
					assert.True(t, ok, "case %d: ID(%q) = %d, %v; want %d", i, c.Pieces[j], back, ok, id)
					assert.Equal(t, id, back, "case %d: ID(%q)", i, c.Pieces[j])
				}
				assert.Equal(t, c.Decoded, m.Decode(c.IDs), "case %d Decode(%v)", i, c.IDs)
			}
			for i, c := range g.DecodeCases {
				assert.Equal(t, c.Decoded, m.Decode(c.IDs), "decode case %d Decode(%v)", i, c.IDs)
			}
		})
	}
}

func TestPieceID(t *testing.T) {
	m, err := Load("testdata/tokenizer.model")
	require.NoError(t, err)
	for piece, want := range map[string]int{"<unk>": 0, "<s>": 1, "</s>": 2} {
		id, ok := m.ID(piece)
		assert.True(t, ok, "ID(%q) = %d, %v; want %d", piece, id, ok, want)
		assert.Equal(t, want, id, "ID(%q)", piece)
		assert.Equal(t, piece, m.Piece(want), "Piece(%d)", want)
	}
	_, ok := m.ID("<0x41>")
	assert.True(t, ok, "byte piece <0x41> missing")
	_, ok = m.ID("no such piece")
	assert.False(t, ok, "ID of unknown piece reported ok")
	assert.Empty(t, m.Piece(-1), "Piece(-1)")
	assert.Empty(t, m.Piece(m.Len()), "Piece(Len())")
	assert.Empty(t, m.Decode([]int{-5, m.Len() + 3}), "Decode(out of range)")
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile("testdata/tokenizer.model")
	require.NoError(t, err)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
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
			_, err := Load(tc.path)
			require.Error(t, err, "Load succeeded")
			msg := err.Error()
			assert.True(t, strings.Contains(msg, tc.want) || tc.name == "json" && strings.Contains(msg, "invalid"),
				"error %q does not contain %q", msg, tc.want)
			assert.Contains(t, msg, tc.path, "error does not name the file")
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
	require.NoError(t, err)
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
		assert.Equal(t, tc.want, m.Encode(tc.text), "Encode(%q)", tc.text)
	}
	assert.Equal(t, "ab ⁇  b", m.Decode([]int{1, 7, 0, 3, 5, 2}), "Decode")

	// Whitespace options off: no dummy prefix, spaces kept verbatim.
	norm := append(pbBytes(1, []byte("identity")), pbVarint(3, 0)...)
	norm = append(norm, pbVarint(4, 0)...)
	m2, err := Parse(buildModel(tinyPieces, pbVarint(3, 1), norm), "tiny2")
	require.NoError(t, err)
	assert.Equal(t, []int{7}, m2.Encode(" ab"), "no-dummy Encode(%q)", " ab")
	assert.Equal(t, []int{6, 3, 3}, m2.Encode("ab  "), "no-dummy Encode(%q)", "ab  ")
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
