package normalize

// Plain numbers and their simple forms: cardinals and decimals, digits
// glued to letters, percentages, ordinals, decades, fractions and ratios.

import (
	"strings"
)

// plain reads a number that no other rule reads: a cardinal or a decimal,
// or a year, a date's day or a string of digits where the words around it
// say so.
func (n *norm) plain(start int, m num, sign byte, e int, yearRange bool) int {
	l := n.lang(start, e)
	n.tmp = n.tmp[:0]
	if l == langZH {
		return n.zhPlain(start, m, sign, e)
	}
	if sign == 0 && m.digitsOnly() {
		if k := n.enByContext(start, m.intd, e, yearRange); k > 0 {
			return k
		}
	}
	return n.enPlain(start, m, sign, e)
}

// enByContext reads a whole number d that the words around it make part of
// a date, a house number or a year.
func (n *norm) enByContext(start int, d string, e int, yearRange bool) int {
	s := n.s
	if k := n.monthDay(start, d, e); k > 0 {
		return k
	}
	if len(d) == 4 {
		if ms, mo := monthBefore(s, start); mo > 0 {
			if v := atoi(d); v >= 1000 && v <= 2999 {
				n.tmp = append(n.tmp, monthNames[mo]...)
				n.tmp = append(n.tmp, ' ')
				n.tmp = appendEnYear(n.tmp, v)
				n.emit(ms, e)
				n.lastYear = true
				return e
			}
		}
	}
	if k := n.dayMonth(start, d, e); k > 0 {
		return k
	}
	if k := n.address(start, d, e); k > 0 {
		return k
	}
	if (len(d) == 4 || len(d) == 3 && eraAfter(s, e)) && d[0] != '0' && (yearRange || n.isYear(start, e, d)) {
		n.tmp = appendEnYear(n.tmp, atoi(d))
		n.emit(start, e)
		n.lastYear = true
		return e
	}
	return 0
}

