package xasr

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/tokens.txt is X-ASR's token table, copied from the X-ASR zh-en
// repository (Apache-2.0; commit a6dfd1d36160744f76d598a83a3973b713a2f0f7):
// the table the streaming deployment models ship with.
var realTokens = filepath.Join("testdata", "tokens.txt")

func loadReal(t testing.TB) *Tokens {
	t.Helper()
	tok, err := LoadTokens(realTokens)
	require.NoError(t, err)
	return tok
}

// ids looks pieces up in the table, so tests never hard-code ids.
func ids(t testing.TB, tok *Tokens, pieces ...string) []int {
	t.Helper()
	out := make([]int, len(pieces))
	for i, p := range pieces {
		id, ok := tok.ID(p)
		require.True(t, ok, "piece %q is not in the table", p)
		out[i] = id
	}
	return out
}

func TestLoadRealTokens(t *testing.T) {
	tok := loadReal(t)
	assert.Equal(t, 5000, tok.Len())
	assert.Equal(t, BlankPiece, tok.Piece(0))
	id, ok := tok.ID("<unk>")
	require.True(t, ok)
	assert.Equal(t, "<unk>", tok.Piece(id))
	assert.Equal(t, "", tok.Piece(-1))
	assert.Equal(t, "", tok.Piece(5000))
}

func TestDetokenize(t *testing.T) {
	tok := loadReal(t)
	for _, tc := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"chinese", []string{"▁我", "▁喜", "▁欢", "▁听", "▁音", "▁乐"}, "我喜欢听音乐"},
		{"english", []string{"▁I", "▁like", "▁the", "▁music"}, "I like the music"},
		{"subwords", []string{"▁He", "l", "lo", "▁world"}, "Hello world"},
		{"apostrophe", []string{"▁I", "▁don", "'", "t", "▁like", "▁it"}, "I don't like it"},
		{"mixed", []string{"▁我", "▁用", "▁the", "▁app", "▁听", "▁音", "▁乐"}, "我用 the app 听音乐"},
		{"chinese punctuation", []string{"▁你", "▁好", "▁，", "▁我", "▁是", "▁你", "▁。", "▁好"}, "你好，我是你。好"},
		{"all chinese punctuation", []string{"▁你", "▁、", "▁我", "▁：", "▁好", "▁；", "▁是", "▁？", "▁好", "▁！"}, "你、我：好；是？好！"},
		{"english punctuation", []string{"▁What", "▁time", "▁is", "▁it", "▁?", "▁I", "▁like", "▁it", "▁!", "▁the", "▁music", "▁,", "▁it", "▁."}, "What time is it? I like it! the music, it."},
		{"colon semicolon", []string{"▁it", "▁:", "▁music", "▁;", "▁I"}, "it: music; I"},
		{"attached punctuation", []string{"▁I", ",", "▁like", "?", "▁it", "."}, "I, like? it."},
		{"punctuation then chinese", []string{"▁I", "▁like", "▁it", "▁.", "▁我", "▁好"}, "I like it. 我好"},
		{"chinese after english punctuation", []string{"▁it", "▁,", "▁我"}, "it, 我"},
		{"english after chinese punctuation", []string{"▁好", "▁。", "▁I", "▁like", "▁it"}, "好。 I like it"},
		{"numbers chinese", []string{"▁二", "▁零", "▁二", "▁四", "▁年", "▁三", "▁点", "▁五", "▁个"}, "二零二四年三点五个"},
		{"numbers english", []string{"▁one", "▁hundred", "▁twenty", "▁four"}, "one hundred twenty four"},
		{"numbers mixed", []string{"▁I", "▁like", "▁twenty", "▁four", "▁个"}, "I like twenty four 个"},
		{"specials skipped", []string{"<blk>", "▁你", "<unk>", "▁好", "<sos/eos>"}, "你好"},
		{"bare word marks", []string{"▁", "▁I", "▁", "▁", "▁like", "▁"}, "I like"},
		{"leading punctuation", []string{"▁，", "▁你"}, "，你"},
		{"empty", nil, ""},
		{"only specials", []string{"<blk>", "<unk>"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tok.Detokenize(ids(t, tok, tc.pieces...)))
		})
	}
	// Out-of-range ids are skipped, not a panic.
	assert.Equal(t, "你", tok.Detokenize(append([]int{-1, 5000, 99999}, ids(t, tok, "▁你")...)))
}

