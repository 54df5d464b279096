package normalize

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

func (n *norm) plain(start int, m num, sign byte, e int, yearRange bool) int {
	s := n.s
	l := n.lang(start, e)
	simple := sign == 0 && m.frac == "" && !m.commas && m.intd != ""
	n.tmp = n.tmp[:0]
	if l == langZH {
		switch sign {
		case '-':
			n.tmp = append(n.tmp, "负"...)
		case '+':
			n.tmp = append(n.tmp, "正"...)
		}
		switch {
		case m.frac != "" || m.intd == "":
			fp := m.frac
			if strings.HasPrefix(s[e:], "元") || strings.HasPrefix(s[e:], "块") {
				fp = strings.TrimRight(fp, "0")
			}
			n.tmp = appendZhDecimal(n.tmp, m.intd, fp)
		case simple && len(m.intd) == 4 && strings.HasPrefix(s[e:], "年"):
			n.tmp = appendZhDigits(n.tmp, m.intd, false)
		case simple && m.intd == "2" && liangNext(s, e) && !strings.HasSuffix(s[:start], "第"):
			n.tmp = append(n.tmp, "两"...)
		case simple && isMobile(m.intd):
			n.tmp = appendZhDigits(n.tmp, m.intd, true)
		default:
			n.tmp = appendZhNum(n.tmp, m.intd)
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

// glued reads a digit run right after a Latin letter ("mp3", "H2O").
func (n *norm) glued(i int) int {
	k := digitsEnd(n.s, i)
	d := n.s[i:k]
	n.tmp = n.tmp[:0]
	if n.lang(i, k) == langZH {
		if len(d) <= 4 {
			n.tmp = appendZhNum(n.tmp, d)
		} else {
			n.tmp = appendZhDigits(n.tmp, d, false)
		}
	} else {
		if len(d) <= 4 {
			n.tmp = appendEnNum(n.tmp, d)
		} else {
			n.tmp = appendEnDigits(n.tmp, d)
		}
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

// isMobile reports a bare Chinese mobile number, 1[3-9] and nine digits.
func isMobile(d string) bool {
	return len(d) == 11 && d[0] == '1' && d[1] >= '3' && d[1] <= '9'
}

// isYear applies the English year rule (see the package documentation).
func (n *norm) isYear(start, e int, d string) bool {
	s := n.s
	v := atoi(d)
	if eraAfter(s, e) {
		return v >= 1000
	}
	if v < 1100 || v > 2099 {
		return false
	}
	if n.yearCue(start) || rangeToYear(s, e) {
		return true
	}
	// Standing alone.
	j := start
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j > 0 && !strings.ContainsRune("\n([", rune(s[j-1])) {
		return false
	}
	k := e
	for k < len(s) && s[k] == ' ' {
		k++
	}
	return k == len(s) || strings.ContainsRune("\n)].,;!?", rune(s[k]))
}

func (n *norm) yearCue(start int) bool {
	s := n.s
	j := start
	if strings.HasSuffix(s[:j], "©") || strings.HasSuffix(s[:j], "© ") {
		return true
	}
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j == start {
		return false
	}
	k := j
	for k > 0 && isLetter(s[k-1]) && j-k < 10 {
		k--
	}
	if k > 0 && isLetter(s[k-1]) {
		return false
	}
	w := s[k:j]
	for _, c := range yearCues {
		if strings.EqualFold(w, c) {
			return true
		}
	}
	if n.lastYear && start-n.lastEnd <= 16 {
		for _, c := range yearLinks {
			if strings.EqualFold(w, c) {
				return true
			}
		}
	}
	return false
}

func eraAfter(s string, e int) bool {
	k := e
	if k < len(s) && s[k] == ' ' {
		k++
	}
	for _, era := range eras {
		if strings.HasPrefix(s[k:], era) {
			end := k + len(era)
			if end == len(s) || !isLetter(s[end]) {
				return true
			}
		}
	}
	return false
}

// rangeToYear reports "-2005" or "–2005" after a number.
func rangeToYear(s string, e int) bool {
	k := e
	switch {
	case strings.HasPrefix(s[k:], "-"):
		k++
	case strings.HasPrefix(s[k:], "–"):
		k += len("–")
	default:
		return false
	}
	end := digitsEnd(s, k)
	if end-k != 4 || end < len(s) && isLetter(s[end]) {
		return false
	}
	v := atoi(s[k:end])
	return v >= 1100 && v <= 2099
}

// monthBefore finds a month name (capitalized, full or abbreviated) and a
// space right before start.
func monthBefore(s string, start int) (int, int) {
	j := start
	if j == 0 || s[j-1] != ' ' {
		return 0, 0
	}
	j--
	if j > 0 && s[j-1] == '.' {
		j--
	}
	k := j
	for k > 0 && isLetter(s[k-1]) {
		k--
		if j-k > 9 {
			return 0, 0
		}
	}
	return k, monthIndex(s[k:j])
}

// yearAfter matches ", 2026" or " 2026" after a day of the month.
func yearAfter(s string, e int) (int, int) {
	k := e
	switch {
	case strings.HasPrefix(s[k:], ", "):
		k += 2
	case strings.HasPrefix(s[k:], " "):
		k++
	default:
		return 0, 0
	}
	end := digitsEnd(s, k)
	if end-k != 4 || end < len(s) && (isLetter(s[end]) || s[end] == ':') {
		return 0, 0
	}
	v := atoi(s[k:end])
	if v < 1000 || v > 2999 {
		return 0, 0
	}
	return v, end
}

// monthDay reads "November 30" (and "Nov. 30th, 2026") in English.
func (n *norm) monthDay(start int, d string, e int) int {
	if len(d) > 2 {
		return 0
	}
	v := atoi(d)
	if v < 1 || v > 31 {
		return 0
	}
	ms, mo := monthBefore(n.s, start)
	if mo == 0 {
		return 0
	}
	n.tmp = n.tmp[:0]
	n.tmp = append(n.tmp, monthNames[mo]...)
	n.tmp = append(n.tmp, ' ')
	n.tmp = appendEnOrdinal(n.tmp, d)
	if y, k := yearAfter(n.s, e); k > 0 {
		n.tmp = append(n.tmp, ", "...)
		n.tmp = appendEnYear(n.tmp, y)
		e = k
	}
	return n.emit(ms, e)
}

// dayMonth reads "30 November 2026" in English.
func (n *norm) dayMonth(start int, d string, e int) int {
	s := n.s
	if len(d) > 2 || e+1 >= len(s) || s[e] != ' ' {
		return 0
	}
	v := atoi(d)
	if v < 1 || v > 31 {
		return 0
	}
	k := e + 1
	for k < len(s) && isLetter(s[k]) && k-e <= 10 {
		k++
	}
	mo := monthIndex(s[e+1 : k])
	if mo == 0 || k < len(s) && isLetter(s[k]) {
		return 0
	}
	if k < len(s) && s[k] == '.' && len(s[e+1:k]) < len(monthNames[mo]) {
		k++
	}
	n.tmp = n.tmp[:0]
	if j := start - len("the "); j < 0 || !strings.EqualFold(s[j:start], "the ") {
		n.tmp = append(n.tmp, "the "...)
	}
	n.tmp = appendEnOrdinal(n.tmp, d)
	n.tmp = append(n.tmp, " of "...)
	n.tmp = append(n.tmp, monthNames[mo]...)
	if y, yk := yearAfter(s, k); yk > 0 {
		n.tmp = append(n.tmp, ", "...)
		n.tmp = appendEnYear(n.tmp, y)
		k = yk
	}
	return n.emit(start, k)
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
		switch sign {
		case '-':
			n.tmp = append(n.tmp, "负"...)
		case '+':
			n.tmp = append(n.tmp, "正"...)
		}
		n.tmp = append(n.tmp, "百分之"...)
		if m.intd == "100" && m.frac == "" {
			n.tmp = append(n.tmp, "百"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, m.intd, m.frac)
		}
		return n.emit(start, end)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
	n.tmp = append(n.tmp, " percent"...)
	return n.emit(start, end)
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
		n.tmp = appendZhNum(n.tmp, d)
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
			n.tmp = appendZhInt(n.tmp, uint64(v), true)
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
		n.tmp = appendZhInt(n.tmp, uint64(bv), true)
		n.tmp = append(n.tmp, "分之"...)
		n.tmp = appendZhInt(n.tmp, uint64(av), true)
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
		n.tmp = appendZhNum(n.tmp, a)
		n.tmp = append(n.tmp, "比"...)
		n.tmp = appendZhNum(n.tmp, s[e+1:k])
	} else {
		n.tmp = appendEnNum(n.tmp, a)
		n.tmp = append(n.tmp, " to "...)
		n.tmp = appendEnNum(n.tmp, s[e+1:k])
	}
	return n.emit(start, k)
}

// ampmAt matches an am/pm marker at e, glued or after one space. A
// sentence-final "p.m." leaves its last period in place.
func ampmAt(s string, e int) (byte, int) {
	j := e
	if j < len(s) && s[j] == ' ' {
		j++
	}
	for _, t := range ampmTokens {
		if !strings.HasPrefix(s[j:], t) {
			continue
		}
		end := j + len(t)
		if end < len(s) && isAlnum(s[end]) {
			continue
		}
		if t[len(t)-1] == '.' && (end == len(s) || s[end] == '\n' ||
			s[end] == ' ' && end+1 < len(s) && isUpper(s[end+1])) {
			end--
		}
		return t[0] | 0x20, end
	}
	return 0, e
}

// clock reads "10:30", "9:05:07", "10:30 pm".
func (n *norm) clock(i int) int {
	s := n.s
	j := digitsEnd(s, i)
	if j-i > 2 || j+2 >= len(s) || s[j] != ':' || !isDigit(s[j+1]) || !isDigit(s[j+2]) ||
		j+3 < len(s) && isDigit(s[j+3]) {
		return 0
	}
	h, mm, ss := atoi(s[i:j]), atoi(s[j+1:j+3]), 0
	k := j + 3
	if k+2 < len(s) && s[k] == ':' && isDigit(s[k+1]) && isDigit(s[k+2]) && (k+3 == len(s) || !isDigit(s[k+3])) {
		ss = atoi(s[k+1 : k+3])
		k += 3
	}
	if k+1 < len(s) && (s[k] == ':' || s[k] == '.') && isDigit(s[k+1]) {
		return 0
	}
	if h > 24 || mm > 59 || ss > 59 || h == 24 && mm+ss > 0 {
		return 0
	}
	ap, end := ampmAt(s, k)
	if ap != 0 && (h == 0 || h > 12) {
		ap, end = 0, k
	}
	return n.clockOut(i, end, h, mm, ss, ap)
}

func (n *norm) clockOut(start, end, h, mm, ss int, ap byte) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		if ap != 0 && !hasPeriodWord(n.s[:start]) {
			n.tmp = append(n.tmp, zhPeriod(ap, h)...)
		}
		if h == 2 {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhInt(n.tmp, uint64(h), true)
		}
		n.tmp = append(n.tmp, "点"...)
		if mm > 0 || ss > 0 {
			if mm < 10 {
				n.tmp = append(n.tmp, "零"...)
			}
			if mm > 0 {
				n.tmp = appendZhInt(n.tmp, uint64(mm), true)
			}
			n.tmp = append(n.tmp, "分"...)
		}
		if ss > 0 {
			n.tmp = appendZhInt(n.tmp, uint64(ss), true)
			n.tmp = append(n.tmp, "秒"...)
		}
		return n.emit(start, end)
	}
	switch {
	case mm > 0:
		n.tmp = appendEnInt(n.tmp, uint64(h))
		n.tmp = append(n.tmp, ' ')
		if mm < 10 {
			n.tmp = append(n.tmp, "oh "...)
		}
		n.tmp = appendEn99(n.tmp, mm)
	case ap != 0:
		n.tmp = appendEnInt(n.tmp, uint64(h))
	case h == 0:
		n.tmp = append(n.tmp, "midnight"...)
	case h <= 12:
		n.tmp = appendEnInt(n.tmp, uint64(h))
		n.tmp = append(n.tmp, " o'clock"...)
	default:
		n.tmp = appendEnInt(n.tmp, uint64(h))
		n.tmp = append(n.tmp, " hundred"...)
	}
	if ss > 0 {
		n.tmp = append(n.tmp, " and "...)
		n.tmp = appendEn99(n.tmp, ss)
		if ss == 1 {
			n.tmp = append(n.tmp, " second"...)
		} else {
			n.tmp = append(n.tmp, " seconds"...)
		}
	}
	switch ap {
	case 'a':
		n.tmp = append(n.tmp, " a m"...)
	case 'p':
		n.tmp = append(n.tmp, " p m"...)
	}
	return n.emit(start, end)
}

// hasPeriodWord reports a Chinese time-of-day word right before a time.
func hasPeriodWord(before string) bool {
	for _, w := range [...]string{"上午", "下午", "晚上", "中午", "凌晨", "早上", "傍晚", "夜里"} {
		if strings.HasSuffix(before, w) {
			return true
		}
	}
	return false
}

func zhPeriod(ap byte, h int) string {
	if ap == 'a' {
		if h == 12 || h < 5 {
			return "凌晨"
		}
		return "上午"
	}
	switch {
	case h == 12:
		return "中午"
	case h >= 6:
		return "晚上"
	}
	return "下午"
}

// dateYMD reads "2026-11-30", "2026/11/30", "2026.11.30".
func (n *norm) dateYMD(i int) int {
	s := n.s
	if i+8 > len(s) || digitsEnd(s, i) != i+4 {
		return 0
	}
	sep := s[i+4]
	if sep != '-' && sep != '/' && sep != '.' {
		return 0
	}
	j := i + 5
	mEnd := digitsEnd(s, j)
	if mEnd-j < 1 || mEnd-j > 2 || mEnd+1 >= len(s) || s[mEnd] != sep {
		return 0
	}
	dEnd := digitsEnd(s, mEnd+1)
	if dEnd-mEnd-1 < 1 || dEnd-mEnd-1 > 2 {
		return 0
	}
	if dEnd+1 < len(s) && (s[dEnd] == sep || s[dEnd] == '.') && isDigit(s[dEnd+1]) {
		return 0
	}
	y, mo, d := atoi(s[i:i+4]), atoi(s[j:mEnd]), atoi(s[mEnd+1:dEnd])
	if !validDate(y, mo, d) {
		return 0
	}
	return n.dateOut(i, dEnd, y, mo, d)
}

// dateMDY reads "11/30/2026" (month first unless the first number is over
// 12) and "11-30-2026".
func (n *norm) dateMDY(i int) int {
	s := n.s
	aEnd := digitsEnd(s, i)
	if aEnd-i > 2 || aEnd+1 >= len(s) {
		return 0
	}
	sep := s[aEnd]
	if sep != '/' && sep != '-' {
		return 0
	}
	bEnd := digitsEnd(s, aEnd+1)
	if bEnd-aEnd-1 < 1 || bEnd-aEnd-1 > 2 || bEnd+1 >= len(s) || s[bEnd] != sep {
		return 0
	}
	yEnd := digitsEnd(s, bEnd+1)
	if yEnd-bEnd-1 != 4 || yEnd+1 < len(s) && (s[yEnd] == sep || s[yEnd] == '.') && isDigit(s[yEnd+1]) {
		return 0
	}
	a, b, y := atoi(s[i:aEnd]), atoi(s[aEnd+1:bEnd]), atoi(s[bEnd+1:yEnd])
	mo, d := a, b
	if a > 12 {
		mo, d = b, a
	}
	if !validDate(y, mo, d) {
		return 0
	}
	return n.dateOut(i, yEnd, y, mo, d)
}

func (n *norm) dateOut(start, end, y, mo, d int) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		var yd [4]byte
		for k, v := 3, y; k >= 0; k-- {
			yd[k] = byte('0' + v%10)
			v /= 10
		}
		n.tmp = appendZhDigits(n.tmp, string(yd[:]), false)
		n.tmp = append(n.tmp, "年"...)
		n.tmp = appendZhInt(n.tmp, uint64(mo), true)
		n.tmp = append(n.tmp, "月"...)
		n.tmp = appendZhInt(n.tmp, uint64(d), true)
		n.tmp = append(n.tmp, "日"...)
		return n.emit(start, end)
	}
	n.tmp = append(n.tmp, monthNames[mo]...)
	n.tmp = append(n.tmp, ' ')
	n.tmp = appendEnOrdinalInt(n.tmp, uint64(d))
	n.tmp = append(n.tmp, ", "...)
	n.tmp = appendEnYear(n.tmp, y)
	return n.emit(start, end)
}

