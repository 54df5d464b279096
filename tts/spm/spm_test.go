package spm

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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
		Bytes   string   `json:"bytes"` // hex, for text that is not UTF-8
		IDs     []int    `json:"ids"`
		Pieces  []string `json:"pieces"`
		Decoded string   `json:"decoded"`
	} `json:"cases"`
	DecodeCases []struct {
		IDs     []int  `json:"ids"`
		Decoded string `json:"decoded"`
	} `json:"decode_cases"`
}

// goldenFiles are the fixtures of scripts/models/make_spm_golden.py, one
// per model: unigram and BPE, identity and nmt_nfkc normalization.
var goldenFiles = []string{
	"golden.json", "golden_nobf.json", "golden_unigram_nfkc.json", "golden_bpe_nfkc.json",
	"golden_bpe.json", "golden_suffix.json",
}

// readModel reads a test model, gunzipping the .gz ones (the nmt_nfkc
// models, whose charsmap alone is ~240 KB).
func readModel(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	if !strings.HasSuffix(name, ".gz") {
		return data
	}
	r, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	data, err = io.ReadAll(r)
	require.NoError(t, err)
	return data
}

func loadGolden(t testing.TB, name string) (*goldenFile, *Model) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(data, &g))
	m, err := Parse(readModel(t, g.Model), g.Model)
	require.NoError(t, err)
	return &g, m
}