// TestDetokenizeDigits uses a small table: X-ASR's has no digit pieces
// (numbers come out spelled), but the rules must not depend on that.
func TestDetokenizeDigits(t *testing.T) {
	tok, err := ParseTokens(strings.NewReader("<blk> 0\n▁2024 1\n▁年 2\n▁3 3\n. 4\n5 5\n▁kg 6\n▁， 7\n▁价 8\n▁, 9\n"), "digits.txt")
	require.NoError(t, err)
	assert.Equal(t, "2024 年", tok.Detokenize([]int{1, 2}))
	assert.Equal(t, "3.5 kg，价", tok.Detokenize([]int{3, 4, 5, 6, 7, 8}))
	assert.Equal(t, "年, 2024", tok.Detokenize([]int{2, 9, 1}))
}

func TestAddFinalStop(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"你好":            "你好。",
		"hello":         "hello.",
		"我用 the app":    "我用 the app.",
		"I like 音乐":     "I like 音乐。",
		"你好？":           "你好？",
		"你好，":           "你好，",
		"what?":         "what?",
		"ok!":           "ok!",
		"done.":         "done.",
		"a; b:":         "a; b:",
		"twenty four 个": "twenty four 个。",
		"don't":         "don't.",
	} {
		assert.Equal(t, want, AddFinalStop(in), "%q", in)
	}
}

// TestDetokenizePrefixes checks the property partial results rely on: the
// text of a prefix of the ids is a prefix of the text of all of them.
func TestDetokenizePrefixes(t *testing.T) {
	tok := loadReal(t)
	rng := rand.New(rand.NewPCG(1, 2))
	// Bias towards punctuation (ids 2..14), the bare mark and specials, which the rules treat specially.
	bare, _ := tok.ID("▁")
	for range 200 {
		seq := make([]int, 1+rng.IntN(30))
		for i := range seq {
			switch rng.IntN(6) {
			case 0:
				seq[i] = 2 + rng.IntN(13)
			case 1:
				seq[i] = []int{0, 1, bare}[rng.IntN(3)]
			default:
				seq[i] = rng.IntN(tok.Len())
			}
		}
		full := tok.Detokenize(seq)
		assert.Equal(t, strings.TrimSpace(full), full)
		for k := range seq {
			p := tok.Detokenize(seq[:k])
			if !assert.True(t, strings.HasPrefix(full, p), "prefix %d of %v: %q is not a prefix of %q", k, seq, p, full) {
				return
			}
		}
	}
}

func TestParseTokensErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"three fields", "<blk> 0\na b 1\n", []string{"bad.txt:2", "not a `<piece> <id>` line"}},
		{"one field", "<blk> 0\nabc\n", []string{"bad.txt:2"}},
		{"blank line", "<blk> 0\n\n▁a 1\n", []string{"bad.txt:2"}},
		{"bad id", "<blk> 0\n▁a x\n", []string{"bad.txt:2", `id "x"`}},
		{"negative id", "<blk> 0\n▁a -1\n", []string{"bad.txt:2"}},
		{"duplicate id", "<blk> 0\n▁a 1\n▁b 1\n", []string{"bad.txt:3", "id 1 already used on line 2"}},
		{"gap", "<blk> 0\n▁a 1\n▁b 3\n", []string{"bad.txt:3", "id 3 out of range", "0..2"}},
		{"duplicate piece", "<blk> 0\n▁a 1\n▁a 2\n", []string{"bad.txt:3", `piece "▁a" already has id 1`}},
		{"blank not 0", "▁a 0\n<blk> 1\n", []string{"bad.txt:2", "<blk> has id 1, want 0"}},
		{"no blank", "▁a 0\n▁b 1\n", []string{"bad.txt", "no <blk>"}},
		{"empty", "", []string{"bad.txt is empty"}},
		{"binary", "<blk> 0\n\xff\xfe 1\n", []string{"bad.txt:2", "UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTokens(strings.NewReader(tc.text), "bad.txt")
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// CRLF files are fine.
	tok, err := ParseTokens(strings.NewReader("<blk> 0\r\n▁a 1\r\n"), "crlf.txt")
	require.NoError(t, err)
	assert.Equal(t, "a", tok.Detokenize([]int{1}))

	_, err = LoadTokens(filepath.Join(t.TempDir(), "nope.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "nope.txt")
}
