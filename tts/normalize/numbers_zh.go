package normalize

// Numbers in Chinese text: plain numbers, read by the word that follows
// them, and the scores of matches.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// zhPlain reads a number in Chinese: the word after it (or after the far
// end of a range it opens) decides between a count, a label, a year's
// digits, 两 and the like.
func (n *norm) zhPlain(start int, m num, sign byte, e int) int {
	s := n.s
	simple := sign == 0 && m.digitsOnly()
	// In a range ("-3~5℃", "2-3个", "2025-2026年") the word after its
	// far end decides how this end reads too.
	tail := e
	if k := rangeEnd(s, e); k > 0 {
		tail = k
	}
	if pre, k := zhEraAfter(s, e); simple && k > 0 {
		// "2934ad" 公元二九三四年 (NeMo zh test_cases_date.txt).
		n.tmp = append(n.tmp, pre...)
		n.tmp = appendZhDigits(n.tmp, m.intd, false)
		n.tmp = append(n.tmp, "年"...)
		return n.emit(start, k)
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
	case simple && strings.HasPrefix(s[tail:], "年") && (len(m.intd) == 4 || zhEraBefore(s[:start])):
		n.tmp = appendZhDigits(n.tmp, m.intd, false)
	case simple && len(m.intd) == 2 && generation(s[tail:]):
		n.tmp = appendZhDigits(n.tmp, m.intd, false) // "90后" 九零后 (WeTextProcessing)
	case simple && len(m.intd) == 2 && m.intd[0] == '0' && zhDayOrMonth(s[tail:]):
		n.tmp = appendZhInt(n.tmp, uint64(m.intd[1]-'0'), zhLabel) // "08月" 八月
	case simple && m.intd == "2" && !rank && (liangNext(s, tail) || u != nil && u.liang):
		n.tmp = append(n.tmp, "两"...)
	case simple && e < len(s) && (s[e] == 'w' || s[e] == 'W') && wanAfter(s, e+1):
		// "300w张" 三百万张: w is 万 in Chinese writing (WeTextProcessing
		// tn/chinese/test/data/normalizer.txt).
		n.tmp = appendZhNum(n.tmp, m.intd, zhCount)
		n.tmp = append(n.tmp, "万"...)
		return n.emit(start, e+1)
	case simple && (isMobile(m.intd) || cuedPhone(s, start, e)):
		n.tmp = appendZhDigits(n.tmp, m.intd, true)
	case rank:
		n.tmp = appendZhNum(n.tmp, m.intd, zhLabel)
	default:
		n.tmp = appendZhNum(n.tmp, m.intd, zhCount)
	}
	return n.emit(start, e)
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

// zhEraBefore reports 公元, 公元前 or 纪元 before a year: its digits are
// read one by one whatever their count ("公元前202年" 公元前二零二年).
func zhEraBefore(before string) bool {
	return strings.HasSuffix(before, "公元") || strings.HasSuffix(before, "公元前") ||
		strings.HasSuffix(before, "纪元")
}

// zhEraAfter matches "ad", "a.d.", "bc", "b.c." (any case, glued or after
// a space) after a year, and gives the Chinese era word to put before it.
func zhEraAfter(s string, e int) (string, int) {
	k := e
	if k < len(s) && s[k] == ' ' {
		k++
	}
	for _, era := range [...]struct{ w, zh string }{{"a.d.", "公元"}, {"b.c.", "公元前"}, {"ad", "公元"}, {"bc", "公元前"}} {
		end := k + len(era.w)
		if end <= len(s) && strings.EqualFold(s[k:end], era.w) && (end == len(s) || !isLetter(s[end])) {
			return era.zh, end
		}
	}
	return "", 0
}

// zhDayOrMonth reports 月, 日 or 号 at the start of t.
func zhDayOrMonth(t string) bool {
	return strings.HasPrefix(t, "月") || strings.HasPrefix(t, "日") || strings.HasPrefix(t, "号")
}

// zhScore reads a score after a team's name or a word about a match,
// "中国1-2" 中国一比二, "拉齐奥 2/2" 拉齐奥二比二, as WeTextProcessing's
// sport rule does (tn/chinese/rules/sport.py: a team, then two numbers
// joined by "-", "/" or ":"). Its team lists are data this package does not
// copy; scoreCues is a short list of its own.
func (n *norm) zhScore(i int) int {
	s := n.s
	aEnd := digitsEnd(s, i)
	if aEnd-i > 3 || aEnd+1 >= len(s) || strings.IndexByte("-/:", s[aEnd]) < 0 {
		return 0
	}
	bEnd := digitsEnd(s, aEnd+1)
	if bEnd == aEnd+1 || bEnd-aEnd-1 > 3 || bEnd < len(s) && (isAlnum(s[bEnd]) || strings.IndexByte("-/:.", s[bEnd]) >= 0) {
		return 0
	}
	if r, _ := utf8.DecodeRuneInString(s[bEnd:]); unicode.Is(unicode.Han, r) {
		return 0 // "比赛3-5天" is a range of days
	}
	before := strings.TrimSuffix(s[:i], " ")
	cued := false
	for _, w := range scoreCues {
		if strings.HasSuffix(before, w) {
			cued = true
			break
		}
	}
	if !cued || n.lang(i, bEnd) != langZH {
		return 0
	}
	n.tmp = appendZhNum(n.tmp[:0], s[i:aEnd], zhLabel)
	n.tmp = append(n.tmp, "比"...)
	n.tmp = appendZhNum(n.tmp, s[aEnd+1:bEnd], zhLabel)
	return n.emit(i, bEnd)
}

// generation reports "后" naming the people born in a decade ("90后",
// "00后"), not "后面", "后来" and the like.
func generation(t string) bool {
	if !strings.HasPrefix(t, "后") {
		return false
	}
	t = t[len("后"):]
	for _, w := range [...]string{"面", "来", "天", "年", "者", "果", "悔"} {
		if strings.HasPrefix(t, w) {
			return false
		}
	}
	return true
}

// wanAfter reports what may follow the w of "300w": the end, or a Han
// character.
func wanAfter(s string, j int) bool {
	if j == len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return unicode.Is(unicode.Han, r)
}
