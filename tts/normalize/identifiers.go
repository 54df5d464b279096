package normalize

// Digit strings read as identifiers: phone numbers, IP addresses and
// version numbers.

import "strings"

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
	p, seps, paren, ok := scanPhone(s, i)
	if !ok {
		return p, false
	}
	lens, ok := p.groupLens(seps)
	if !ok {
		return p, false
	}
	if p.plus || paren {
		return p, true
	}
	return p, plainPhone(s, p, lens, seps)
}

// scanPhone reads the digit groups of a phone number at i, the area code
// perhaps in parentheses, and the separators between them.
func scanPhone(s string, i int) (p phone, seps uint8, paren, ok bool) {
	j := i
	if j < len(s) && s[j] == '+' {
		p.plus = true
		j++
	}
	for {
		if p.n == len(p.g) {
			return p, 0, false, false
		}
		if j < len(s) && s[j] == '(' {
			k := digitsEnd(s, j+1)
			if k == j+1 || k-j-1 > 4 || k >= len(s) || s[k] != ')' {
				return p, 0, false, false
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
			return p, 0, false, false
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
	if p.n < 2 || j < len(s) && (isAlnum(s[j]) || s[j] == '_') || s[j-1] == ')' {
		return p, 0, false, false // "1988 (1988)" is a year and its echo, not (area) code
	}
	return p, seps, paren, true
}

// groupLens returns the lengths of p's groups, if each group's length and
// their total are a phone number's and dots separate only 3-3-4.
func (p *phone) groupLens(seps uint8) (lens [8]int, ok bool) {
	total := 0
	for k := 0; k < p.n; k++ {
		lens[k] = p.g[k][1] - p.g[k][0]
		total += lens[k]
		maxLen, minLen := 8, 2
		if p.plus {
			maxLen = 11
		}
		if k == 0 || k >= 3 && k == p.n-1 && seps == sepDash {
			// A last group of one ("123-123-5678-1", an extension) as
			// NeMo reads it (en test_cases_telephone.txt).
			minLen = 1
		}
		if k == 0 {
			if p.plus {
				maxLen = 3
			}
		}
		if lens[k] < minLen || lens[k] > maxLen {
			return lens, false
		}
	}
	if total < 7 || total > 15 {
		return lens, false
	}
	if seps&sepDot != 0 && (seps != sepDot || p.n != 3 || lens[0] != 3 || lens[1] != 3 || lens[2] != 4) {
		return lens, false
	}
	return lens, true
}

// plainPhone reports whether groups with no country code and no
// parentheses are a phone number's rather than a number's or a range's:
// "555-1234" is, "1234-5678" and "123 456 789" (thousands) are not.
func plainPhone(s string, p phone, lens [8]int, seps uint8) bool {
	if p.n == 2 {
		return seps == sepDash && lens[0] >= 3 && lens[0] <= 4 && lens[1] >= 4 && !(lens[0] == 4 && lens[1] == 4)
	}
	if lens[0] == 1 && s[p.g[0][1]] != '-' {
		return false
	}
	if seps == sepSpace {
		if lens[0] > 3 {
			return false
		}
		thousands := true
		for k := 1; k < p.n; k++ {
			thousands = thousands && lens[k] == 3
		}
		if thousands {
			return false
		}
	}
	return true
}

// cuedPhone reports a number s[start:e] that a word such as 拨打 or 电话是
// introduces and no measure word follows, so that short numbers such as
// 110 and 12345 are read as numbers to dial.
func cuedPhone(s string, start, e int) bool {
	if e-start < 3 || liangNext(s, e) {
		return false
	}
	before := s[:start]
	for _, sep := range [...]string{"是", "为", "：", ":", " "} {
		if strings.HasSuffix(before, sep) {
			before = before[:len(before)-len(sep)]
			break
		}
	}
	for _, c := range phoneCues {
		if strings.HasSuffix(before, c) {
			return true
		}
	}
	return false
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
		ip = len(d) <= 3 // "987.987.0.40" reads as an address too (NeMo)
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
				n.tmp = appendZhNum(n.tmp, d, zhLabel)
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

// vanity reads a toll-free number spelled with letters, "1-800-GO-U-HAUL"
// one, eight hundred, GO U HAUL, as both suites do (NeMo and
// WeTextProcessing en telephone tests): the letters are left for the
// synthesizer, the digit groups read digit by digit.
func (n *norm) vanity(i int) int {
	s := n.s
	if !strings.HasPrefix(s[i:], "1-8") || i+6 > len(s) || !isDigit(s[i+3]) || !isDigit(s[i+4]) || s[i+5] != '-' {
		return 0
	}
	k, letters := i+6, false
	for k < len(s) && (isUpper(s[k]) || isDigit(s[k]) || s[k] == '-' && k+1 < len(s) && isAlnum(s[k+1])) {
		letters = letters || isUpper(s[k])
		k++
	}
	if !letters || k < len(s) && isLetter(s[k]) || n.lang(i, k) == langZH {
		return 0
	}
	n.tmp = append(n.tmp[:0], "one, "...)
	n.tmp = appendEnNum(n.tmp, s[i+2:i+5])
	for j := i + 6; j < k; {
		e := j
		for e < k && s[e] != '-' {
			e++
		}
		n.tmp = append(n.tmp, ", "...)
		for k := j; k < e; k++ {
			if k > j && (isDigit(s[k]) || isDigit(s[k-1])) {
				n.tmp = append(n.tmp, ' ')
			}
			if isDigit(s[k]) {
				n.tmp = append(n.tmp, enSmall[s[k]-'0']...)
			} else {
				n.tmp = append(n.tmp, s[k])
			}
		}
		j = e + 1
	}
	return n.emit(i, k)
}

// streetSuffixes are the abbreviations a street's name ends in, with what
// they stand for.
var streetSuffixes = map[string]string{
	"St": "Street", "Ave": "Avenue", "Rd": "Road", "Blvd": "Boulevard", "Expy": "Expressway",
	"Ln": "Lane", "Dr": "Drive", "Ct": "Court", "Hwy": "Highway", "Pkwy": "Parkway",
	"Street": "", "Avenue": "", "Road": "", "Boulevard": "", "Lane": "", "Drive": "",
}

// address reads a house number before a street's name, "1428 Elm St."
// fourteen twenty-eight Elm Street, as NeMo does (en
// test_cases_measure.txt): the number in pairs like a year, the street's
// abbreviated suffix spelled out. Only this one abbreviation, in this one
// place, is expanded (see doc.go, "Out of scope").
func (n *norm) address(start int, d string, e int) int {
	s := n.s
	if len(d) < 3 || len(d) > 4 || d[0] == '0' || n.lang(start, e) == langZH {
		return 0
	}
	k := e
	for words := 0; words < 4; words++ {
		if k+2 >= len(s) || s[k] != ' ' || !isUpper(s[k+1]) {
			return 0
		}
		w := k + 1
		k = w + 1
		for k < len(s) && isLetter(s[k]) {
			k++
		}
		if k < len(s) && s[k] != ' ' && s[k] != '.' && s[k] != ',' {
			return 0
		}
		full, ok := streetSuffixes[s[w:k]]
		if !ok || words == 0 {
			continue
		}
		n.tmp = appendEnYear(n.tmp[:0], atoi(d))
		n.emit(start, e)
		if full != "" {
			n.tmp = append(n.tmp[:0], full...)
			n.put(w, k)
		}
		return k
	}
	return 0
}
