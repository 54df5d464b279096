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
		n.tmp = appendZhSign(n.tmp, sign, u.temp)
		if u.liang && m.intd == "2" && m.frac == "" {
			n.tmp = append(n.tmp, "两"...)
		} else {
			n.tmp = appendZhDecimal(n.tmp, m.intd, m.frac, zhCount)
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
