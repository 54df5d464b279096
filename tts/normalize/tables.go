package normalize

import "strings"

type unit struct {
	sym       string
	one, many string // English singular and plural
	zh        string
	liang     bool // Chinese reads 2 as 两 before it
	temp      bool // Chinese reads a negative as 零下
}

// units is sorted longest symbol first at init.
var units = []unit{
	{"km/h", "kilometer per hour", "kilometers per hour", "公里每小时", true, false},
	{"kph", "kilometer per hour", "kilometers per hour", "公里每小时", true, false},
	{"mph", "mile per hour", "miles per hour", "英里每小时", true, false},
	{"m/s", "meter per second", "meters per second", "米每秒", true, false},
	{"km²", "square kilometer", "square kilometers", "平方公里", true, false},
	{"m²", "square meter", "square meters", "平方米", true, false},
	{"m³", "cubic meter", "cubic meters", "立方米", true, false},
	{"cm²", "square centimeter", "square centimeters", "平方厘米", true, false},
	{"mm²", "square millimeter", "square millimeters", "平方毫米", true, false},
	{"km³", "cubic kilometer", "cubic kilometers", "立方公里", true, false},
	{"cm³", "cubic centimeter", "cubic centimeters", "立方厘米", true, false},
	{"m2", "square meter", "square meters", "平方米", true, false},
	{"m3", "cubic meter", "cubic meters", "立方米", true, false},
	{"μm", "micrometer", "micrometers", "微米", true, false},
	{"µm", "micrometer", "micrometers", "微米", true, false},
	{"KG", "kilogram", "kilograms", "千克", true, false},
	{"mbps", "megabit per second", "megabits per second", "兆比特每秒", true, false},
	{"kbps", "kilobit per second", "kilobits per second", "千比特每秒", true, false},
	{"°C", "degree Celsius", "degrees Celsius", "摄氏度", false, true},
	{"°F", "degree Fahrenheit", "degrees Fahrenheit", "华氏度", false, true},
	{"℃", "degree Celsius", "degrees Celsius", "摄氏度", false, true},
	{"℉", "degree Fahrenheit", "degrees Fahrenheit", "华氏度", false, true},
	{"°", "degree", "degrees", "度", false, true},
	{"kWh", "kilowatt hour", "kilowatt hours", "千瓦时", true, false},
	{"mAh", "milliamp hour", "milliamp hours", "毫安时", true, false},
	{"Mbps", "megabit per second", "megabits per second", "兆比特每秒", true, false},
	{"Gbps", "gigabit per second", "gigabits per second", "吉比特每秒", true, false},
	{"kHz", "kilohertz", "kilohertz", "千赫兹", true, false},
	{"MHz", "megahertz", "megahertz", "兆赫兹", true, false},
	{"GHz", "gigahertz", "gigahertz", "吉赫兹", true, false},
	{"Hz", "hertz", "hertz", "赫兹", true, false},
	{"km", "kilometer", "kilometers", "公里", true, false},
	{"cm", "centimeter", "centimeters", "厘米", true, false},
	{"mm", "millimeter", "millimeters", "毫米", true, false},
	{"m", "meter", "meters", "米", true, false},
	{"kg", "kilogram", "kilograms", "千克", true, false},
	{"mg", "milligram", "milligrams", "毫克", true, false},
	{"g", "gram", "grams", "克", true, false},
	{"lbs", "pound", "pounds", "磅", true, false},
	{"lb", "pound", "pounds", "磅", true, false},
	{"oz", "ounce", "ounces", "盎司", true, false},
	{"mi", "mile", "miles", "英里", true, false},
	{"ft", "foot", "feet", "英尺", true, false},
	{"ml", "milliliter", "milliliters", "毫升", true, false},
	{"mL", "milliliter", "milliliters", "毫升", true, false},
	{"L", "liter", "liters", "升", true, false},
	{"ms", "millisecond", "milliseconds", "毫秒", true, false},
	{"sec", "second", "seconds", "秒", true, false},
	{"min", "minute", "minutes", "分钟", true, false},
	{"mins", "minute", "minutes", "分钟", true, false},
	{"hrs", "hour", "hours", "小时", true, false},
	{"hr", "hour", "hours", "小时", true, false},
	{"h", "hour", "hours", "小时", true, false},
	{"KB", "kilobyte", "kilobytes", "千字节", true, false},
	{"kB", "kilobyte", "kilobytes", "千字节", true, false},
	{"MB", "megabyte", "megabytes", "兆字节", true, false},
	{"GB", "gigabyte", "gigabytes", "吉字节", true, false},
	{"TB", "terabyte", "terabytes", "太字节", true, false},
	{"kW", "kilowatt", "kilowatts", "千瓦", true, false},
	{"W", "watt", "watts", "瓦", true, false},
	{"V", "volt", "volts", "伏", true, false},
}

