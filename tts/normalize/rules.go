package normalize

// Numeric expressions: parseNum reads the digits and number hands the
// expression to the rule family that reads it (numbers.go, datetime.go,
// identifiers.go, money.go).

import (
	"strings"
	"unicode/utf8"
)

// num is a parsed decimal number: integer digits (separators removed,
// possibly empty as in ".5") and fraction digits.
type num struct {
	intd, frac string
	commas     bool
	end        int
}

// digitsOnly reports a whole number written without thousands separators.
func (m num) digitsOnly() bool { return m.frac == "" && !m.commas && m.intd != "" }

func parseNum(s string, i int) num {
	var m num
	j := digitsEnd(s, i)
	m.intd = s[i:j]
	if j > i && j-i <= 3 {
		k := j
		for k+3 < len(s) && s[k] == ',' && isDigit(s[k+1]) && isDigit(s[k+2]) && isDigit(s[k+3]) &&
			(k+4 == len(s) || !isDigit(s[k+4])) {
			k += 4
		}
		if k > j {
			m.commas = true
			m.intd = strings.ReplaceAll(s[i:k], ",", "")
			j = k
		}
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		k := digitsEnd(s, j+1)
		m.frac = s[j+1 : k]
		j = k
	}
	m.end = j
	return m
}

// number reads the numeric expression whose sign (if any) is at start and
// whose digits (or leading '.') are at i. Each reading returns where it
// ends, or 0 when it does not apply; they are tried from the most to the
// least particular, so their order is part of the rules.
func (n *norm) number(start, i int, sign byte) int {
	yearRange := n.rangeYear
	n.rangeYear = false
	if sign == 0 && isDigit(n.s[i]) {
		if e := n.digitString(i); e > 0 {
			return e
		}
	}
	m := parseNum(n.s, i)
	if k := n.suffixed(start, m, sign); k > 0 {
		return k
	}
	if k := n.measure(start, m, sign); k > 0 {
		return k
	}
	if k := n.numberPair(start, m, sign); k > 0 {
		return k
	}
	return n.plain(start, m, sign, m.end, yearRange)
}

// digitString reads the expressions written as a string of digits and
// separators that are more than a number: a currency code's amount, digits
// glued to a word, hex, dates, scores, times, phone numbers and dotted
// versions or addresses.
func (n *norm) digitString(i int) int {
	s := n.s
	if c, cs := currencyCodeBefore(s, i); c != nil && cs >= n.done {
		return n.currency(cs, i, c, 0)
	}
	if i > 0 && (isLetter(s[i-1]) || s[i-1] == '_') && n.lastEnd != i {
		return n.glued(i)
	}
	if s[i] == '0' && i+2 < len(s) && s[i+1]|0x20 == 'x' && isHex(s[i+2]) {
		k := i + 2
		for k < len(s) && isAlnum(s[k]) {
			k++
		}
		return k
	}
	if e := n.dateYMD(i); e > 0 {
		return e
	}
	if e := n.dateMDY(i); e > 0 {
		return e
	}
	if e := n.zhShortDate(i); e > 0 {
		return e
	}
	if i > 0 && s[i-1] >= utf8.RuneSelf || i > 1 && s[i-1] == ' ' {
		if e := n.zhScore(i); e > 0 {
			return e
		}
	}
	if e := n.clock(i); e > 0 {
		return e
	}
	if p, ok := parsePhone(s, i); ok {
		return n.phoneOut(i, p)
	}
	if e := n.vanity(i); e > 0 {
		return e
	}
	return n.dotted(i, i, false)
}

