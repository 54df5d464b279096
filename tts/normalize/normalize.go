package normalize

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text normalizes s for speech, reading each expression the Chinese way
// when it sits in a run of CJK text and the English way otherwise.
func Text(s string) string { return run(s, langAuto, langEN) }

// Reply normalizes s, a piece of a reply in the given language, as Text
// does, except that an expression with no letters near it ("3/4", "1+1=2")
// is read in the reply's language rather than in English.
func Reply(s string, in Language) string {
	bare := langEN
	if in == LangChinese {
		bare = langZH
	}
	return run(s, langAuto, bare)
}

// English normalizes s for speech with English readings throughout.
func English(s string) string { return run(s, langEN, langEN) }

// Chinese normalizes s for speech with Mandarin (simplified) readings
// throughout.
func Chinese(s string) string { return run(s, langZH, langZH) }

// Language is what a reply is spoken in, as far as reading numbers goes.
type Language uint8

const (
	LangUnknown Language = iota // no letters to tell by
	LangEnglish
	LangChinese
)

// Detect tells the language of s by its letters: Chinese when it has at
// least as many Han characters as Latin words, English when it has more
// Latin words, LangUnknown when it has neither.
func Detect(s string) Language {
	han, words := 0, 0
	inWord := false
	for _, r := range s {
		c := classify(r)
		if c == clsHan && unicode.Is(unicode.Han, r) {
			han++
		}
		if c == clsLatin && !inWord {
			words++
		}
		inWord = c == clsLatin
	}
	switch {
	case han > 0 && han >= words:
		return LangChinese
	case words > 0:
		return LangEnglish
	}
	return LangUnknown
}

type lang uint8

const (
	langAuto lang = iota
	langEN
	langZH
)

// urlRE finds URLs, which are copied verbatim.
var urlRE = regexp.MustCompile(`(?i)\b(?:[a-z][a-z0-9+.\-]*://|www\.)[^\s<>"'，。；！？）】」]*`)

// trigger marks the bytes at which an expression can start; everything
// else is skipped without a look.
var trigger [256]bool

func init() {
	for _, c := range []byte("0123456789$&@+=#-.~'(vV<>*") {
		trigger[c] = true
	}
	// Lead bytes of the non-ASCII runes that can start an expression:
	// £ ¥ (C2), × ÷ (C3), € − – — ’ (E2), ￥ ～ (EF).
	for _, c := range []byte{0xC2, 0xC3, 0xE2, 0xEF} {
		trigger[c] = true
	}
	sort.SliceStable(units, func(i, j int) bool { return len(units[i].sym) > len(units[j].sym) })
}

// norm holds one normalization pass. Output is built lazily: out stays nil
// until the first replacement, and source text between replacements is
// copied in slices.
type norm struct {
	s      string
	forced lang
	bare   lang // for an expression with no letters near it
	out    []byte
	tmp    []byte // the replacement being built
	done   int    // s[:done] has been written to out

	lastEnd   int  // end of the last numeric expression, -1 if none
	lastYear  bool // that expression was read as a year
	rangeYear bool // a range dash after a year: read the next number as a year
}

func run(s string, forced, bare lang) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = halfWidthDigits(s)
	i := 0
	for i < len(s) && !trigger[s[i]] {
		i++
	}
	if i == len(s) {
		return s
	}
	n := norm{s: s, forced: forced, bare: bare, lastEnd: -1}
	var skips [][]int
	if strings.Contains(s, "://") || strings.Contains(s, "www.") || strings.Contains(s, "WWW.") {
		skips = urlRE.FindAllStringIndex(s, -1)
	}
	for i < len(s) {
		if !trigger[s[i]] {
			i++
			continue
		}
		for len(skips) > 0 && skips[0][1] <= i {
			skips = skips[1:]
		}
		if len(skips) > 0 && skips[0][0] <= i {
			i = skips[0][1]
			continue
		}
		next := n.at(i)
		if next <= i {
			next = i + 1
		}
		i = next
	}
	if n.out == nil {
		return s
	}
	n.out = append(n.out, s[n.done:]...)
	return string(n.out)
}

