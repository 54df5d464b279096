package chunk

// Character classes of the markdown and split stages.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

func isRuleByte(ch byte) bool { return strings.IndexByte("-*_=|:+~>#", ch) >= 0 }

func isDigit(ch byte) bool { return '0' <= ch && ch <= '9' }

func isDigitRune(r rune) bool { return '0' <= r && r <= '9' }

func isASCIILetter(ch byte) bool { return 'a' <= ch|0x20 && ch|0x20 <= 'z' }

func isASCIIPunct(ch byte) bool {
	return strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", ch) >= 0
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func isBlank(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || unicode.IsSpace(r) }

func isCJKTerminal(r rune) bool {
	switch r {
	case '。', '｡', '！', '？', '；', '…', '⋯':
		return true
	}
	return false
}

func isCJKClause(r rune) bool {
	switch r {
	case '，', '、', '：', '﹐', '﹑', '､':
		return true
	}
	return false
}

// breaksAfter: Chinese particles a phrase ends on (的 了 吗 呢 吧 …), and
// the verbs of being and having and the modal verbs a predicate starts
// with (是 有 会 要 能), after which a speaker may pause without breaking
// a word.
func breaksAfter(r rune) bool {
	return strings.ContainsRune("的了吗呢吧啊呀哦着过是有会要能", r)
}

// breaksBefore: conjunctions and prepositions that open a phrase (和 但
// 在 从 …), and the adverbs and negations a predicate starts with (就 都
// 也 还 不 没 很 …), where a subject ends: a speaker may pause before them.
func breaksBefore(r rune) bool {
	return strings.ContainsRune("和跟与但而或所因如在从到对把被给为向就都也还才又已正将不没很最更太", r)
}

// isCloser: closing quotes and brackets stay with the sentence they close.
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}':
		return true
	}
	return r >= utf8.RuneSelf && unicode.In(r, unicode.Pe, unicode.Pf)
}

// isCJK reports whether r belongs to a script written without spaces
// between words (Han, kana, bopomofo) or is CJK punctuation or a full-width
// form. Hangul, written with spaces, is not.
func isCJK(r rune) bool {
	switch {
	case r < 0x2e80:
		return false
	case 0x4e00 <= r && r <= 0x9fff, 0x3000 <= r && r <= 0x303f, 0xff00 <= r && r <= 0xffef,
		0xfe10 <= r && r <= 0xfe1f, 0xfe30 <= r && r <= 0xfe4f:
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo)
}

// isEmojiPart: characters that only modify or combine emoji.
func isEmojiPart(r rune) bool {
	return 0xfe00 <= r && r <= 0xfe0f || // variation selectors
		r == 0x20e3 || // combining keycap
		0x1f3fb <= r && r <= 0x1f3ff || // skin tones
		0x1f1e6 <= r && r <= 0x1f1ff || // regional indicators (flags)
		0xe0020 <= r && r <= 0xe007f || // tags
		0xe0100 <= r && r <= 0xe01ef // variation selectors supplement
}

// isPictographic: emoji (Extended_Pictographic), other symbols of the
// symbol and emoji blocks, and bullets.
func isPictographic(r rune) bool {
	if r < 0xa9 {
		return false
	}
	lo, hi := 0, len(extendedPictographic)
	for lo < hi {
		m := (lo + hi) / 2
		switch rg := extendedPictographic[m]; {
		case r < rg[0]:
			hi = m
		case r > rg[1]:
			lo = m + 1
		default:
			return true
		}
	}
	switch {
	case 0x2190 <= r && r <= 0x21ff, 0x27f0 <= r && r <= 0x27ff, 0x2900 <= r && r <= 0x297f:
		return unicode.In(r, unicode.So, unicode.Sm) // arrows
	case 0x2300 <= r && r <= 0x2bff, 0x1f000 <= r && r <= 0x1fbff:
		return unicode.Is(unicode.So, r)
	}
	return r == '•' || r == '‣' || r == '⁃'
}

// extendedPictographic lists the Extended_Pictographic ranges of Unicode's
// emoji-data.txt (15.1), merged.
var extendedPictographic = [][2]rune{
	{0x00a9, 0x00a9}, {0x00ae, 0x00ae}, {0x203c, 0x203c}, {0x2049, 0x2049},
	{0x2122, 0x2122}, {0x2139, 0x2139}, {0x2194, 0x2199}, {0x21a9, 0x21aa},
	{0x231a, 0x231b}, {0x2328, 0x2328}, {0x2388, 0x2388}, {0x23cf, 0x23cf},
	{0x23e9, 0x23f3}, {0x23f8, 0x23fa}, {0x24c2, 0x24c2}, {0x25aa, 0x25ab},
	{0x25b6, 0x25b6}, {0x25c0, 0x25c0}, {0x25fb, 0x25fe}, {0x2600, 0x2605},
	{0x2607, 0x2612}, {0x2614, 0x2685}, {0x2690, 0x2705}, {0x2708, 0x2712},
	{0x2714, 0x2714}, {0x2716, 0x2716}, {0x271d, 0x271d}, {0x2721, 0x2721},
	{0x2728, 0x2728}, {0x2733, 0x2734}, {0x2744, 0x2744}, {0x2747, 0x2747},
	{0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757},
	{0x2763, 0x2767}, {0x2795, 0x2797}, {0x27a1, 0x27a1}, {0x27b0, 0x27b0},
	{0x27bf, 0x27bf}, {0x2934, 0x2935}, {0x2b05, 0x2b07}, {0x2b1b, 0x2b1c},
	{0x2b50, 0x2b50}, {0x2b55, 0x2b55}, {0x3030, 0x3030}, {0x303d, 0x303d},
	{0x3297, 0x3297}, {0x3299, 0x3299}, {0x1f000, 0x1f0ff}, {0x1f10d, 0x1f10f},
	{0x1f12f, 0x1f12f}, {0x1f16c, 0x1f171}, {0x1f17e, 0x1f17f}, {0x1f18e, 0x1f18e},
	{0x1f191, 0x1f19a}, {0x1f1ad, 0x1f1e5}, {0x1f201, 0x1f20f}, {0x1f21a, 0x1f21a},
	{0x1f22f, 0x1f22f}, {0x1f232, 0x1f23a}, {0x1f23c, 0x1f23f}, {0x1f249, 0x1f3fa},
	{0x1f400, 0x1f53d}, {0x1f546, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f774, 0x1f77f},
	{0x1f7d5, 0x1f7ff}, {0x1f80c, 0x1f80f}, {0x1f848, 0x1f84f}, {0x1f85a, 0x1f85f},
	{0x1f888, 0x1f88f}, {0x1f8ae, 0x1f8ff}, {0x1f90c, 0x1f93a}, {0x1f93c, 0x1f945},
	{0x1f947, 0x1faff}, {0x1fc00, 0x1fffd},
}
