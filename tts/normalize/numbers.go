package normalize

// Plain numbers and their simple forms: cardinals and decimals, digits
// glued to letters, percentages, ordinals, decades, fractions and ratios.

import "strings"

func (n *norm) plain(start int, m num, sign byte, e int, yearRange bool) int {
	s := n.s
	l := n.lang(start, e)
	simple := sign == 0 && m.frac == "" && !m.commas && m.intd != ""
	n.tmp = n.tmp[:0]
	if l == langZH {
		// In a range ("-3~5℃", "2-3个", "2025-2026年") the word after its
		// far end decides how this end reads too.
		tail := e
		if k := rangeEnd(s, e); k > 0 {
			tail = k
		}
		u, _ := unitAt(s, tail)
		n.tmp = appendZhSign(n.tmp, sign, u != nil && u.temp)
		rank := strings.HasSuffix(s[:start], "第")
		switch {
		case m.frac != "" || m.intd == "":
			fp := m.frac
			if strings.HasPrefix(s[tail:], "元") || strings.HasPrefix(s[tail:], "块") {
				fp = strings.TrimRight(fp, "0")
			}
			n.tmp = appendZhDecimal(n.tmp, m.intd, fp, zhCount)
		case simple && len(m.intd) == 4 && strings.HasPrefix(s[tail:], "年"):
			n.tmp = appendZhDigits(n.tmp, m.intd, false)
		case simple && m.intd == "2" && !rank && (liangNext(s, tail) || u != nil && u.liang):
			n.tmp = append(n.tmp, "两"...)
		case simple && (isMobile(m.intd) || cuedPhone(s, start, e)):
			n.tmp = appendZhDigits(n.tmp, m.intd, true)
		case rank:
			n.tmp = appendZhNum(n.tmp, m.intd, zhLabel)
		default:
			n.tmp = appendZhNum(n.tmp, m.intd, zhCount)
		}
		return n.emit(start, e)
	}
	if simple {
		if k := n.monthDay(start, m.intd, e); k > 0 {
			return k
		}
		if len(m.intd) == 4 {
			if ms, mo := monthBefore(s, start); mo > 0 {
				if v := atoi(m.intd); v >= 1000 && v <= 2999 {
					n.tmp = append(n.tmp, monthNames[mo]...)
					n.tmp = append(n.tmp, ' ')
					n.tmp = appendEnYear(n.tmp, v)
					n.emit(ms, e)
					n.lastYear = true
					return e
				}
			}
		}
		if k := n.dayMonth(start, m.intd, e); k > 0 {
			return k
		}
		if len(m.intd) == 4 && m.intd[0] != '0' && (yearRange || n.isYear(start, e, m.intd)) {
			n.tmp = appendEnYear(n.tmp, atoi(m.intd))
			n.emit(start, e)
			n.lastYear = true
			return e
		}
	}
	switch sign {
	case '-':
		n.tmp = append(n.tmp, "minus "...)
	case '+':
		n.tmp = append(n.tmp, "plus "...)
	}
	switch {
	case m.frac != "" || m.intd == "":
		n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
	case simple && isMobile(m.intd):
		n.tmp = appendEnDigits(n.tmp, m.intd)
	default:
		n.tmp = appendEnNum(n.tmp, m.intd)
	}
	return n.emit(start, e)
}

// glued reads a digit run right after a Latin letter ("mp3", "H2O"), with
// its decimals ("PM2.5") or dotted parts ("Python3.11.2").
func (n *norm) glued(i int) int {
	s := n.s
	if e := n.dotted(i, i, false); e > 0 {
		return e
	}
	k := digitsEnd(s, i)
	d, frac := s[i:k], ""
	if len(d) <= 4 && k+1 < len(s) && s[k] == '.' && isDigit(s[k+1]) {
		e := digitsEnd(s, k+1)
		frac, k = s[k+1:e], e
	}
	n.tmp = n.tmp[:0]
	zh := n.lang(i, k) == langZH
	switch {
	case len(d) > 4 && zh:
		n.tmp = appendZhDigits(n.tmp, d, false)
	case len(d) > 4:
		n.tmp = appendEnDigits(n.tmp, d)
	case zh:
		n.tmp = appendZhDecimal(n.tmp, d, frac, zhLabel)
	default:
		n.tmp = appendEnDecimal(n.tmp, d, frac)
	}
	return n.emit(i, k)
}

