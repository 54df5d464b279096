package normalize

// Dashes, tildes, signs, operators and the symbols & @ = #.

import (
	"strings"
	"unicode/utf8"
)

// dash handles '-' (and '−', '–', '—'): a range or subtraction between
// numbers, else a sign when sign is set.
func (n *norm) dash(i, size int, sign bool) int {
	s := n.s
	j := i + size
	if j >= len(s) {
		return j
	}
	if n.lastEnd == i && (isDigit(s[j]) || currencyBefore(s, j)) {
		return n.between(i, j) // "3-5", "$250-$300"
	}
	if (i > 0 && s[i-1] == ' ' && n.lastEnd == i-1 || n.lastEnd == i) && s[j] == ' ' && j+1 < len(s) && isDigit(s[j+1]) {
		return n.between(i, j) // "3 - 5", "1- 2 = 5"
	}
	if !sign || !n.signOK(i) {
		return j
	}
	if strings.HasPrefix(s[j:], "百分之") {
		return n.word(i, j, "minus", "负") // "-百分之1" 负百分之一 (NeMo zh)
	}
	if startsNumber(s, j) {
		return n.number(i, j, '-')
	}
	if c, k := currencyAt(s, j); c != nil && k < len(s) && isDigit(s[k]) {
		return n.currency(i, k, c, '-')
	}
	return j
}

// between reads the dash at s[i:j] between two numbers: "to", or "minus"
// when an '=' follows the right operand.
func (n *norm) between(i, j int) int {
	s := n.s
	k := j
	for k < len(s) && s[k] == ' ' {
		k++
	}
	for k < len(s) && (isDigit(s[k]) || s[k] == '.' || s[k] == ',') {
		k++
	}
	for k < len(s) && s[k] == ' ' {
		k++
	}
	sub := k < len(s) && s[k] == '='
	year := n.lastYear
	if sub {
		n.word(i, j, "minus", "减")
	} else {
		n.word(i, j, "to", "到")
	}
	n.rangeYear = !sub && year
	return j
}

func (n *norm) tilde(i, size int) int {
	s := n.s
	j := i + size
	spaced := i > 0 && s[i-1] == ' ' && n.lastEnd == i-1 && j < len(s) && s[j] == ' '
	if (n.lastEnd == i || spaced) && rangeEnd(s, i) > 0 {
		return n.between(i, j)
	}
	if j >= len(s) || !isDigit(s[j]) {
		return j
	}
	if n.signOK(i) {
		zh := "约"
		if strings.HasSuffix(s[:i], "约") {
			zh = "" // 约~5 / 大约~5
		}
		return n.word(i, j, "about", zh)
	}
	return j
}

// signOK reports whether a sign at i may start a number: it does not
// follow a Latin letter, a digit or a closing bracket.
func (n *norm) signOK(i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(n.s[:i])
	if r < utf8.RuneSelf {
		c := byte(r)
		return !isAlnum(c) && strings.IndexByte(")]}_-+./", c) < 0
	}
	return classify(r) != clsLatin
}

const (
	opNone = iota
	opAlnum
	opDigit
	opHan
)

// operand classifies the operand next to an operator: before i when dir
// is -1, from i when dir is +1, skipping one space.
func operand(s string, i, dir int) int {
	var r rune
	if dir < 0 {
		if i > 0 && s[i-1] == ' ' {
			i--
		}
		if i == 0 {
			return opNone
		}
		r, _ = utf8.DecodeLastRuneInString(s[:i])
		if r == ')' {
			return opAlnum
		}
	} else {
		if i < len(s) && s[i] == ' ' {
			i++
		}
		if i >= len(s) {
			return opNone
		}
		r, _ = utf8.DecodeRuneInString(s[i:])
		if r == '(' {
			return opAlnum
		}
	}
	switch {
	case r >= '0' && r <= '9':
		return opDigit
	case r < utf8.RuneSelf && isLetter(byte(r)):
		return opAlnum
	case classify(r) == clsHan:
		return opHan
	}
	return opNone
}