type phone struct {
	plus bool
	n    int
	g    [8][2]int
	end  int
}

const (
	sepDash = 1 << iota
	sepSpace
	sepDot
)

func sepBit(c byte) uint8 {
	switch c {
	case '-':
		return sepDash
	case ' ':
		return sepSpace
	}
	return sepDot
}

// parsePhone matches a phone number at i (see the package documentation).
func parsePhone(s string, i int) (phone, bool) {
	var p phone
	j := i
	if j < len(s) && s[j] == '+' {
		p.plus = true
		j++
	}
	var seps uint8
	paren := false
	for {
		if p.n == len(p.g) {
			return p, false
		}
		if j < len(s) && s[j] == '(' {
			k := digitsEnd(s, j+1)
			if k == j+1 || k-j-1 > 4 || k >= len(s) || s[k] != ')' {
				return p, false
			}
			p.g[p.n] = [2]int{j + 1, k}
			p.n++
			paren = true
			j = k + 1
			if j < len(s) && isDigit(s[j]) {
				continue
			}
			if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
				seps |= sepBit(s[j])
				j++
				continue
			}
			break
		}
		k := digitsEnd(s, j)
		if k == j {
			return p, false
		}
		p.g[p.n] = [2]int{j, k}
		p.n++
		j = k
		if j+1 < len(s) && (s[j] == '-' || s[j] == ' ' || s[j] == '.') && (isDigit(s[j+1]) || s[j+1] == '(') {
			seps |= sepBit(s[j])
			j++
			continue
		}
		break
	}
	p.end = j
	if p.n < 2 || j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
		return p, false
	}
	total := 0
	var lens [8]int
	for k := 0; k < p.n; k++ {
		lens[k] = p.g[k][1] - p.g[k][0]
		total += lens[k]
		maxLen, minLen := 8, 2
		if p.plus {
			maxLen = 11
		}
		if k == 0 {
			minLen = 1
			if p.plus {
				maxLen = 3
			}
		}
		if lens[k] < minLen || lens[k] > maxLen {
			return p, false
		}
	}
	if total < 7 || total > 15 {
		return p, false
	}
	if seps&sepDot != 0 && (seps != sepDot || p.n != 3 || lens[0] != 3 || lens[1] != 3 || lens[2] != 4) {
		return p, false
	}
	if p.plus || paren {
		return p, true
	}
	if p.n == 2 {
		return p, seps == sepDash && lens[0] >= 3 && lens[0] <= 4 && lens[1] >= 4 && !(lens[0] == 4 && lens[1] == 4)
	}
	if lens[0] == 1 && s[p.g[0][1]] != '-' {
		return p, false
	}
	if seps == sepSpace {
		if lens[0] > 3 {
			return p, false
		}
		thousands := true
		for k := 1; k < p.n; k++ {
			thousands = thousands && lens[k] == 3
		}
		if thousands {
			return p, false
		}
	}
	return p, true
}

