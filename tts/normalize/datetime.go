package normalize

// Years, dates and clock times.

import "strings"

// isYear applies the English year rule (see the package documentation).
func (n *norm) isYear(start, e int, d string) bool {
	s := n.s
	v := atoi(d)
	if eraAfter(s, e) {
		return v >= 1
	}
	if v < 1100 || v > 2999 {
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
	if u, _ := unitAt(s, end); u != nil {
		return false // "1980-1970 kg" is a range of weights (NeMo)
	}
	if end-k == 2 && (end == len(s) || !isAlnum(s[end])) {
		return true // "1960-80" nineteen sixty to eighty (NeMo)
	}
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
	if j == 0 || s[j-1] != ' ' && s[j-1] != '-' {
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
	if w := s[k:j]; w == "may" || w == "mar" || k > 0 && isDigit(s[k-1]) {
		return 0, 0 // the verbs
	}
	return k, monthIndex(s[k:j])
}

// yearAfter matches ", 2026" or " 2026" after a day of the month.
func yearAfter(s string, e int) (int, int) {
	k := e
	switch {
	case strings.HasPrefix(s[k:], ", "):
		k += 2
	case strings.HasPrefix(s[k:], " "), strings.HasPrefix(s[k:], "-"):
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

// clock reads "10:30", "9:05:07", "10:30 pm", "22：58" and, before am or
// pm, "2.30 a.m." (WeTextProcessing tn/english/test/data/time.txt).
func (n *norm) clock(i int) int {
	s := n.s
	j := digitsEnd(s, i)
	colon := 1
	switch {
	case strings.HasPrefix(s[j:], "："):
		colon = len("：")
	case j < len(s) && (s[j] == ':' || s[j] == '.'):
	default:
		return 0
	}
	m := j + colon
	if j-i > 2 || m+1 >= len(s) || !isDigit(s[m]) || !isDigit(s[m+1]) || m+2 < len(s) && isDigit(s[m+2]) {
		return 0
	}
	h, mm, ss := atoi(s[i:j]), atoi(s[m:m+2]), -1
	k := m + 2
	if s[j] != '.' && k+2 < len(s) && s[k] == s[j] && isDigit(s[k+1]) && isDigit(s[k+2]) && (k+3 == len(s) || !isDigit(s[k+3])) {
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
	if s[j] == '.' && ap == 0 {
		return 0 // "2.30" is a decimal
	}
	return n.clockOut(i, end, h, mm, ss, ap)
}

// clockOut reads a time; ss is -1 when no seconds are written. A time
// with seconds reads every part, as both suites do: "14:10:30" fourteen
// hours ten minutes and thirty seconds, "00:00:00" 零点零分零秒.
func (n *norm) clockOut(start, end, h, mm, ss int, ap byte) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		if ap != 0 && !hasPeriodWord(n.s[:start]) {
			n.tmp = append(n.tmp, zhPeriod(ap, h)...)
		}
		if h == 2 {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhInt(n.tmp, uint64(h), zhLabel)
		}
		n.tmp = append(n.tmp, "点"...)
		if mm > 0 || ss >= 0 {
			if mm < 10 && (mm > 0 || ss > 0) {
				n.tmp = append(n.tmp, "零"...)
			}
			if mm > 0 || ss == 0 {
				n.tmp = appendZhInt(n.tmp, uint64(mm), zhLabel)
			}
			n.tmp = append(n.tmp, "分"...)
		}
		if ss >= 0 {
			n.tmp = appendZhInt(n.tmp, uint64(ss), zhLabel)
			n.tmp = append(n.tmp, "秒"...)
		}
		return n.emit(start, end)
	}
	switch {
	case ss >= 0:
		n.tmp = appendEnCount(n.tmp, h, "hour")
		n.tmp = append(n.tmp, ' ')
		n.tmp = appendEnCount(n.tmp, mm, "minute")
		n.tmp = append(n.tmp, " and "...)
		n.tmp = appendEnCount(n.tmp, ss, "second")
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
	default:
		// "23:00" twenty-three o'clock, as both suites read it.
		n.tmp = appendEnInt(n.tmp, uint64(h))
		n.tmp = append(n.tmp, " o'clock"...)
	}
	switch ap {
	case 'a':
		n.tmp = append(n.tmp, " a m"...)
	case 'p':
		n.tmp = append(n.tmp, " p m"...)
	}
	return n.emit(start, end)
}

// appendEnCount writes "one hour", "ten minutes".
func appendEnCount(b []byte, v int, what string) []byte {
	b = appendEn99(b, v)
	b = append(b, ' ')
	b = append(b, what...)
	if v != 1 {
		b = append(b, 's')
	}
	return b
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

// zhPeriod reads am as 上午 and pm as 下午, as WeTextProcessing does
// (tn/chinese/data/time/noon.tsv), except at twelve, where those would
// name the wrong half of the day: 12 pm is 中午 and 12 am 凌晨.
func zhPeriod(ap byte, h int) string {
	switch {
	case h == 12 && ap == 'a':
		return "凌晨"
	case h == 12:
		return "中午"
	case ap == 'a':
		return "上午"
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
	return n.dateOut(i, dEnd, s[i:i+4], mo, d, false)
}

// dateMDY reads "11/30/2026" (month first unless the first number is over
// 12, then day first), "11-30-2026", "15.01.2020" and, in English, a
// two-digit year ("11/17/05"). Chinese reads "12/2/3" year first.
func (n *norm) dateMDY(i int) int {
	s := n.s
	aEnd := digitsEnd(s, i)
	if aEnd-i > 2 || aEnd+1 >= len(s) {
		return 0
	}
	sep := s[aEnd]
	if sep != '/' && sep != '-' && sep != '.' {
		return 0
	}
	bEnd := digitsEnd(s, aEnd+1)
	if bEnd-aEnd-1 < 1 || bEnd-aEnd-1 > 2 || bEnd+1 >= len(s) || s[bEnd] != sep {
		return 0
	}
	yEnd := digitsEnd(s, bEnd+1)
	yLen := yEnd - bEnd - 1
	if yLen != 4 && yLen != 2 && (yLen != 1 || sep == '-') ||
		yEnd+1 < len(s) && (s[yEnd] == sep || s[yEnd] == '.' || s[yEnd] == ':') && isDigit(s[yEnd+1]) ||
		yEnd < len(s) && isAlnum(s[yEnd]) {
		return 0
	}
	a, b, y := atoi(s[i:aEnd]), atoi(s[aEnd+1:bEnd]), atoi(s[bEnd+1:yEnd])
	if yLen != 4 {
		if aEnd-i != 2 || n.lang(i, yEnd) != langZH {
			if yLen != 2 || sep == '.' || n.lang(i, yEnd) == langZH {
				return 0
			}
			if !validDate(2000, a, b) {
				return 0
			}
			return n.dateOut(i, yEnd, s[bEnd+1:yEnd], a, b, false)
		}
		// Chinese reads a two-digit year first: "12/2/3" 一二年二月三日
		// (NeMo zh test_cases_date.txt).
		if !validDate(2000, b, y) {
			return 0
		}
		return n.dateOut(i, yEnd, s[i:aEnd], b, y, false)
	}
	mo, d := a, b
	if a > 12 {
		mo, d = b, a
	}
	if !validDate(y, mo, d) {
		return 0
	}
	return n.dateOut(i, yEnd, s[bEnd+1:yEnd], mo, d, a > 12)
}

// dateOut reads a date; yd holds the year's digits. A date written day
// first is read day first ("the fifteenth of January"), as NeMo does
// (en test_cases_date.txt).
func (n *norm) dateOut(start, end int, yd string, mo, d int, dayFirst bool) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		n.tmp = appendZhDigits(n.tmp, yd, false)
		n.tmp = append(n.tmp, "年"...)
		n.tmp = appendZhInt(n.tmp, uint64(mo), zhLabel)
		n.tmp = append(n.tmp, "月"...)
		n.tmp = appendZhInt(n.tmp, uint64(d), zhLabel)
		n.tmp = append(n.tmp, "日"...)
		return n.emit(start, end)
	}
	if dayFirst {
		n.tmp = append(n.tmp, "the "...)
		n.tmp = appendEnOrdinalInt(n.tmp, uint64(d))
		n.tmp = append(n.tmp, " of "...)
		n.tmp = append(n.tmp, monthNames[mo]...)
	} else {
		n.tmp = append(n.tmp, monthNames[mo]...)
		n.tmp = append(n.tmp, ' ')
		n.tmp = appendEnOrdinalInt(n.tmp, uint64(d))
	}
	n.tmp = append(n.tmp, ", "...)
	if len(yd) == 2 {
		// "11/17/05": the year as written, November seventeenth, zero five.
		if yd[0] == '0' {
			n.tmp = append(n.tmp, "zero "...)
		}
		n.tmp = appendEnNum(n.tmp, strings.TrimPrefix(yd, "0"))
	} else {
		n.tmp = appendEnYear(n.tmp, atoi(yd))
	}
	return n.emit(start, end)
}

// zhShortDate reads, in Chinese, the dates WeTextProcessing reads
// (tn/chinese/test/data/date.txt) that carry no day or no year: "2008-08"
// and "08/2008" 二零零八年八月, "08.08" 八月八日 (two-digit month and day,
// one of them zero-padded, so that "12-25" stays a range); and NeMo's
// "2019·2·10" (zh test_cases_date.txt).
func (n *norm) zhShortDate(i int) int {
	s := n.s
	aEnd := digitsEnd(s, i)
	sep, sepLen := byte(0), 1
	switch {
	case aEnd < len(s) && (s[aEnd] == '-' || s[aEnd] == '/' || s[aEnd] == '.'):
		sep = s[aEnd]
	case strings.HasPrefix(s[aEnd:], "·"):
		sep, sepLen = '.', len("·")
	default:
		return 0
	}
	b := aEnd + sepLen
	bEnd := digitsEnd(s, b)
	if bEnd == b {
		return 0
	}
	if sepLen > 1 && strings.HasPrefix(s[bEnd:], "·") {
		cEnd := digitsEnd(s, bEnd+sepLen)
		if aEnd-i != 4 || cEnd-bEnd-sepLen < 1 || cEnd-bEnd-sepLen > 2 || cEnd < len(s) && isDigit(s[cEnd]) {
			return 0
		}
		y, mo, d := atoi(s[i:aEnd]), atoi(s[b:bEnd]), atoi(s[bEnd+sepLen:cEnd])
		if !validDate(y, mo, d) || n.lang(i, cEnd) != langZH {
			return 0
		}
		return n.dateOut(i, cEnd, s[i:aEnd], mo, d, false)
	}
	if bEnd < len(s) && (isAlnum(s[bEnd]) || s[bEnd] == sep || s[bEnd] == '.') {
		return 0
	}
	a, bd := s[i:aEnd], s[b:bEnd]
	var year, month, day string
	switch {
	case len(a) == 4 && len(bd) == 2:
		year, month = a, bd
	case len(a) == 2 && len(bd) == 4:
		month, year = a, bd
	case len(a) == 2 && len(bd) == 2 && (a[0] == '0' || bd[0] == '0'):
		month, day = a, bd
	default:
		return 0
	}
	mo := atoi(month)
	if mo < 1 || mo > 12 || year != "" && (year[0] < '1' || year[0] > '2') ||
		day != "" && !validDate(2000, mo, atoi(day)) || n.lang(i, bEnd) != langZH {
		return 0
	}
	n.tmp = n.tmp[:0]
	if year != "" {
		n.tmp = appendZhDigits(n.tmp, year, false)
		n.tmp = append(n.tmp, "年"...)
	}
	n.tmp = appendZhInt(n.tmp, uint64(mo), zhLabel)
	n.tmp = append(n.tmp, "月"...)
	if day != "" {
		n.tmp = appendZhInt(n.tmp, uint64(atoi(day)), zhLabel)
		n.tmp = append(n.tmp, "日"...)
	}
	return n.emit(i, bEnd)
}