func liangNext(s string, e int) bool {
	t := s[e:]
	if strings.HasPrefix(t, "年级") {
		return false
	}
	for _, w := range liangWords {
		if strings.HasPrefix(t, w) {
			return true
		}
	}
	return false
}

// rangeEnd returns the end of the number that closes a range opened at e
// ("~5", "-5", " - 5", "到-2"), or 0 when no range follows.
func rangeEnd(s string, e int) int {
	k := e
	if k < len(s) && s[k] == ' ' {
		k++
	}
	mark := 0
	for _, r := range rangeMarks {
		if strings.HasPrefix(s[k:], r) {
			mark = len(r)
			break
		}
	}
	if mark == 0 {
		return 0
	}
	k += mark
	if k < len(s) && s[k] == ' ' {
		k++
	}
	switch {
	case strings.HasPrefix(s[k:], "-"):
		k++
	case strings.HasPrefix(s[k:], "−"):
		k += len("−")
	}
	if !startsNumber(s, k) {
		return 0
	}
	return parseNum(s, k).end
}

// isMobile reports a bare Chinese mobile number, 1[3-9] and nine digits.
func isMobile(d string) bool {
	return len(d) == 11 && d[0] == '1' && d[1] >= '3' && d[1] <= '9'
}

func percentEnd(s string, e int) int {
	k := e
	if k < len(s) && s[k] == ' ' {
		k++
	}
	switch {
	case strings.HasPrefix(s[k:], "%"):
		return k + 1
	case strings.HasPrefix(s[k:], "％"):
		return k + len("％")
	}
	return 0
}

func (n *norm) percent(start int, m num, sign byte, end int) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		n.tmp = appendZhSign(n.tmp, sign, false)
		n.tmp = append(n.tmp, "百分之"...)
		if m.intd == "100" && m.frac == "" {
			n.tmp = append(n.tmp, "百"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, m.intd, m.frac, zhCount)
		}
		return n.emit(start, end)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
	n.tmp = append(n.tmp, " percent"...)
	return n.emit(start, end)
}

func ordinalEnd(s string, e int) int {
	if e+2 > len(s) || e+2 < len(s) && isLetter(s[e+2]) {
		return 0
	}
	a, b := s[e]|0x20, s[e+1]|0x20
	if a == 's' && b == 't' || a == 'n' && b == 'd' || a == 'r' && b == 'd' || a == 't' && b == 'h' {
		return e + 2
	}
	return 0
}

func (n *norm) ordinal(start int, d string, end int) int {
	if n.lang(start, end) == langZH {
		n.tmp = n.tmp[:0]
		if !strings.HasSuffix(n.s[:start], "第") {
			n.tmp = append(n.tmp, "第"...)
		}
		n.tmp = appendZhNum(n.tmp, d, zhLabel)
		return n.emit(start, end)
	}
	if k := n.monthDay(start, d, end); k > 0 {
		return k
	}
	n.tmp = appendEnOrdinal(n.tmp[:0], d)
	return n.emit(start, end)
}

// decadeEnd matches the "s" or "'s" of "1990s" / "80s".
func decadeEnd(s string, e int, d string) int {
	if len(d) != 2 && len(d) != 4 || d[len(d)-1] != '0' || d[0] == '0' {
		return 0
	}
	k := e
	switch {
	case strings.HasPrefix(s[k:], "s"):
		k++
	case strings.HasPrefix(s[k:], "'s"):
		k += 2
	case strings.HasPrefix(s[k:], "’s"):
		k += len("’s")
	default:
		return 0
	}
	if k < len(s) && isLetter(s[k]) {
		return 0
	}
	return k
}

