package normalize

// Amounts of money and quantities with units.

import "strings"

// currency reads an amount after a currency symbol; i is past the symbol,
// start at the symbol or at a sign before it.
func (n *norm) currency(start, i int, c *currency, sign byte) int {
	s := n.s
	if !startsNumber(s, i) {
		return i
	}
	m := parseNum(s, i)
	for _, w := range [...]string{"万", "亿"} {
		if k := m.end + len(w); strings.HasPrefix(s[m.end:], w) && n.lang(start, k) == langZH {
			return n.money(start, m, c, sign, w, 0, k) // "$1.5万" 一点五万美元
		}
	}
	mag, exp, k := magnitudeAt(s, m.end)
	if code, ck := currencyCodeAt(s, k); code != nil {
		c, k = code, ck // "$100 USD"
	}
	return n.money(start, m, c, sign, mag, exp, k)
}

func (n *norm) money(start int, m num, c *currency, sign byte, mag string, exp, end int) int {
	n.tmp = n.tmp[:0]
	if n.lang(start, end) == langZH {
		n.tmp = appendZhSign(n.tmp, sign, false)
		ip, fp := m.intd, m.frac
		if exp > 0 {
			ip, fp = shiftPoint(ip, fp, exp)
		}
		fp = strings.TrimRight(fp, "0")
		if ip == "2" && fp == "" {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, ip, fp, zhCount)
		}
		if exp == 0 {
			n.tmp = append(n.tmp, mag...) // 万 or 亿
		}
		n.tmp = append(n.tmp, c.zh...)
		return n.emit(start, end)
	}
	n.tmp = appendEnSign(n.tmp, sign)
	if len(m.frac) > 2 {
		// "$20.500" twenty dollars fifty cents, "$1.2320" one point two
		// three two dollars (NeMo and WeTextProcessing en money tests).
		m.frac = strings.TrimRight(m.frac, "0")
	}
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
		return n.emitPer(start, end)
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
			return n.emitPer(start, end)
		}
		// No "and" between dollars and cents, as NeMo reads money
		// (en/verbalizers/money.py; en test_cases_money.txt).
		n.tmp = append(n.tmp, ' ')
		n.tmp = appendEn99(n.tmp, cents)
	}
	n.tmp = append(n.tmp, ' ')
	if cents == 1 {
		n.tmp = append(n.tmp, c.minorOne...)
	} else {
		n.tmp = append(n.tmp, c.minorMany...)
	}
	return n.emitPer(start, end)
}

// currencyCodeBefore matches a currency code written before an amount
// ("CNY1.25", "USD 100") that starts at i.
func currencyCodeBefore(s string, i int) (*currency, int) {
	j := i
	if j > 0 && s[j-1] == ' ' {
		j--
	}
	if j < 3 || j > 3 && isLetter(s[j-4]) {
		return nil, 0
	}
	if c := currencyCodes[s[j-3:j]]; c != nil {
		return c, j - 3
	}
	return nil, 0
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
		zh := u.zh
		if per := strings.Index(zh, "每"); per > 0 && (strings.HasSuffix(zh[:per], "米") || strings.HasSuffix(zh[:per], "里")) {
			// A speed reads its "per" first, 每小时十公里, as
			// WeTextProcessing reads "10km/h" (tn/chinese/test/data/
			// measure.txt); a data rate stays 一吉比特每秒.
			n.tmp = append(n.tmp, zh[per:]...)
			zh = zh[:per]
		}
		n.tmp = appendZhSign(n.tmp, sign, u.temp)
		if u.liang && m.intd == "2" && m.frac == "" {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, m.intd, m.frac, zhCount)
		}
		n.tmp = append(n.tmp, zh...)
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
	return n.emitPer(start, end)
}

// perPeriods are the spans of time a rate is written per ("$20/mo").
var perPeriods = map[string]string{
	"s": "second", "sec": "second", "min": "minute", "h": "hour", "hr": "hour", "hour": "hour",
	"d": "day", "day": "day", "wk": "week", "week": "week", "mo": "month", "month": "month",
	"yr": "year", "year": "year",
}

// emitPer emits an English amount or quantity ending at end, with the
// "/mo" or "/kg" written after it read "per month", "per kilogram" (NeMo
// en test_cases_money.txt and test_cases_measure.txt).
func (n *norm) emitPer(start, end int) int {
	s := n.s
	if end+1 < len(s) && s[end] == '/' && isLetter(s[end+1]) {
		k := end + 1
		for k < len(s) && isLetter(s[k]) && k-end <= 6 {
			k++
		}
		if k == len(s) || !isAlnum(s[k]) {
			per := perPeriods[s[end+1:k]]
			if u, uk := unitAt(s, end+1); per == "" && u != nil && uk == k {
				per = u.one
			}
			if per != "" {
				n.tmp = append(n.tmp, " per "...)
				n.tmp = append(n.tmp, per...)
				end = k
			}
		}
	}
	return n.emit(start, end)
}

// scaledUnit reads a quantity with a scale word before its unit, "100
// million kg" one hundred million kilograms (NeMo en
// test_cases_measure.txt).
func (n *norm) scaledUnit(start int, m num, sign byte, e int) int {
	s := n.s
	for _, w := range [...]string{" thousand", " million", " billion", " trillion"} {
		if !strings.HasPrefix(s[e:], w) {
			continue
		}
		u, k := unitAt(s, e+len(w))
		if u == nil || k == e+len(w) || n.lang(start, k) == langZH {
			return 0
		}
		n.tmp = appendEnSign(n.tmp[:0], sign)
		n.tmp = appendEnDecimal(n.tmp, m.intd, m.frac)
		n.tmp = append(n.tmp, w...)
		n.tmp = append(n.tmp, ' ')
		n.tmp = append(n.tmp, u.many...)
		return n.emit(start, k)
	}
	return 0
}
