package normalize

// Numeric expressions: parseNum reads the digits and number hands the
// expression to the rule family that reads it (numbers.go, datetime.go,
// identifiers.go, money.go).

import "strings"

// num is a parsed decimal number: integer digits (separators removed,
// possibly empty as in ".5") and fraction digits.
type num struct {
	intd, frac string
	commas     bool
	end        int
}

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
// whose digits (or leading '.') are at i.
func (n *norm) number(start, i int, sign byte) int {
	s := n.s
	yearRange := n.rangeYear
	n.rangeYear = false
	if sign == 0 && isDigit(s[i]) {
		if i > 0 && (isLetter(s[i-1]) || s[i-1] == '_') {
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
		if e := n.clock(i); e > 0 {
			return e
		}
		if p, ok := parsePhone(s, i); ok {
			return n.phoneOut(i, p)
		}
		if e := n.dotted(i, i, false); e > 0 {
			return e
		}
	}
	m := parseNum(s, i)
	e := m.end
	simple := sign == 0 && m.frac == "" && !m.commas && m.intd != ""
	if k := percentEnd(s, e); k > 0 {
		return n.percent(start, m, sign, k)
	}
	if sign == 0 && m.frac == "" && m.intd != "" {
		if k := ordinalEnd(s, e); k > 0 {
			return n.ordinal(start, m.intd, k)
		}
	}
	if simple {
		if k := decadeEnd(s, e, m.intd); k > 0 {
			return n.decade(start, m.intd, k)
		}
		if len(m.intd) <= 2 {
			if h := atoi(m.intd); h >= 1 && h <= 12 {
				if ap, k := ampmAt(s, e); ap != 0 {
					return n.clockOut(start, k, h, 0, 0, ap)
				}
			}
		}
	}
	if c, k := currencyCodeAt(s, e); c != nil {
		return n.money(start, m, c, sign, "", 0, k)
	}
	if u, k := unitAt(s, e); u != nil {
		return n.unit(start, m, u, sign, k)
	}
	if simple && e < len(s) {
		switch s[e] {
		case '/':
			if k := n.fraction(start, m.intd, e); k > 0 {
				return k
			}
		case ':':
			if k := n.ratio(start, m.intd, e); k > 0 {
				return k
			}
		}
	}
	return n.plain(start, m, sign, e, yearRange)
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