func (n *norm) phoneOut(start int, p phone) int {
	zh := n.lang(start, p.end) == langZH
	n.tmp = n.tmp[:0]
	if p.plus {
		if zh {
			n.tmp = append(n.tmp, "加"...)
		} else {
			n.tmp = append(n.tmp, "plus "...)
		}
	}
	for k := 0; k < p.n; k++ {
		d := n.s[p.g[k][0]:p.g[k][1]]
		if zh {
			if k > 0 {
				n.tmp = append(n.tmp, "，"...)
			}
			n.tmp = appendZhDigits(n.tmp, d, true)
		} else {
			if k > 0 {
				n.tmp = append(n.tmp, ", "...)
			}
			n.tmp = appendEnDigits(n.tmp, d)
		}
	}
	return n.emit(start, p.end)
}

// dotted reads numbers with two or more dots (versions, IP addresses) and,
// with prefixed, "v1.2.3" whose 'v' is at start.
func (n *norm) dotted(start, i int, prefixed bool) int {
	s := n.s
	var comps [16][2]int
	c := 0
	j := i
	for {
		k := digitsEnd(s, j)
		if k == j || c == len(comps) {
			return 0
		}
		comps[c] = [2]int{j, k}
		c++
		j = k
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			continue
		}
		break
	}
	if !prefixed && c < 3 || prefixed && s[start] == 'V' && c < 2 {
		return 0
	}
	if !prefixed && j < len(s) && (isLetter(s[j]) || s[j] == '_') {
		return 0
	}
	ip := !prefixed && c == 4
	for k := 0; ip && k < c; k++ {
		d := s[comps[k][0]:comps[k][1]]
		ip = len(d) <= 3 && atoi(d) <= 255
	}
	zh := n.lang(start, j) == langZH
	n.tmp = n.tmp[:0]
	if prefixed {
		before := s[:start]
		switch {
		case zh && !strings.HasSuffix(before, "版本"):
			n.tmp = append(n.tmp, "版本"...)
		case !zh && !(len(before) >= 8 && strings.EqualFold(before[len(before)-8:], "version ")):
			n.tmp = append(n.tmp, "version "...)
		}
	}
	for k := 0; k < c; k++ {
		d := s[comps[k][0]:comps[k][1]]
		switch {
		case zh:
			if k > 0 {
				n.tmp = append(n.tmp, "点"...)
			}
			if ip {
				n.tmp = appendZhDigits(n.tmp, d, false)
			} else {
				n.tmp = appendZhNum(n.tmp, d)
			}
		case ip:
			if k > 0 {
				n.tmp = append(n.tmp, " dot "...)
			}
			n.tmp = appendEnDigits(n.tmp, d)
		default:
			if k > 0 {
				n.tmp = append(n.tmp, " point "...)
			}
			n.tmp = appendEnNum(n.tmp, d)
		}
	}
	return n.emit(start, j)
}