// TestGolden matches Encode and Decode with python3-sentencepiece on every
// case. The normalization cases (golden_*nfkc.json) go through
// google/sentencepiece src/normalizer.cc:195-253 (user-defined pieces
// kept, the charsmap's longest rule, U+FFFD for each malformed byte) and
// src/normalizer.cc:71-186 (leading spaces dropped :86-95, dummy prefix
// :128 or suffix :179, spaces a replacement starts with dropped after one
// that ends in a space :137-138, "▁" for " " :143-145, trailing spaces
// dropped :166-176); golden_bpe*.json go through google/sentencepiece
// src/bpe_model.cc:38-203 (unused pieces split back :176-193), and
// golden_suffix.json's tie in case 20 through the double-precision sums
// of google/sentencepiece src/unigram_model.cc:979-985.
func TestGolden(t *testing.T) {
	for _, name := range goldenFiles {
		t.Run(name, func(t *testing.T) {
			g, m := loadGolden(t, name)
			require.Equal(t, g.VocabSize, m.Len(), "Len()")
			require.GreaterOrEqual(t, len(g.Cases), 100, "only %d golden cases", len(g.Cases))
			for i, c := range g.Cases {
				if c.Bytes != "" {
					b, err := hex.DecodeString(c.Bytes)
					require.NoError(t, err)
					c.Text = string(b)
				}
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
		{"word", write("word.model", testModel(modelWord, "", nil)), "unsupported model_type WORD"},
		{"nfkc", write("nfkc.model", testModel(modelUnigram, "nmt_nfkc", []byte{1, 2, 3, 4})), `normalizer "nmt_nfkc": precompiled_charsmap is broken`},
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

// buildCharsmap compiles rules into a precompiled_charsmap blob laid out
// as darts-clone lays out a double array, though sparsely: every trie
// node gets a 256-unit block of its own. Keys must not contain NUL.
func buildCharsmap(rules map[string]string) []byte {
	prefixes := map[string]bool{"": true}
	for k := range rules {
		for i := 1; i <= len(k); i++ {
			prefixes[k[:i]] = true
		}
	}
	order := slices.Sorted(maps.Keys(prefixes))
	base := make(map[string]uint32, len(order))
	for i, p := range order {
		base[p] = uint32(256 * (i + 1))
	}
	units := make([]uint32, 256*(len(order)+1))
	for i := range units {
		units[i] = 1 << 31 // a leaf's label: matches no byte
	}
	units[0] = base[""] << 10
	var normalized []byte
	for _, p := range order[1:] {
		c := uint32(p[len(p)-1])
		pos := base[p[:len(p)-1]] ^ c
		units[pos] = (pos^base[p])<<10 | c
		if rep, ok := rules[p]; ok {
			units[pos] |= 1 << 8
			units[base[p]] = 1<<31 | uint32(len(normalized))
			normalized = append(append(normalized, rep...), 0)
		}
	}
	blob := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
	for _, u := range units {
		blob = binary.LittleEndian.AppendUint32(blob, u)
	}
	return append(blob, normalized...)
}

var testRules = map[string]string{
	"a": "A", "ab": "<AB>", "ﬁ": "fi", "z": "", "s": " s ", "\u3000": " ", "[": "(",
}

// TestCharsmap follows normalizer.cc on rules that single out its steps.
func TestCharsmap(t *testing.T) {
	m, err := Parse(testModel(modelUnigram, "test", buildCharsmap(testRules)), "charsmap")
	require.NoError(t, err)
	tests := []struct{ text, want string }{
		// The longest rule wins
		// (google/sentencepiece src/normalizer.cc:222-228).
		{"ab abx ax", "▁<AB>▁<AB>x▁Ax"},
		{"ﬁx", "▁fix"},
		// User-defined pieces are matched first and kept as they are
		// (google/sentencepiece src/normalizer.cc:201-205).
		{"[X] [Y", "▁[X]▁(Y"},
		// A rule may delete (google/sentencepiece src/normalizer.cc:140),
		// even everything, and then the dummy prefix goes with the
		// trailing spaces (google/sentencepiece src/normalizer.cc:166-176).
		{"zaz", "▁A"},
		{"zzz", ""},
		// Leading text that normalizes to " " is dropped
		// (google/sentencepiece src/normalizer.cc:86-95), and so are a
		// replacement's leading spaces after a space
		// (google/sentencepiece src/normalizer.cc:137-138).
		{"\u3000\u3000a", "▁A"},
		{"x\u3000\u3000y", "▁x▁y"},
		{"x s", "▁x▁s"},
		{"xsy", "▁x▁s▁y"},
		// No rule: the character as it is, or U+FFFD for each malformed
		// byte (google/sentencepiece src/normalizer.cc:231-244); bytes a
		// rule starts with but does not finish are not a match.
		{"a\xff\xef\xac", "▁A\ufffd\ufffd\ufffd"},
		{"\ufffd", "▁\ufffd"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, m.normalize(tc.text), "normalize(%q)", tc.text)
	}
}

// TestCharsmapErrors breaks the blob in the ways sentencepiece would read
// out of bounds (google/sentencepiece src/normalizer.cc:274-309 checks
// only the header); Parse must report them.
func TestCharsmapErrors(t *testing.T) {
	good := buildCharsmap(map[string]string{"a": "b"})
	// Root at 256, "a"'s unit at 256^'a', its leaf at 512.
	set := func(b []byte, unit int, v uint32) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b[4+4*unit:], v)
		return b
	}
	size := func(b []byte, n int) []byte {
		b = slices.Clone(b)
		binary.LittleEndian.PutUint32(b, uint32(n))
		return b
	}
	tests := []struct {
		name string
		blob []byte
		want string
	}{
		{"short", good[:4], "too short"},
		{"trie past the end", size(good, len(good)), "exceeds the blob"},
		// google/sentencepiece src/normalizer.cc:289 lets this one
		// through and reads 3 bytes past the end.
		{"trie past the end by less than the header", size(good, len(good)-1), "exceeds the blob"},
		{"no units", size(good[:5], 0), "empty trie"},
		{"units cut", slices.Concat(size(good[:4], 256*4), good[4:4+256*4], []byte("b\x00")), "root offset"},
		{"root offset", set(good, 0, 4096<<10), "root offset"},
		{"child offset", set(good, 256^'a', (256^'a'^4096)<<10|1<<8|'a'), "offset out of range"},
		{"value out of range", set(good, 512, 1<<31|2), "not NUL-terminated"},
		{"no NUL", good[:len(good)-1], "not NUL-terminated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCharsmap(tc.blob)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = Parse(testModel(modelBPE, "broken", tc.blob), "broken.model")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// A trie size that is not a multiple of 4 drops the partial unit, but
	// the replacements still start after the size given
	// (google/sentencepiece src/normalizer.cc:64-65, :305-306).
	units := len(good) - 4 - 2 // "b\x00"
	odd := slices.Concat(size(good[:4], units+3), good[4:4+units], []byte{9, 9, 9}, []byte("c\x00"))
	c, err := parseCharsmap(odd)
	require.NoError(t, err)
	rep, n := c.longestMatch("ax")
	assert.Equal(t, "c", rep)
	assert.Equal(t, 1, n)
}

// TestDecodeLeadingSpace checks which leading "▁"s Decode drops
// (google/sentencepiece src/sentencepiece_processor.cc:792-807, :894):
// with extra whitespace removed, one per piece until text is written;
// with only the dummy prefix, the first one.
func TestDecodeLeadingSpace(t *testing.T) {
	ws := func(removeExtra uint64) *Model {
		norm := append(pbBytes(1, []byte("identity")), pbVarint(4, removeExtra)...)
		m, err := Parse(buildModel(tinyPieces, pbVarint(3, modelUnigram), norm), "ws")
		require.NoError(t, err)
		return m
	}
	ids := []int{1, 3, 3, 7, 2} // <s> ▁ ▁ ▁ab </s>
	assert.Equal(t, "ab", ws(1).Decode(ids))
	assert.Equal(t, "  ab", ws(0).Decode(ids))
}

func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"golden.json", "golden_unigram_nfkc.json", "golden_bpe_nfkc.json"} {
		b.Run(name, func(b *testing.B) {
			g, m := loadGolden(b, name)
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
		})
	}
}

// BenchmarkParseNFKC is the cost of loading a model with nmt_nfkc's
// charsmap, most of it checking the trie.
func BenchmarkParseNFKC(b *testing.B) {
	data := readModel(b, "bpe_nfkc.model.gz")
	for b.Loop() {
		if _, err := Parse(data, "bpe_nfkc.model"); err != nil {
			b.Fatal(err)
		}
	}
}