// enPlain reads a number in English as a decimal, a cardinal or, where it
// is a phone's or a card's, digit by digit.
func (n *norm) enPlain(start int, m num, sign byte, e int) int {
	s := n.s
	simple := sign == 0 && m.digitsOnly()
	if k := numeroBefore(s, start); k >= n.done {
		// "Exhibit No. 162" number one hundred sixty-two (NeMo en
		// test_cases_normalize_with_audio.txt).
		n.tmp = append(n.tmp[:0], "number"...)
		n.put(k, k+len("No."))
		n.tmp = n.tmp[:0]
	}
	n.tmp = appendEnSign(n.tmp, sign)
	switch {
	case m.frac != "" || m.intd == "":
		n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
	case simple && (isMobile(m.intd) || len(m.intd) >= 3 && digitsCue(s[:start])):
		n.tmp = appendEnDigits(n.tmp, m.intd)
	case m.commas && len(m.intd) <= 3*len(enScales):
		// Written in groups, a long number is a cardinal: "124,444,...,553"
		// one hundred twenty-four quintillion ... (NeMo en cardinal tests).
		n.tmp = appendEnGroups(n.tmp, m.intd)
	default:
		n.tmp = appendEnNum(n.tmp, m.intd)
	}
	return n.emitPer(start, e)
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

// ordinalSuffix matches "st", "nd", "rd" or "th" (any case) at e.
func ordinalSuffix(s string, e int) int {
	if e+2 > len(s) || e+2 < len(s) && isLetter(s[e+2]) {
		return 0
	}
	a, b := s[e]|0x20, s[e+1]|0x20
	if a == 's' && b == 't' || a == 'n' && b == 'd' || a == 'r' && b == 'd' || a == 't' && b == 'h' {
		return e + 2
	}
	return 0
}

// ordinalMatches reports whether suffix is the one English writes after d:
// "1th" or "4rd" is read as written, the number and then the letters, as
// NeMo does (en test_cases_ordinal.txt).
func ordinalMatches(d, suffix string) bool {
	want := "th"
	if tens := len(d) >= 2 && d[len(d)-2] == '1'; !tens {
		switch d[len(d)-1] {
		case '1':
			want = "st"
		case '2':
			want = "nd"
		case '3':
			want = "rd"
		}
	}
	return strings.EqualFold(suffix, want)
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
	if k := n.dayMonth(start, d, end); k > 0 {
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
	case strings.HasPrefix(s[k:], " s") && len(d) == 4:
		k += 2
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

// fractionAt matches the denominator of a fraction a/b (or "a / b") whose
// slash is at e: the end of b, past an ordinal suffix written after it
// ("1/4th"), and b's digits. Dates and paths ("1/2/3") are not fractions.
func fractionAt(s string, e int) (int, string) {
	j := e
	if strings.HasPrefix(s[j:], " / ") {
		j += 3
	} else if j < len(s) && s[j] == '/' {
		j++
	} else {
		return 0, ""
	}
	k := digitsEnd(s, j)
	if k == j || k-j > 6 || s[j] == '0' {
		return 0, ""
	}
	if k < len(s) && (s[k] == '/' || (s[k] == '.' || s[k] == ',' || s[k] == ':') && k+1 < len(s) && isDigit(s[k+1])) {
		return 0, ""
	}
	b := s[j:k]
	if o := ordinalSuffix(s, k); o > 0 {
		k = o
	}
	return k, b
}

// fraction reads a/b: "3/16" three sixteenths / 十六分之三, "2 1/2" two and
// a half / 二又二分之一 when whole is set, as WeTextProcessing
// (tn/english/rules/fraction.py, tn/chinese/rules/fraction.py) and NeMo
// (en/taggers/fraction.py) read them.
func (n *norm) fraction(start int, whole, a string, sign byte, e int) int {
	s := n.s
	if start > 0 && s[start-1] == '/' || len(a) > 6 || len(a) > 1 && a[0] == '0' {
		return 0
	}
	k, b := fractionAt(s, e)
	if k == 0 {
		return 0
	}
	switch {
	case whole != "":
	case a == "24" && b == "7":
		return n.word(start, k, "twenty-four seven", "二十四乘七")
	case a == "50" && b == "50":
		return n.word(start, k, "fifty-fifty", "五五开")
	}
	u, uk := unitAt(s, k)
	n.tmp = n.tmp[:0]
	if n.lang(start, k) == langZH {
		n.tmp = appendZhSign(n.tmp, sign, false)
		if whole != "" {
			n.tmp = appendZhNum(n.tmp, whole, zhCount)
			n.tmp = append(n.tmp, "又"...)
		}
		n.tmp = appendZhNum(n.tmp, b, zhLabel)
		n.tmp = append(n.tmp, "分之"...)
		n.tmp = appendZhNum(n.tmp, a, zhLabel)
		if u != nil {
			n.tmp = append(n.tmp, u.zh...)
			k = uk
		}
		return n.emit(start, k)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	n.tmp = appendEnFraction(n.tmp, whole, a, b)
	if u != nil {
		n.tmp = append(n.tmp, ' ')
		n.tmp = append(n.tmp, u.many...)
		k = uk
	}
	return n.emit(start, k)
}

func appendEnFraction(buf []byte, whole, a, b string) []byte {
	av, bv := atoi(a), atoi(b)
	if whole == "" && av == bv && bv > 1 {
		// "10/10" ten out of ten, a score, not ten tenths.
		buf = appendEnNum(buf, a)
		buf = append(buf, " out of "...)
		return appendEnNum(buf, b)
	}
	if whole != "" {
		buf = appendEnNum(buf, whole)
		buf = append(buf, " and "...)
		if av == 1 && bv == 2 {
			return append(buf, "a half"...)
		}
	}
	buf = appendEnNum(buf, a)
	buf = append(buf, ' ')
	switch bv {
	case 1:
		return append(buf, "over one"...)
	case 2:
		if av == 1 {
			return append(buf, "half"...)
		}
		return append(buf, "halves"...)
	case 4:
		buf = append(buf, "quarter"...)
	default:
		buf = appendEnOrdinal(buf, b)
	}
	if av != 1 {
		buf = append(buf, 's')
	}
	return buf
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

// quarter reads "3Q22" the third quarter of twenty-two and "1H23" the
// first half of twenty-three (WeTextProcessing tn/english/test/data/date.txt).
func (n *norm) quarter(start int, d string, e int) int {
	s := n.s
	if len(d) != 1 || e+3 > len(s) || !isDigit(s[e+1]) || !isDigit(s[e+2]) || e+3 < len(s) && isAlnum(s[e+3]) {
		return 0
	}
	part, most := "quarter", byte('4')
	if s[e] == 'H' {
		part, most = "half", '2'
	} else if s[e] != 'Q' {
		return 0
	}
	if d[0] < '1' || d[0] > most || n.lang(start, e+3) == langZH {
		return 0
	}
	n.tmp = append(n.tmp[:0], "the "...)
	n.tmp = appendEnOrdinal(n.tmp, d)
	n.tmp = append(n.tmp, ' ')
	n.tmp = append(n.tmp, part...)
	n.tmp = append(n.tmp, " of "...)
	n.tmp = appendEnNum(n.tmp, s[e+1:e+3])
	return n.emit(start, e+3)
}

// numeroBefore finds "No. " or "no. " right before start, or -1.
func numeroBefore(s string, start int) int {
	k := start - len("No. ")
	if k < 0 || s[k+1:start] != "o. " || s[k] != 'N' && s[k] != 'n' || k > 0 && isLetter(s[k-1]) {
		return -1
	}
	return k
}

// digitsCue reports words after which a number is a string of digits, a
// card's or an account's last digits: "ending in 8876" eight eight seven
// six (NeMo en test_cases_electronic.txt).
func digitsCue(before string) bool {
	for _, w := range [...]string{"ending in ", "ends in ", "ending with ", "ends with "} {
		if len(before) >= len(w) && strings.EqualFold(before[len(before)-len(w):], w) {
			return true
		}
	}
	return false
}