func (n *norm) version(i int) int {
	s := n.s
	j := i + 1
	if j >= len(s) || !isDigit(s[j]) {
		return j
	}
	if i > 0 && (isAlnum(s[i-1]) || strings.IndexByte("_.-", s[i-1]) >= 0) {
		return j
	}
	if e := n.dotted(i, j, true); e > 0 {
		return e
	}
	return j
}

// currency reads an amount after a currency symbol; i is past the symbol,
// start at the symbol or at a sign before it.
func (n *norm) currency(start, i int, c *currency, sign byte) int {
	s := n.s
	if !startsNumber(s, i) {
		return i
	}
	m := parseNum(s, i)
	mag, exp, k := magnitudeAt(s, m.end)
	if code, ck := currencyCodeAt(s, k); code != nil {
		c, k = code, ck // "$100 USD"
	}
	return n.money(start, m, c, sign, mag, exp, k)
}

func (n *norm) money(start int, m num, c *currency, sign byte, mag string, exp, end int) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		if sign == '-' {
			n.tmp = append(n.tmp, "负"...)
		}
		ip, fp := m.intd, m.frac
		if exp > 0 {
			ip, fp = shiftPoint(ip, fp, exp)
		}
		fp = strings.TrimRight(fp, "0")
		if ip == "2" && fp == "" {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, ip, fp)
		}
		n.tmp = append(n.tmp, c.zh...)
		return n.emit(start, end)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	if mag != "" || c.minorOne == "" || len(m.frac) > 2 {
		n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
		if mag != "" {
			n.tmp = append(n.tmp, ' ')
			n.tmp = append(n.tmp, mag...)
		}
		n.tmp = append(n.tmp, ' ')
		if mag == "" && m.intd == "1" && m.frac == "" {
			n.tmp = append(n.tmp, c.one...)
		} else {
			n.tmp = append(n.tmp, c.many...)
		}
		return n.emit(start, end)
	}
	cents := atoi(m.frac)
	if len(m.frac) == 1 {
		cents *= 10
	}
	ip := m.intd
	if ip == "" {
		ip = "0"
	}
	if allZeros(ip) && cents > 0 {
		n.tmp = appendEn99(n.tmp, cents)
	} else {
		n.tmp = appendEnNum(n.tmp, ip)
		n.tmp = append(n.tmp, ' ')
		if ip == "1" {
			n.tmp = append(n.tmp, c.one...)
		} else {
			n.tmp = append(n.tmp, c.many...)
		}
		if cents == 0 {
			return n.emit(start, end)
		}
		n.tmp = append(n.tmp, " and "...)
		n.tmp = appendEn99(n.tmp, cents)
	}
	n.tmp = append(n.tmp, ' ')
	if cents == 1 {
		n.tmp = append(n.tmp, c.minorOne...)
	} else {
		n.tmp = append(n.tmp, c.minorMany...)
	}
	return n.emit(start, end)
}