func (n *norm) plus(i int) int {
	s := n.s
	j := i + 1
	if j < len(s) && s[j] == '+' {
		for j < len(s) && s[j] == '+' {
			j++
		}
		return j
	}
	if i > 0 && s[i-1] == '+' {
		return j
	}
	if j < len(s) && isDigit(s[j]) && n.signOK(i) {
		if p, ok := parsePhone(s, i); ok {
			return n.phoneOut(i, p)
		}
	}
	spacedL := i > 0 && s[i-1] == ' '
	spacedR := j < len(s) && s[j] == ' '
	if spacedL == spacedR {
		l, r := operand(s, i, -1), operand(s, j, +1)
		if (l == opAlnum || l == opDigit) && r != opNone || l == opHan && (r == opHan || r == opAlnum) {
			return n.operator(i, 1, "plus", "加")
		}
	}
	if startsNumber(s, j) && n.signOK(i) {
		return n.number(i, j, '+')
	}
	return j
}

func (n *norm) operator(i, size int, en, zh string) int {
	return n.word(i, i+size, en, zh)
}

func isOpChar(c byte) bool { return strings.IndexByte("=<>!:+-*/~^|&%@?", c) >= 0 }

// symbol reads '&', '@' and '='.
func (n *norm) symbol(i int) int {
	s := n.s
	c := s[i]
	j := i + 1
	if i > 0 && isOpChar(s[i-1]) || j < len(s) && isOpChar(s[j]) && !(c == '=' && s[j] == '-') {
		for j < len(s) && isOpChar(s[j]) {
			j++
		}
		return j
	}
	if j == len(s) || i == 0 && c != '@' {
		return j
	}
	switch c {
	case '&':
		// An HTML entity such as &amp; or &#39;.
		k := j
		for k < len(s) && k-j < 10 && (isAlnum(s[k]) || s[k] == '#') {
			k++
		}
		if k > j && k < len(s) && s[k] == ';' {
			return k + 1
		}
		return n.word(i, j, "and", "和")
	case '@':
		return n.word(i, j, "at", "艾特")
	}
	return n.word(i, j, "equals", "等于")
}

// hash reads "#3".
func (n *norm) hash(i int) int {
	s := n.s
	j := i + 1
	if j >= len(s) || !isDigit(s[j]) || i > 0 && (isAlnum(s[i-1]) || s[i-1] == '&') {
		return j
	}
	k := digitsEnd(s, j)
	if n.lang(i, k) != langZH {
		n.tmp = append(n.tmp[:0], "number"...)
		n.put(i, j)
		return j
	}
	if k+1 < len(s) && (s[k] == '.' || s[k] == ',') && isDigit(s[k+1]) {
		return j
	}
	n.tmp = appendZhNum(n.tmp[:0], s[j:k], zhLabel)
	n.tmp = append(n.tmp, "号"...)
	return n.emit(i, k)
}

// currencyBefore reports a currency symbol and a digit at j.
func currencyBefore(s string, j int) bool {
	c, k := currencyAt(s, j)
	return c != nil && k < len(s) && isDigit(s[k])
}

// comparison reads "<", ">", "<=", ">=", "≤", "≥" and "*" between two
// numbers (spaced on both sides or on neither): "2 ≤ 4" two is less than
// or equal to four / 二小于等于四 (WeTextProcessing
// tn/chinese/test/data/math.txt), "2*8" two times eight (NeMo en
// test_cases_normalize_with_audio.txt). Anywhere else they are left alone.
func (n *norm) comparison(i int) int {
	s := n.s
	r, size := utf8.DecodeRuneInString(s[i:])
	if size == 1 && i+1 < len(s) && s[i+1] == '=' && (r == '<' || r == '>') {
		size = 2
	}
	j := i + size
	spacedL, spacedR := i > 0 && s[i-1] == ' ', j < len(s) && s[j] == ' '
	if spacedL != spacedR || operand(s, i, -1) != opDigit || operand(s, j, +1) != opDigit ||
		size == 1 && j < len(s) && isOpChar(s[j]) {
		return j
	}
	var en, zh string
	switch {
	case r == '*':
		en, zh = "times", "乘"
	case r == '≤' || r == '<' && size == 2:
		en, zh = "is less than or equal to", "小于等于"
	case r == '≥' || r == '>' && size == 2:
		en, zh = "is greater than or equal to", "大于等于"
	case r == '<':
		en, zh = "is less than", "小于"
	default:
		en, zh = "is greater than", "大于"
	}
	return n.word(i, j, en, zh)
}