func (n *norm) decade(start int, d string, end int) int {
	n.tmp = n.tmp[:0]
	v := atoi(d)
	if n.lang(start, end) == langZH {
		if len(d) == 4 {
			n.tmp = appendZhDigits(n.tmp, d, false)
		} else {
			n.tmp = appendZhInt(n.tmp, uint64(v), zhLabel)
		}
		n.tmp = append(n.tmp, "年代"...)
		return n.emit(start, end)
	}
	if len(d) == 4 {
		n.tmp = appendEnYear(n.tmp, v)
	} else {
		n.tmp = appendEn99(n.tmp, v)
	}
	n.tmp = appendEnPlural(n.tmp, 0)
	return n.emit(start, end)
}

// decadeQuote reads "'80s".
func (n *norm) decadeQuote(i, size int) int {
	s := n.s
	j := i + size
	if j+3 > len(s) || !isDigit(s[j]) || s[j] == '0' || s[j+1] != '0' || s[j+2] != 's' ||
		j+3 < len(s) && isAlnum(s[j+3]) || i > 0 && isAlnum(s[i-1]) {
		return j
	}
	return n.decade(i, s[j:j+2], j+3)
}

func (n *norm) fraction(start int, a string, e int) int {
	s := n.s
	if start > 0 && s[start-1] == '/' || len(a) > 2 {
		return 0
	}
	k := digitsEnd(s, e+1)
	if k == e+1 || k-e-1 > 2 {
		return 0
	}
	if k < len(s) && (s[k] == '/' || (s[k] == '.' || s[k] == ',') && k+1 < len(s) && isDigit(s[k+1])) {
		return 0
	}
	av, bv := atoi(a), atoi(s[e+1:k])
	if av < 1 || av >= bv || bv > 10 {
		return 0
	}
	n.tmp = n.tmp[:0]
	if n.lang(start, k) == langZH {
		n.tmp = appendZhInt(n.tmp, uint64(bv), zhCount)
		n.tmp = append(n.tmp, "分之"...)
		n.tmp = appendZhInt(n.tmp, uint64(av), zhCount)
		return n.emit(start, k)
	}
	n.tmp = appendEnInt(n.tmp, uint64(av))
	n.tmp = append(n.tmp, ' ')
	switch bv {
	case 2:
		if av == 1 {
			n.tmp = append(n.tmp, "half"...)
		} else {
			n.tmp = append(n.tmp, "halves"...)
		}
	case 4:
		n.tmp = append(n.tmp, "quarter"...)
		if av > 1 {
			n.tmp = append(n.tmp, 's')
		}
	default:
		n.tmp = appendEnOrdinal(n.tmp, s[e+1:k])
		if av > 1 {
			n.tmp = append(n.tmp, 's')
		}
	}
	return n.emit(start, k)
}

func (n *norm) ratio(start int, a string, e int) int {
	s := n.s
	k := digitsEnd(s, e+1)
	if k == e+1 || k-e-1 > 6 || len(a) > 6 {
		return 0
	}
	if k+1 < len(s) && (s[k] == ':' || s[k] == '.') && isDigit(s[k+1]) {
		return 0
	}
	n.tmp = n.tmp[:0]
	if n.lang(start, k) == langZH {
		n.tmp = appendZhNum(n.tmp, a, zhCount)
		n.tmp = append(n.tmp, "比"...)
		n.tmp = appendZhNum(n.tmp, s[e+1:k], zhCount)
	} else {
		n.tmp = appendEnNum(n.tmp, a)
		n.tmp = append(n.tmp, " to "...)
		n.tmp = appendEnNum(n.tmp, s[e+1:k])
	}
	return n.emit(start, k)
}