// suffixed reads a number by what is written right after it: "%", an
// ordinal suffix, the "s" of a decade, Q or H of a quarter, a.m. or p.m.
func (n *norm) suffixed(start int, m num, sign byte) int {
	s, e := n.s, m.end
	if k := percentEnd(s, e); k > 0 {
		return n.percent(start, m, sign, k)
	}
	if sign != 0 || m.frac != "" || m.intd == "" {
		return 0
	}
	if k := ordinalSuffix(s, e); k > 0 && (ordinalMatches(m.intd, s[e:k]) || n.lang(start, k) == langZH) {
		return n.ordinal(start, m.intd, k)
	}
	if m.commas {
		return 0
	}
	if k := decadeEnd(s, e, m.intd); k > 0 {
		return n.decade(start, m.intd, k)
	}
	if e < len(s) && (s[e] == 'Q' || s[e] == 'H') {
		if k := n.quarter(start, m.intd, e); k > 0 {
			return k
		}
	}
	if len(m.intd) <= 2 {
		if h := atoi(m.intd); h >= 1 && h <= 12 {
			if ap, k := ampmAt(s, e); ap != 0 {
				return n.clockOut(start, k, h, 0, -1, ap)
			}
		}
	}
	return 0
}

// measure reads an amount of something: money by its currency code, a
// unit, a scaled unit ("5k km") and dimensions ("2x8 m2").
func (n *norm) measure(start int, m num, sign byte) int {
	s, e := n.s, m.end
	if c, k := currencyCodeAt(s, e); c != nil {
		return n.money(start, m, c, sign, "", 0, k)
	}
	if u, k := unitAt(s, e); u != nil {
		return n.unit(start, m, u, sign, k)
	}
	if k := n.scaledUnit(start, m, sign, e); k > 0 {
		return k
	}
	simple := sign == 0 && m.digitsOnly()
	if x := dimensionX(s, e); simple && x > 0 && (hasUnit(s, x) || len(m.intd) >= 3 && digitsEnd(s, x)-x >= 3) {
		// "2x8 m2" two by eight square meters / 二乘八平方米 (NeMo en
		// test_cases_range.txt, where a bare "2x8" stays "two x eight"),
		// and "1920x1080"; the second number is read on its own, with its
		// unit.
		n.tmp = n.tmp[:0]
		if n.lang(start, x) == langZH {
			n.tmp = appendZhNum(n.tmp, m.intd, zhCount)
			n.tmp = append(n.tmp, "乘"...)
		} else {
			n.tmp = appendEnNum(n.tmp, m.intd)
			n.tmp = append(n.tmp, " by"...)
		}
		return n.emit(start, x)
	}
	return 0
}

// numberPair reads two numbers as one: a fraction "3/16", a whole number
// and a fraction "2 1/2", a ratio "16:9".
func (n *norm) numberPair(start int, m num, sign byte) int {
	s, e := n.s, m.end
	if !m.digitsOnly() {
		return 0
	}
	if k := n.fraction(start, "", m.intd, sign, e); k > 0 {
		return k
	}
	if sign != 0 {
		return 0
	}
	if e+1 < len(s) && s[e] == ' ' && isDigit(s[e+1]) {
		a := digitsEnd(s, e+1)
		if k := n.fraction(start, m.intd, s[e+1:a], 0, a); k > 0 {
			return k
		}
	}
	if e < len(s) && s[e] == ':' {
		if k := n.ratio(start, m.intd, e); k > 0 {
			return k
		}
	}
	return 0
}

func appendEnSign(b []byte, sign byte) []byte {
	switch sign {
	case '-':
		return append(b, "minus "...)
	case '+':
		return append(b, "plus "...)
	}
	return b
}

// hasUnit reports a unit after the number at i.
func hasUnit(s string, i int) bool {
	u, _ := unitAt(s, parseNum(s, i).end)
	return u != nil
}

// dimensionX matches the "x" of "2x8" or "25 x 7" and returns where the
// second number starts.
func dimensionX(s string, e int) int {
	switch {
	case e+1 < len(s) && s[e] == 'x' && isDigit(s[e+1]):
		return e + 1
	case e+3 < len(s) && s[e] == ' ' && s[e+1] == 'x' && s[e+2] == ' ' && isDigit(s[e+3]):
		return e + 3
	}
	return 0
}