// at handles the trigger byte at i and returns where scanning resumes.
func (n *norm) at(i int) int {
	s := n.s
	c := s[i]
	if isDigit(c) {
		return n.number(i, i, 0)
	}
	switch c {
	case '-':
		return n.dash(i, 1, true)
	case '~':
		return n.tilde(i, 1)
	case '+':
		return n.plus(i)
	case '.':
		if i+1 < len(s) && isDigit(s[i+1]) && (i == 0 || !isAlnum(s[i-1]) && s[i-1] != '.') {
			return n.number(i, i, 0)
		}
		return i + 1
	case '$':
		for _, d := range dollarPrefixes {
			if j := i - len(d.prefix); j >= n.done && s[j:i] == d.prefix && (j == 0 || !isAlnum(s[j-1])) {
				return n.currency(j, i+1, currencyCodes[d.code], 0)
			}
		}
		return n.currency(i, i+1, curUSD, 0)
	case '&', '@', '=':
		return n.symbol(i)
	case '<', '>', '*':
		return n.comparison(i)
	case '#':
		return n.hash(i)
	case 'v', 'V':
		return n.version(i)
	case '\'':
		return n.decadeQuote(i, 1)
	case '(':
		if i+1 < len(s) && isDigit(s[i+1]) {
			if p, ok := parsePhone(s, i); ok {
				return n.phoneOut(i, p)
			}
		}
		return i + 1
	}
	if c < utf8.RuneSelf {
		return i + 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	switch r {
	case '±':
		if i+size < len(s) && isDigit(s[i+size]) {
			return n.word(i, i+size, "plus or minus ", "正负") // ±2 正负二 (WeTextProcessing)
		}
	case '£':
		return n.currency(i, i+size, curGBP, 0)
	case '¥', '￥':
		return n.currency(i, i+size, curYen, 0)
	case '₩':
		return n.currency(i, i+size, curKRW, 0)
	case '€':
		return n.currency(i, i+size, curEUR, 0)
	case '−':
		return n.dash(i, size, true)
	case '–', '—':
		return n.dash(i, size, false)
	case '～':
		return n.tilde(i, size)
	case '’':
		return n.decadeQuote(i, size)
	case '≤', '≥':
		return n.comparison(i)
	case '×':
		return n.operator(i, size, "times", "乘")
	case '÷':
		return n.operator(i, size, "divided by", "除以")
	}
	return i + size
}

// put replaces s[a:b] with n.tmp. English words glued to a letter or digit
// get a separating space. Overlapping or out-of-range spans are ignored.
func (n *norm) put(a, b int) {
	s := n.s
	if a < n.done || b < a || b > len(s) {
		return
	}
	if n.out == nil {
		n.out = make([]byte, 0, len(s)+len(s)/2+32)
	}
	n.out = append(n.out, s[n.done:a]...)
	r := n.tmp
	if len(r) > 0 && isAlnum(r[0]) && len(n.out) > 0 && isAlnum(n.out[len(n.out)-1]) {
		n.out = append(n.out, ' ')
	}
	n.out = append(n.out, r...)
	if len(r) > 0 && isAlnum(r[len(r)-1]) && b < len(s) && isAlnum(s[b]) {
		n.out = append(n.out, ' ')
	}
	n.done = b
}

// emit replaces s[a:b] with n.tmp as a numeric expression, which a range
// dash may follow.
func (n *norm) emit(a, b int) int {
	n.put(a, b)
	n.lastEnd = b
	n.lastYear = false
	return b
}

// word replaces s[a:b] with en or zh.
func (n *norm) word(a, b int, en, zh string) int {
	n.tmp = n.tmp[:0]
	if n.lang(a, b) == langZH {
		n.tmp = append(n.tmp, zh...)
	} else {
		n.tmp = append(n.tmp, en...)
	}
	n.put(a, b)
	return b
}

const (
	clsNone = iota
	clsLatin
	clsHan
)

func classify(r rune) int {
	if r < utf8.RuneSelf {
		if isLetter(byte(r)) {
			return clsLatin
		}
		return clsNone
	}
	switch {
	case r >= 0x2E80 && r <= 0x9FFF, // radicals, CJK punctuation, kana, Han
		r >= 0xF900 && r <= 0xFAFF,   // compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F,   // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFFEF,   // full-width forms
		r >= 0x20000 && r <= 0x3FFFF: // Han extensions
		return clsHan
	}
	if unicode.Is(unicode.Latin, r) {
		return clsLatin
	}
	return clsNone
}

// lang decides how to read the expression s[a:b].
func (n *norm) lang(a, b int) lang {
	if n.forced != langAuto {
		return n.forced
	}
	s := n.s
	han, latin := false, false
	mark := func(r rune) {
		switch classify(r) {
		case clsHan:
			han = true
		case clsLatin:
			latin = true
		}
	}
	// The whitespace-delimited run around the expression.
	for k, c := a, 0; k > 0 && c < 32; c++ {
		r, size := utf8.DecodeLastRuneInString(s[:k])
		if unicode.IsSpace(r) {
			break
		}
		mark(r)
		k -= size
	}
	for k, c := b, 0; k < len(s) && c < 32; c++ {
		r, size := utf8.DecodeRuneInString(s[k:])
		if unicode.IsSpace(r) {
			break
		}
		mark(r)
		k += size
	}
	if han {
		return langZH
	}
	if latin {
		return langEN
	}
	// The nearest letter on either side.
	lc, ld := clsNone, 0
	for k, c := a, 0; k > 0 && c < 64; c++ {
		r, size := utf8.DecodeLastRuneInString(s[:k])
		if cl := classify(r); cl != clsNone {
			lc, ld = cl, c
			break
		}
		k -= size
	}
	rc, rd := clsNone, 0
	for k, c := b, 0; k < len(s) && c < 64; c++ {
		r, size := utf8.DecodeRuneInString(s[k:])
		if cl := classify(r); cl != clsNone {
			rc, rd = cl, c
			break
		}
		k += size
	}
	cl := clsLatin
	switch {
	case lc == clsNone && rc == clsNone:
		return n.bare
	case lc == clsNone:
		cl = rc
	case rc == clsNone, lc == rc, ld < rd:
		cl = lc
	case rd < ld:
		cl = rc
	default:
		cl = clsHan
	}
	if cl == clsHan {
		return langZH
	}
	return langEN
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool {
	c |= 0x20
	return c >= 'a' && c <= 'z'
}

func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func isHex(c byte) bool {
	return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f'
}

// atoi parses a short run of ASCII digits.
func atoi(d string) int {
	v := 0
	for i := 0; i < len(d) && i < 9; i++ {
		v = v*10 + int(d[i]-'0')
	}
	return v
}

// digitsEnd returns the end of the digit run starting at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func startsNumber(s string, j int) bool {
	return j < len(s) && (isDigit(s[j]) || s[j] == '.' && j+1 < len(s) && isDigit(s[j+1]))
}

func allZeros(d string) bool {
	for i := 0; i < len(d); i++ {
		if d[i] != '0' {
			return false
		}
	}
	return true
}

// halfWidthDigits writes full-width digits (０-９) as ASCII ones, which the
// rules read ("２０１５年" 二零一五年, WeTextProcessing
// tn/chinese/test/data/normalizer.txt); s is returned as is when it has
// none.
func halfWidthDigits(s string) string {
	const lead = "\xef\xbc" // U+FF10-FF19 are EF BC 90-99
	i := strings.Index(s, lead)
	for i >= 0 && (i+2 >= len(s) || s[i+2] < 0x90 || s[i+2] > 0x99) {
		j := strings.Index(s[i+2:], lead)
		if j < 0 {
			return s
		}
		i += 2 + j
	}
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if i+2 < len(s) && s[i] == 0xef && s[i+1] == 0xbc && s[i+2] >= 0x90 && s[i+2] <= 0x99 {
			b = append(b, '0'+s[i+2]-0x90)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}