// shiftPoint multiplies ip.fp by 10^exp.
func shiftPoint(ip, fp string, exp int) (string, string) {
	d := ip + fp
	point := len(ip) + exp
	if point >= len(d) {
		ip, fp = d+strings.Repeat("0", point-len(d)), ""
	} else {
		ip, fp = d[:point], d[point:]
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	return ip, fp
}

func (n *norm) unit(start int, m num, u *unit, sign byte, end int) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		switch {
		case sign == '-' && u.temp:
			n.tmp = append(n.tmp, "零下"...)
		case sign == '-':
			n.tmp = append(n.tmp, "负"...)
		case sign == '+' && u.temp:
			n.tmp = append(n.tmp, "零上"...)
		case sign == '+':
			n.tmp = append(n.tmp, "正"...)
		}
		if u.liang && m.intd == "2" && m.frac == "" {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, m.intd, m.frac)
		}
		n.tmp = append(n.tmp, u.zh...)
		return n.emit(start, end)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
	n.tmp = append(n.tmp, ' ')
	if m.intd == "1" && m.frac == "" {
		n.tmp = append(n.tmp, u.one...)
	} else {
		n.tmp = append(n.tmp, u.many...)
	}
	return n.emit(start, end)
}

// dash handles '-' (and '−', '–', '—'): a range or subtraction between
// numbers, else a sign when sign is set.
func (n *norm) dash(i, size int, sign bool) int {
	s := n.s
	j := i + size
	if j >= len(s) {
		return j
	}
	if n.lastEnd == i && isDigit(s[j]) {
		return n.between(i, j)
	}
	if i > 0 && s[i-1] == ' ' && n.lastEnd == i-1 && s[j] == ' ' && j+1 < len(s) && isDigit(s[j+1]) {
		return n.between(i, j)
	}
	if !sign || !n.signOK(i) {
		return j
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
	if j >= len(s) || !isDigit(s[j]) {
		return j
	}
	if n.lastEnd == i {
		return n.between(i, j)
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
	n.tmp = appendZhNum(n.tmp[:0], s[j:k])
	n.tmp = append(n.tmp, "号"...)
	return n.emit(i, k)
}