// unitAt matches a unit at e, glued or after one space, followed by
// neither a letter nor a digit.
func unitAt(s string, e int) (*unit, int) {
	for _, j := range [2]int{e, e + 1} {
		if j > e && (e >= len(s) || s[e] != ' ') {
			break
		}
		if j >= len(s) {
			break
		}
		t := s[j:]
		for k := range units {
			u := &units[k]
			if !strings.HasPrefix(t, u.sym) {
				continue
			}
			end := j + len(u.sym)
			if end < len(s) && isAlnum(s[end]) {
				continue
			}
			return u, end
		}
	}
	return nil, 0
}

type currency struct {
	one, many           string // English major unit
	minorOne, minorMany string // "" when amounts are read as decimals
	zh                  string
}

var (
	curUSD = &currency{"dollar", "dollars", "cent", "cents", "美元"}
	curEUR = &currency{"euro", "euros", "cent", "cents", "欧元"}
	curGBP = &currency{"pound", "pounds", "penny", "pence", "英镑"}
	// ¥ is yen in English text (NeMo en test_cases_money.txt) and 元 in
	// Chinese; the codes CNY and RMB are yuan and 人民币 (WeTextProcessing
	// tn/chinese/test/data/money.txt).
	curYen = &currency{"yen", "yen", "", "", "元"}
	curCNY = &currency{"yuan", "yuan", "", "", "人民币"}
	curKRW = &currency{"won", "won", "", "", "韩元"}
)

var currencyCodes = map[string]*currency{
	"USD": {"US dollar", "US dollars", "cent", "cents", "美元"},
	"EUR": curEUR,
	"GBP": curGBP,
	"CNY": curCNY,
	"RMB": curCNY,
	"JPY": {"yen", "yen", "", "", "日元"},
	"KRW": curKRW,
	"HKD": {"Hong Kong dollar", "Hong Kong dollars", "cent", "cents", "港元"},
	"AUD": {"Australian dollar", "Australian dollars", "cent", "cents", "澳元"},
	"CAD": {"Canadian dollar", "Canadian dollars", "cent", "cents", "加元"},
	"SGD": {"Singapore dollar", "Singapore dollars", "cent", "cents", "新加坡元"},
	"TWD": {"New Taiwan dollar", "New Taiwan dollars", "cent", "cents", "新台币"},
}

// currencyAt matches a currency symbol at j.
func currencyAt(s string, j int) (*currency, int) {
	t := s[j:]
	switch {
	case strings.HasPrefix(t, "$"):
		return curUSD, j + 1
	case strings.HasPrefix(t, "€"):
		return curEUR, j + len("€")
	case strings.HasPrefix(t, "£"):
		return curGBP, j + len("£")
	case strings.HasPrefix(t, "¥"):
		return curYen, j + len("¥")
	case strings.HasPrefix(t, "￥"):
		return curYen, j + len("￥")
	case strings.HasPrefix(t, "₩"):
		return curKRW, j + len("₩")
	}
	return nil, 0
}

// currencyCodeAt matches " USD" (or "USD") after an amount.
func currencyCodeAt(s string, e int) (*currency, int) {
	j := e
	if j < len(s) && s[j] == ' ' {
		j++
	}
	if j+3 > len(s) || j+3 < len(s) && isLetter(s[j+3]) {
		return nil, 0
	}
	if c := currencyCodes[s[j:j+3]]; c != nil {
		return c, j + 3
	}
	return nil, 0
}

// magnitudeAt matches " million" or a glued "M" after an amount of money.
func magnitudeAt(s string, e int) (string, int, int) {
	t := s[e:]
	for _, m := range [...]struct {
		w   string
		exp int
	}{{" thousand", 3}, {" million", 6}, {" billion", 9}, {" trillion", 12}} {
		if strings.HasPrefix(t, m.w) && (len(t) == len(m.w) || !isLetter(t[len(m.w)])) {
			return m.w[1:], m.exp, e + len(m.w)
		}
	}
	k := 0
	if len(t) > 1 && t[0] == ' ' && isLetter(t[1]) {
		k = 1 // "¥30 b"
	}
	for k < len(t) && k < 3 && isLetter(t[k]) {
		k++
	}
	if k == len(t) || !isLetter(t[k]) {
		switch strings.TrimPrefix(t[:k], " ") {
		case "K", "k":
			return "thousand", 3, e + k
		case "M", "m", "mn":
			return "million", 6, e + k
		case "B", "b", "bn", "BN":
			return "billion", 9, e + k
		case "T", "tn":
			return "trillion", 12, e + k
		}
	}
	return "", 0, e
}

