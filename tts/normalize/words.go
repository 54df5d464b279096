package normalize

import "strconv"

var enSmall = [20]string{
	"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
	"seventeen", "eighteen", "nineteen",
}

var enTens = [10]string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

var enScales = [8]string{"", "thousand", "million", "billion", "trillion", "quadrillion", "quintillion", "sextillion"}

// Longest digit strings read as cardinals; longer ones are read digit by
// digit.
const (
	enMaxDigits = 15 // 999 trillion
	zhMaxDigits = 16 // 9999万亿
)

func appendEn99(b []byte, v int) []byte {
	if v < 20 {
		return append(b, enSmall[v]...)
	}
	b = append(b, enTens[v/10]...)
	if v%10 != 0 {
		b = append(b, '-')
		b = append(b, enSmall[v%10]...)
	}
	return b
}

func appendEn999(b []byte, v int) []byte {
	if v >= 100 {
		b = append(b, enSmall[v/100]...)
		b = append(b, " hundred"...)
		v %= 100
		if v == 0 {
			return b
		}
		b = append(b, ' ')
	}
	return appendEn99(b, v)
}

// appendEnInt writes v in words.
func appendEnInt(b []byte, v uint64) []byte {
	var d [20]byte
	return appendEnGroups(b, string(strconv.AppendUint(d[:0], v, 10)))
}

// appendEnGroups writes the digit string d (no leading zeros, at most
// 3*len(enScales) digits) in words, three digits to a scale word.
func appendEnGroups(b []byte, d string) []byte {
	if allZeros(d) {
		return append(b, "zero"...)
	}
	first := true
	for len(d) > 0 {
		head := len(d) % 3
		if head == 0 {
			head = 3
		}
		g, x := atoi(d[:head]), (len(d)-1)/3
		d = d[head:]
		if g == 0 {
			continue
		}
		if !first {
			b = append(b, ' ')
		}
		b = appendEn999(b, g)
		if x > 0 {
			b = append(b, ' ')
			b = append(b, enScales[x]...)
		}
		first = false
	}
	return b
}

func appendEnDigits(b []byte, d string) []byte {
	for i := 0; i < len(d); i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, enSmall[d[i]-'0']...)
	}
	return b
}

// appendEnNum writes a digit string as a cardinal, or digit by digit when
// it has a leading zero or is too long.
func appendEnNum(b []byte, d string) []byte {
	if d == "" {
		return b
	}
	if len(d) > enMaxDigits || len(d) > 1 && d[0] == '0' {
		return appendEnDigits(b, d)
	}
	v, err := strconv.ParseUint(d, 10, 64)
	if err != nil {
		return appendEnDigits(b, d)
	}
	return appendEnInt(b, v)
}

func appendEnDecimal(b []byte, ip, fp string) []byte {
	b = appendEnNum(b, ip)
	if fp != "" {
		if ip != "" {
			b = append(b, ' ')
		}
		b = append(b, "point "...)
		b = appendEnDigits(b, fp)
	}
	return b
}

// appendEnOrdinal writes a digit string as an ordinal ("twenty-second").
func appendEnOrdinal(b []byte, d string) []byte {
	return ordinalize(appendEnNum(b, d), len(b))
}

// appendEnOrdinalInt writes v < 10^15 as an ordinal.
func appendEnOrdinalInt(b []byte, v uint64) []byte {
	return ordinalize(appendEnInt(b, v), len(b))
}

// ordinalize turns the cardinal written since start into an ordinal.
func ordinalize(b []byte, start int) []byte {
	w := len(b)
	for w > start && b[w-1] != ' ' && b[w-1] != '-' {
		w--
	}
	last := string(b[w:])
	b = b[:w]
	return append(b, ordinalWord(last)...)
}

func ordinalWord(w string) string {
	switch w {
	case "one":
		return "first"
	case "two":
		return "second"
	case "three":
		return "third"
	case "five":
		return "fifth"
	case "eight":
		return "eighth"
	case "nine":
		return "ninth"
	case "twelve":
		return "twelfth"
	}
	if len(w) > 0 && w[len(w)-1] == 'y' {
		return w[:len(w)-1] + "ieth"
	}
	return w + "th"
}

// appendEnPlural pluralizes the last word written since start ("nineteen
// ninety" → "nineteen nineties").
func appendEnPlural(b []byte, start int) []byte {
	if len(b) > start && b[len(b)-1] == 'y' {
		return append(b[:len(b)-1], "ies"...)
	}
	return append(b, 's')
}