var monthNames = [13]string{"", "January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December"}

// monthKeys maps month names, full and abbreviated, in lower case.
var monthKeys = func() map[string]int {
	k := map[string]int{"sept": 9}
	for m := 1; m <= 12; m++ {
		full := strings.ToLower(monthNames[m])
		k[full], k[full[:3]] = m, m
	}
	return k
}()

// monthIndex reads a month's name, full or abbreviated, in any case
// ("Jan", "jan", "JAN", "Sept").
func monthIndex(w string) int {
	if len(w) < 3 || len(w) > 9 {
		return 0
	}
	var low [9]byte
	for i := 0; i < len(w); i++ {
		low[i] = w[i] | 0x20
	}
	return monthKeys[string(low[:len(w)])]
}

var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func validDate(y, m, d int) bool {
	return y >= 1000 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn[m]
}

// yearCues are words after which a bare 1100–2099 reads as a year.
var yearCues = []string{"in", "since", "by", "year", "until", "till", "from", "before",
	"after", "circa", "during", "copyright", "spring", "summer", "autumn", "fall", "winter"}

// yearLinks join a year to the next one ("from 1999 to 2005").
var yearLinks = []string{"to", "and", "through", "or", "till", "until"}

var eras = []string{"B.C.E.", "A.D.", "B.C.", "A.D", "B.C", "BCE", "AD", "BC", "CE"}

// liangWords are the measure words and units before which 2 reads 两.
var liangWords = []string{"个", "位", "次", "件", "天", "本", "张", "条", "只", "岁", "种",
	"倍", "周", "辆", "台", "杯", "瓶", "点", "项", "名", "元", "块", "小时", "分钟",
	"千", "万", "亿", "百", "年", "人", "份", "家", "双", "遍", "趟", "场", "套", "间",
	"首", "部", "篇", "句", "把", "颗", "片", "根", "支", "棵", "碗", "盒", "包", "袋",
	"箱", "秒", "星期", "毛", "角", "斤", "公斤", "公里", "公顷", "米", "厘米", "毫", "克",
	"吨", "升", "平方", "立方"}

// rangeMarks join the two ends of a range.
var rangeMarks = []string{"-", "−", "–", "~", "～", "到", "至"}

// phoneCues introduce a phone number.
var phoneCues = []string{"电话", "拨打", "致电", "热线", "号码", "尾号", "呼叫"}

var ampmTokens = []string{"a.m.", "p.m.", "A.M.", "P.M.", "a.m", "p.m", "A.M", "P.M",
	"am", "pm", "AM", "PM"}

// scoreCues are teams and words about a match after which "1-2" is a
// score.
var scoreCues = []string{"比分", "战平", "击败", "战胜", "负于", "逆转", "爆冷", "比赛",
	"中国", "中国队", "国足", "日本", "韩国", "美国", "英格兰", "法国", "德国", "意大利",
	"西班牙", "葡萄牙", "荷兰", "比利时", "巴西", "阿根廷", "乌拉圭", "墨西哥", "克罗地亚",
	"澳大利亚", "伊朗", "沙特", "卡塔尔", "拉齐奥", "罗马", "尤文", "尤文图斯", "国米",
	"国际米兰", "米兰", "那不勒斯", "皇马", "皇家马德里", "巴萨", "巴塞罗那", "马竞", "拜仁",
	"多特蒙德", "曼联", "曼城", "利物浦", "切尔西", "阿森纳", "热刺", "巴黎", "湖人", "勇士",
	"凯尔特人", "国安", "申花", "泰山"}

// dollarPrefixes are the letters written before "$" for dollars other than
// the US one ("A$13.5" 十三点五澳元, WeTextProcessing
// tn/chinese/test/data/normalizer.txt), longest first.
var dollarPrefixes = []struct{ prefix, code string }{
	{"US", "USD"}, {"AU", "AUD"}, {"HK", "HKD"}, {"NT", "TWD"}, {"CA", "CAD"},
	{"A", "AUD"}, {"C", "CAD"}, {"S", "SGD"},
}