// appendEnYear reads a four-digit year: nineteen ninety-nine, two thousand
// five, twenty ten, nineteen oh five, nineteen hundred.
func appendEnYear(b []byte, v int) []byte {
	hi, lo := v/100, v%100
	switch {
	case v < 100 || v%1000 == 0 || hi%10 == 0 && lo < 10 || v < 1000 && lo < 10:
		return appendEnInt(b, uint64(v))
	case lo == 0:
		b = appendEn99(b, hi)
		return append(b, " hundred"...)
	case lo < 10:
		b = appendEn99(b, hi)
		b = append(b, " oh "...)
		return append(b, enSmall[lo]...)
	default:
		b = appendEn99(b, hi)
		b = append(b, ' ')
		return appendEn99(b, lo)
	}
}

var zhDigit = [10]string{"零", "一", "二", "三", "四", "五", "六", "七", "八", "九"}

var zhPlace = [4]string{"千", "百", "十", ""}

// zhHead says how the head of a Chinese number is read.
type zhHead uint8

const (
	zhInner zhHead = iota // inside a number: 一十, 二千
	zhLabel               // starts a rank, label or time: 十二, 二千
	zhCount               // starts a quantity: 十二, 两千
)

// appendZh4 writes 0 < g < 10000. At the head of a number the 一 of 一十
// is dropped, and a quantity reads 2000 as 两千, as speakers do before
// 千, 万 and 亿 (二百 stays: before 百 二 is the more usual).
func appendZh4(b []byte, g int, head zhHead) []byte {
	div := 1000
	started, zero := false, false
	for p := 0; p < 4; p++ {
		d := g / div % 10
		div /= 10
		if d == 0 {
			if started {
				zero = true
			}
			continue
		}
		if zero {
			b = append(b, "零"...)
			zero = false
		}
		switch {
		case p == 2 && d == 1 && !started && head != zhInner:
			b = append(b, "十"...)
		case p == 0 && d == 2 && head == zhCount:
			b = append(b, "两千"...)
		default:
			b = append(b, zhDigit[d]...)
			b = append(b, zhPlace[p]...)
		}
		started = true
	}
	return b
}

// appendZhInt writes v < 10^16 with 万/亿 grouping and 零 placement.
func appendZhInt(b []byte, v uint64, head zhHead) []byte {
	const wan, yi = 10000, 100000000
	switch {
	case v == 0:
		return append(b, "零"...)
	case v >= yi:
		b = appendZhHigh(b, v/yi, head)
		b = append(b, "亿"...)
		lo := v % yi
		if lo == 0 {
			return b
		}
		if lo < yi/10 {
			b = append(b, "零"...)
			if lo >= wan {
				// After 零 a count of 万 starts afresh: 一百亿零十万,
				// but 一百亿零一十 (NeMo zh test_cases_cardinal.txt).
				return appendZhInt(b, lo, zhLabel)
			}
		}
		return appendZhInt(b, lo, zhInner)
	case v >= wan:
		b = appendZhHigh(b, v/wan, head)
		b = append(b, "万"...)
		lo := v % wan
		if lo == 0 {
			return b
		}
		if lo < 1000 {
			b = append(b, "零"...)
		}
		return appendZh4(b, int(lo), zhInner)
	}
	return appendZh4(b, int(v), head)
}

// appendZhHigh writes the count of 万 or 亿: 两万, not 二万, in a quantity.
func appendZhHigh(b []byte, v uint64, head zhHead) []byte {
	if v == 2 && head == zhCount {
		return append(b, "两"...)
	}
	return appendZhInt(b, v, head)
}

// appendZhDigits reads digits one by one; yao reads 1 as 幺 (phone numbers).
func appendZhDigits(b []byte, d string, yao bool) []byte {
	for i := 0; i < len(d); i++ {
		if yao && d[i] == '1' {
			b = append(b, "幺"...)
		} else {
			b = append(b, zhDigit[d[i]-'0']...)
		}
	}
	return b
}

// appendZhNum writes a digit string as a cardinal, or digit by digit when
// it has a leading zero or is too long.
func appendZhNum(b []byte, d string, head zhHead) []byte {
	if d == "" {
		return b
	}
	if len(d) > zhMaxDigits || len(d) > 1 && d[0] == '0' {
		return appendZhDigits(b, d, false)
	}
	v, err := strconv.ParseUint(d, 10, 64)
	if err != nil {
		return appendZhDigits(b, d, false)
	}
	return appendZhInt(b, v, head)
}

func appendZhDecimal(b []byte, ip, fp string, head zhHead) []byte {
	if ip == "" {
		b = append(b, "零"...)
	} else {
		b = appendZhNum(b, ip, head)
	}
	if fp != "" {
		b = append(b, "点"...)
		b = appendZhDigits(b, fp, false)
	}
	return b
}

// appendZhSign reads a sign: 零下 and 零上 for a temperature, else 负 and
// 正.
func appendZhSign(b []byte, sign byte, temp bool) []byte {
	switch {
	case sign == '-' && temp:
		return append(b, "零下"...)
	case sign == '-':
		return append(b, "负"...)
	case sign == '+' && temp:
		return append(b, "零上"...)
	case sign == '+':
		return append(b, "正"...)
	}
	return b
}
