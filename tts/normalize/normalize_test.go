package normalize_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/tts/normalize"
)

type tcase struct{ in, want string }

// check runs fn over the table, one subtest per case.
func check(t *testing.T, fn func(string) string, cases []tcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			assert.Equal(t, c.want, fn(c.in))
		})
	}
}

func TestCardinalEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"0", "zero"},
		{"7 apples", "seven apples"},
		{"I counted 42.", "I counted forty-two."},
		{"It costs 115 points", "It costs one hundred fifteen points"},
		{"10000 steps", "ten thousand steps"},
		{"1,234,567 people", "one million two hundred thirty-four thousand five hundred sixty-seven people"},
		{"about 1,000,000 users", "about one million users"},
		{"2,000,000,000,000 stars", "two trillion stars"},
		{"999,999,999,999,999", "nine hundred ninety-nine trillion nine hundred ninety-nine billion " +
			"nine hundred ninety-nine million nine hundred ninety-nine thousand nine hundred ninety-nine"},
		{"id 1234567890123456789", "id one two three four five six seven eight nine zero one two three four five six seven eight nine"},
		{"-5 points", "minus five points"},
		{"−12 goals", "minus twelve goals"},
		{"+3 goals", "plus three goals"},
		{"code 007", "code zero zero seven"},
		{"1,2,3", "one,two,three"},
		{"The answer is 1234.", "The answer is one thousand two hundred thirty-four."},
		{"pages 10-20", "pages ten to twenty"},
		{"3~5 days", "three to five days"},
		{"~5 minutes", "about five minutes"},
		{"5-3=2", "five minus three equals two"},
		{"1/2 cup", "one half cup"},
		{"3/4 of them", "three quarters of them"},
		{"2/3 and 5/8", "two thirds and five eighths"},
		{"24/7", "twenty-four seven"},
		{"won 3:2", "won three to two"},
		{"16:9 screen", "sixteen to nine screen"},
		{"mp3 and H2O", "mp three and H two O"},
		{"PM2.5 is 75", "PM two point five is seventy-five"},
		{"COVID-19", "COVID-nineteen"},
	})
}

func TestCardinalChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"我有3个apple", "我有三个apple"},
		{"共1005人", "共一千零五人"},
		{"共10010人", "共一万零一十人"},
		{"他12岁", "他十二岁"},
		{"活了112岁", "活了一百一十二岁"},
		{"10个", "十个"},
		{"150000人", "十五万人"},
		{"人口100000000", "人口一亿"},
		{"100010000元", "一亿零一万元"},
		{"100001000元", "一亿零一千元"},
		{"123456789人", "一亿二千三百四十五万六千七百八十九人"},
		{"1000000000000元", "一万亿元"},
		{"1,234,567人", "一百二十三万四千五百六十七人"},
		{"温度是-5度", "温度是负五度"},
		{"我有2个苹果", "我有两个苹果"},
		{"第2个", "第二个"},
		{"2年级", "二年级"},
		{"2月", "二月"},
		{"等了2小时", "等了两小时"},
		{"3-5个", "三到五个"},
		{"3~5天", "三到五天"},
		{"约~5分钟", "约五分钟"},
		{"比分3:2", "比分三比二"},
		{"1/2的人", "二分之一的人"},
		{"编号007", "编号零零七"},
	})
}

func TestOrdinalEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"1st", "first"},
		{"2nd place", "second place"},
		{"3rd", "third"},
		{"4th", "fourth"},
		{"11th 12th 13th", "eleventh twelfth thirteenth"},
		{"21st", "twenty-first"},
		{"22nd", "twenty-second"},
		{"the 20th century", "the twentieth century"},
		{"the 90th minute", "the ninetieth minute"},
		{"100th", "one hundredth"},
		{"101st", "one hundred first"},
		{"the 1,000th visitor", "the one thousandth visitor"},
		{"8th 9th 5th", "eighth ninth fifth"},
	})
}

func TestOrdinalChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"第3", "第三"},
		{"第1名", "第一名"},
		{"第12名", "第十二名"},
		{"第100天", "第一百天"},
		{"第21届", "第二十一届"},
		{"第10章", "第十章"},
		{"第2个", "第二个"},
		{"第1005号", "第一千零五号"},
		{"我是1st", "我是第一"},
	})
}

func TestDecimalEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"3.14", "three point one four"},
		{"0.5", "zero point five"},
		{"about .5 of it", "about point five of it"},
		{"-0.25", "minus zero point two five"},
		{"1,234.56", "one thousand two hundred thirty-four point five six"},
		{"1.05", "one point zero five"},
		{"10.0", "ten point zero"},
		{"2.5 times", "two point five times"},
		{"pi is 3.14159.", "pi is three point one four one five nine."},
		{"version 1.5", "version one point five"},
	})
}

func TestDecimalChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"圆周率3.14", "圆周率三点一四"},
		{"0.5倍", "零点五倍"},
		{"增长1.05倍", "增长一点零五倍"},
		{"温差-0.25度", "温差负零点二五度"},
		{"只要.5秒", "只要零点五秒"},
		{"1,234.56元", "一千二百三十四点五六元"},
		{"12.50元", "十二点五元"},
		{"身高1.75米", "身高一点七五米"},
		{"评分10.0分", "评分十点零分"},
	})
}

func TestPercentEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"45%", "forty-five percent"},
		{"12.5%", "twelve point five percent"},
		{"100%", "one hundred percent"},
		{"0.5%", "zero point five percent"},
		{"down -3%", "down minus three percent"},
		{"up +5%", "up plus five percent"},
		{"50 % off", "fifty percent off"},
		{"up 7％", "up seven percent"},
		{"3-5%", "three to five percent"},
	})
}

func TestPercentChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"增长了45%", "增长了百分之四十五"},
		{"利率12.5%", "利率百分之十二点五"},
		{"完成100%", "完成百分之百"},
		{"下降-3%", "下降负百分之三"},
		{"0.5%的人", "百分之零点五的人"},
		{"占比30％", "占比百分之三十"},
		{"达到100.5%", "达到百分之一百点五"},
		{"增幅+5%", "增幅正百分之五"},
		{"约10%的用户", "约百分之十的用户"},
	})
}

func TestCurrencyEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"$12.50", "twelve dollars fifty cents"},
		{"$1", "one dollar"},
		{"$0.99", "ninety-nine cents"},
		{"$1.01", "one dollar one cent"},
		{"$12.5", "twelve dollars fifty cents"},
		{"$1,000,000", "one million dollars"},
		{"€3", "three euros"},
		{"€1", "one euro"},
		{"€2.50", "two euros fifty cents"},
		{"£1", "one pound"},
		{"£2.50", "two pounds fifty pence"},
		{"¥100", "one hundred yen"},
		{"-$5", "minus five dollars"},
		{"$12.345", "twelve point three four five dollars"},
		{"$5 million", "five million dollars"},
		{"$1.5M budget", "one point five million dollars budget"},
		{"$100 USD", "one hundred US dollars"},
		{"12.50 USD", "twelve US dollars fifty cents"},
		{"100 RMB", "one hundred yuan"},
	})
}

func TestCurrencyChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"价格是¥12.5", "价格是十二点五元"},
		{"花了¥100", "花了一百元"},
		{"花了￥100", "花了一百元"},
		{"100元", "一百元"},
		{"售价$12.50", "售价十二点五美元"},
		{"€3一张", "三欧元一张"},
		{"£1的", "一英镑的"},
		{"融资$5M", "融资五百万美元"},
		{"融资$1.5M", "融资一百五十万美元"},
		{"花了¥2", "花了两元"},
		{"亏损-$5", "亏损负五美元"},
		{"价格100 RMB", "价格一百人民币"},
		{"$12.00的", "十二美元的"},
	})
}

func TestDateEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"2026-11-30", "November thirtieth, twenty twenty-six"},
		{"on 2026/01/05.", "on January fifth, twenty twenty-six."},
		{"1999-12-31", "December thirty-first, nineteen ninety-nine"},
		{"2000-02-29", "February twenty-ninth, two thousand"},
		{"2026.11.30", "November thirtieth, twenty twenty-six"},
		{"11/30/2026", "November thirtieth, twenty twenty-six"},
		{"30/11/2026", "the thirtieth of November, twenty twenty-six"},
		{"11-30-2026", "November thirtieth, twenty twenty-six"},
		{"November 30, 2026", "November thirtieth, twenty twenty-six"},
		{"Nov. 30th", "November thirtieth"},
		{"May 5", "May fifth"},
		{"on 4 July 1776", "on the fourth of July, seventeen seventy-six"},
		{"the 30 Nov", "the thirtieth of November"},
		{"in March 2020", "in March twenty twenty"},
	})
}

func TestDateChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"2026年11月30日", "二零二六年十一月三十日"},
		{"日期是2026-11-30", "日期是二零二六年十一月三十日"},
		{"1999年12月31日", "一九九九年十二月三十一日"},
		{"2000年", "二零零零年"},
		{"3月8日", "三月八日"},
		{"5月1号", "五月一号"},
		{"时间是2026/1/5", "时间是二零二六年一月五日"},
		{"2008年8月8日晚上8点", "二零零八年八月八日晚上八点"},
		{"10年前", "十年前"},
		{"用了2年", "用了两年"},
		{"1990年代", "一九九零年代"},
	})
}

func TestTimeEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"10:30", "ten thirty"},
		{"9:05", "nine oh five"},
		{"10:00", "ten o'clock"},
		{"at 3 p.m.", "at three p m."},
		{"at 3 p.m. and then", "at three p m and then"},
		{"It starts at 3pm today.", "It starts at three p m today."},
		{"10:30 AM", "ten thirty a m"},
		{"at 12pm", "at twelve p m"},
		{"15:00", "fifteen o'clock"},
		{"00:00", "midnight"},
		{"14:45", "fourteen forty-five"},
		{"10:30:15", "ten hours thirty minutes and fifteen seconds"},
		{"10:00-11:00", "ten o'clock to eleven o'clock"},
		{"John 3:16", "John three sixteen"},
	})
}

func TestTimeChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"现在是10:30", "现在是十点三十分"},
		{"10:05开会", "十点零五分开会"},
		{"2:30出发", "两点三十分出发"},
		{"10:00整", "十点整"},
		{"会议在3pm", "会议在下午三点"},
		{"晚上9:30pm", "晚上九点三十分"},
		{"时间10:30:15", "时间十点三十分十五秒"},
		{"早上8:00", "早上八点"},
		{"12:00 pm到", "中午十二点到"},
		{"下午2点", "下午两点"},
		{"8:30am上班", "上午八点三十分上班"},
	})
}

func TestUnitsEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"5 km", "five kilometers"},
		{"1 km", "one kilometer"},
		{"3kg", "three kilograms"},
		{"20°C", "twenty degrees Celsius"},
		{"it is -1°C", "it is minus one degree Celsius"},
		{"98.6°F", "ninety-eight point six degrees Fahrenheit"},
		{"5 MB", "five megabytes"},
		{"100 ms", "one hundred milliseconds"},
		{"1 GB", "one gigabyte"},
		{"6 ft", "six feet"},
		{"1 ft", "one foot"},
		{"60 mph", "sixty miles per hour"},
		{"100 km/h", "one hundred kilometers per hour"},
		{"2.5 km", "two point five kilometers"},
		{"100 m²", "one hundred square meters"},
		{"90°", "ninety degrees"},
		{"5 GHz", "five gigahertz"},
		{"5 more", "five more"},
		{"3D", "three D"},
	})
}

func TestUnitsChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"5公里", "五公里"},
		{"今天20°C", "今天二十摄氏度"},
		{"重3kg", "重三千克"},
		{"跑了5 km", "跑了五公里"},
		{"气温-5℃", "气温零下五摄氏度"},
		{"内存16GB", "内存十六吉字节"},
		{"延迟100ms", "延迟一百毫秒"},
		{"速度60km/h", "速度每小时六十公里"},
		{"重2kg", "重两千克"},
		{"面积100m²", "面积一百平方米"},
		{"下载5 MB的文件", "下载五兆字节的文件"},
		{"温度+5°C", "温度零上五摄氏度"},
	})
}

func TestSymbolsEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"a & b", "a and b"},
		{"R&D at AT&T", "R and D at AT and T"},
		{"1 + 1 = 2", "one plus one equals two"},
		{"1+1=2", "one plus one equals two"},
		{"x=1", "x equals one"},
		{"x = -1", "x equals minus one"},
		{"email me@example.com", "email me at example.com"},
		{"Meet @ 5pm", "Meet at five p m"},
		{"#1 in sales", "number one in sales"},
		{"3×4", "three times four"},
		{"8÷2", "eight divided by two"},
	})
}

func TestSymbolsChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"苹果&香蕉", "苹果和香蕉"},
		{"A&B公司", "A和B公司"},
		{"苹果+香蕉", "苹果加香蕉"},
		{"算式1+1=2", "算式一加一等于二"},
		{"联系我@张三", "联系我艾特张三"},
		{"排名#3", "排名三号"},
		{"3×4等于", "三乘四等于"},
		{"8÷2是", "八除以二是"},
		{"结果x=5", "结果x等于五"},
	})
}

func TestYearsEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"in 1999", "in nineteen ninety-nine"},
		{"since 2010", "since twenty ten"},
		{"by 2030,", "by twenty thirty,"},
		{"in 1905", "in nineteen oh five"},
		{"In 1900", "In nineteen hundred"},
		{"in 2000", "in two thousand"},
		{"in 2005", "in two thousand five"},
		{"2005", "two thousand five"},
		{"in 1200 AD", "in twelve hundred AD"},
		{"500 BC", "five hundred BC"},
		{"from 1999 to 2005", "from nineteen ninety-nine to two thousand five"},
		{"1999-2005", "nineteen ninety-nine to two thousand five"},
		{"(1999)", "(nineteen ninety-nine)"},
		{"Copyright © 2026", "Copyright © twenty twenty-six"},
		{"1999 apples", "one thousand nine hundred ninety-nine apples"},
		{"in 1066", "in one thousand sixty-six"},
		{"in 3000 years", "in three thousand years"},
		{"the 1990s and '80s", "the nineteen nineties and eighties"},
		{"the 2000s", "the two thousands"},
	})
}

func TestPhoneEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"Call 555-123-4567 now", "Call five five five, one two three, four five six seven now"},
		{"(555) 123-4567", "five five five, one two three, four five six seven"},
		{"+1 555 123 4567", "plus one, five five five, one two three, four five six seven"},
		{"1-800-555-1234", "one, eight zero zero, five five five, one two three four"},
		{"dial 555-1234", "dial five five five, one two three four"},
		{"555.123.4567", "five five five, one two three, four five six seven"},
		{"+44 20 7946 0958", "plus four four, two zero, seven nine four six, zero nine five eight"},
		{"+1 (555) 123-4567", "plus one, five five five, one two three, four five six seven"},
		{"10 000 000", "ten zero zero zero zero zero zero"},
	})
}

func TestPhoneChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"我的电话是138 0013 8000。", "我的电话是幺三八，零零幺三，八零零零。"},
		{"请拨打400-820-8820", "请拨打四零零，八二零，八八二零"},
		{"手机13800138000", "手机幺三八零零幺三八零零零"},
		{"电话010-12345678", "电话零幺零，幺二三四五六七八"},
		{"拨打+86 138 0013 8000", "拨打加八六，幺三八，零零幺三，八零零零"},
		{"拨打(010) 1234 5678", "拨打零幺零，幺二三四，五六七八"},
		{"号码0755-12345678", "号码零七五五，幺二三四五六七八"},
		{"打555-1234", "打五五五，幺二三四"},
	})
}

func TestVersionsEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"v1.2.3", "version one point two point three"},
		{"update to v2", "update to version two"},
		{"v1.10", "version one point ten"},
		{"V2.0", "version two point zero"},
		{"a V8 engine", "a V eight engine"},
		{"1.2.3", "one point two point three"},
		{"Python 3.11.2", "Python three point eleven point two"},
		{"Python3.11.2", "Python three point eleven point two"},
		{"192.168.1.1", "one nine two dot one six eight dot one dot one"},
		{"0x1F", "0x1F"},
		{"Version v2.1", "Version two point one"},
	})
}

func TestVersionsChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"升级到v2.1", "升级到版本二点一"},
		{"版本v1.2.3", "版本一点二点三"},
		{"下载v3", "下载版本三"},
		{"使用v1.10", "使用版本一点十"},
		{"Python 3.11.2发布", "Python 三点十一点二发布"},
		{"1.2.3版", "一点二点三版"},
		{"IP是192.168.1.1", "IP是一九二点一六八点一点一"},
		{"服务器10.0.0.1", "服务器一零点零点零点一"},
		{"V8发动机", "V八发动机"},
	})
}

func TestMixed(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"我有3个apple", "我有三个apple"},
		{"I bought 3 apples, 我买了5个苹果", "I bought three apples, 我买了五个苹果"},
		{"会议在10:30 in Room 5", "会议在十点三十分 in Room five"},
		{"价格: $12.50", "价格: 十二点五美元"},
		{"Price: $12.50", "Price: twelve dollars fifty cents"},
		{"iPhone15很好", "iPhone十五很好"},
		{"我的iPhone15", "我的iPhone十五"},
		{"我有 3 个苹果", "我有 三 个苹果"},
		{"Call 张三 at 10:30", "Call 张三 at ten thirty"},
		{"他说\"OK\"然后跑了5 km", "他说\"OK\"然后跑了五公里"},
		{"In 2026, 我们去了3次", "In twenty twenty-six, 我们去了三次"},
		{"iPhone 15 发布", "iPhone 十五 发布"}, // a Han/Latin tie goes to Chinese
		{"3.14", "three point one four"},
		{"明天15℃，wind 3 km/h", "明天十五摄氏度，wind three kilometers per hour"},
		{"Tomorrow 15℃, 多云", "Tomorrow fifteen degrees Celsius, 多云"},
	})
}

// TestSpokenMandarin holds what an assistant's weather, time and price
// replies say, each read as a Mandarin speaker reads it aloud. Chinese and
// Text must agree on them: every case is Chinese text.
func TestSpokenMandarin(t *testing.T) {
	cases := []tcase{
		// Weather.
		{"今天15℃", "今天十五摄氏度"},
		{"最低-3℃", "最低零下三摄氏度"},
		{"气温15到20度", "气温十五到二十度"},
		{"气温15-20度", "气温十五到二十度"},
		{"气温15~20℃", "气温十五到二十摄氏度"},
		{"气温15～20℃", "气温十五到二十摄氏度"},
		{"气温15℃~20℃", "气温十五摄氏度到二十摄氏度"},
		{"气温-3~5℃", "气温零下三到五摄氏度"},
		{"气温-3到5℃", "气温零下三到五摄氏度"},
		{"气温-8~-2℃", "气温零下八到零下二摄氏度"},
		{"气温-3 ~ 5℃", "气温零下三 到 五摄氏度"},
		{"气温-3至5℃", "气温零下三至五摄氏度"},
		{"湿度50%", "湿度百分之五十"},
		{"3级风", "三级风"},
		{"风力3-4级", "风力三到四级"},
		{"东南风2级", "东南风二级"},
		{"PM2.5指数75", "PM二点五指数七十五"},
		{"风速3m/s", "风速每秒三米"},
		// Clock times: 点 and 分 on a 24-hour clock, as announced.
		{"下午3:30见", "下午三点三十分见"},
		{"3:05出发", "三点零五分出发"},
		{"15:30开会", "十五点三十分开会"},
		{"2:00开始", "两点开始"},
		{"明天2点", "明天两点"},
		{"22:00关门", "二十二点关门"},
		{"0:30睡觉", "零点三十分睡觉"},
		{"营业时间9:00-17:00", "营业时间九点到十七点"},
		{"14:00~16:00有雨", "十四点到十六点有雨"},
		// Dates.
		{"2026年12月2日", "二零二六年十二月二日"},
		{"12月2日", "十二月二日"},
		{"12月2号周三", "十二月二号周三"},
		{"会议定在2026-12-02举行", "会议定在二零二六年十二月二日举行"},
		{"2025-2026年", "二零二五到二零二六年"},
		{"2025~2026年度", "二零二五到二零二六年度"},
		// Prices.
		{"票价¥35.5", "票价三十五点五元"},
		{"35.5元", "三十五点五元"},
		{"共￥1,200", "共一千二百元"},
		{"只要¥2", "只要两元"},
		{"花了2000元", "花了两千元"},
		{"¥0.50一个", "零点五元一个"},
		{"2块钱", "两块钱"},
		{"打8折", "打八折"},
		// Phone numbers: digit by digit, 1 as 幺, 2 as 二.
		{"手机13812345678", "手机幺三八幺二三四五六七八"},
		{"手机138-1234-5678", "手机幺三八，幺二三四，五六七八"},
		{"电话010-12345678", "电话零幺零，幺二三四五六七八"},
		{"号码13822222222", "号码幺三八二二二二二二二二"},
		{"请拨打12345", "请拨打幺二三四五"},
		{"急救电话是120", "急救电话是幺二零"},
		{"热线：95588", "热线：九五五八八"},
		{"电话费200元", "电话费二百元"},
		{"拨打100次", "拨打一百次"},
		{"拨打2个电话", "拨打两个电话"},
		// Numbers and measure words.
		{"浓度0.5", "浓度零点五"},
		{"共100人", "共一百人"},
		{"1001个座位", "一千零一个座位"},
		{"走了20000步", "走了两万步"},
		{"走了2000米", "走了两千米"},
		{"2000万人", "两千万人"},
		{"200000000元", "两亿元"},
		{"22000人", "两万二千人"},
		{"12000人", "一万二千人"},
		{"200人", "二百人"},
		{"第2000位", "第二千位"},
		{"2个人", "两个人"},
		{"2人", "两人"},
		{"2秒", "两秒"},
		{"2公里", "两公里"},
		{"2-3天", "两到三天"},
		{"重2-3kg", "重两到三千克"},
		{"2.50~3.50元", "二点五到三点五元"},
		{"1-2个", "一到两个"},
		{"2楼", "二楼"},
		{"2两", "二两"},
		{"下降了-2.5", "下降了负二点五"},
		{"第3", "第三"},
	}
	for name, fn := range map[string]func(string) string{"Text": normalize.Text, "Chinese": normalize.Chinese} {
		t.Run(name, func(t *testing.T) { check(t, fn, cases) })
	}
}

func TestUntouched(t *testing.T) {
	for _, s := range []string{
		"",
		"Hello, world!",
		"你好，世界。",
		"C++ and A+ grades",
		"x == y and a => b, a != b",
		"a&&b || c",
		"&amp; and &#39;",
		"Mr. Smith's well-known café — v. good.",
		"  spaced\ttext\n\nnext line  ",
		"visit https://example.com/a1/b2?x=3&y=4 today",
		"see www.example.com/page2",
		"emoji 🎉 ok",
		"a - b",
		"#hashtag and user@@x",
		"0x1F",
	} {
		assert.Equal(t, s, normalize.Text(s), "%q", s)
		assert.Equal(t, s, normalize.English(s), "%q", s)
	}
}

func TestForced(t *testing.T) {
	check(t, normalize.English, []tcase{
		{"我有3个", "我有three个"},
		{"3.14", "three point one four"},
		{"10:30", "ten thirty"},
		{"¥12.5", "twelve point five yen"},
	})
	check(t, normalize.Chinese, []tcase{
		{"I have 3", "I have 三"},
		{"3.14", "三点一四"},
		{"10:30", "十点三十分"},
		{"$12.50", "十二点五美元"},
		{"2026-11-30", "二零二六年十一月三十日"},
		{"45%", "百分之四十五"},
	})
}

func TestInvalidUTF8(t *testing.T) {
	out := normalize.Text("a\xff3 \xe4\xbd")
	assert.True(t, utf8.ValidString(out))
	assert.Equal(t, "a\uFFFDthree \uFFFD", out)
}

func FuzzText(f *testing.F) {
	for _, s := range []string{
		"我有3个apple", "$12.50", "2026-11-30", "10:30 pm", "+1 (555) 123-4567",
		"v1.2.3", "1,234,567.89%", "-5°C", "1999-2005", "Nov. 30th, 2026",
		"1/2", "3:2", "a & b", "#1", "'80s", "¥12.5", "第3", "20°C",
		"9999999999999999999999", "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17",
		"https://x.com/1", "\xff1", "1-2-3-4-5-6-7-8-9",
		"气温-3~-5℃", "2-3天", "2025-2026年", "拨打12345", "PM2.5", "20000步",
		"2 1/2", "$250-$300", "1-800-GO-U-HAUL", "2019·2·10", "2 ≤ 4", "中国1-2", "10:00:05 a.m.",
		"Jan-15-2020", "1428 Elm St.", "$1.5万", "CNY1.25", "A$5", "２０", "90后", "2x8 m2", "12/2/2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inChinese := func(s string) string { return normalize.Reply(s, normalize.LangChinese) }
		for _, fn := range []func(string) string{normalize.Text, normalize.English, normalize.Chinese, inChinese} {
			out := fn(s)
			require.True(t, utf8.ValidString(out), "invalid UTF-8 output for %q: %q", s, out)
		}
	})
}

var paragraph = strings.Repeat("On 2026-11-30 at 10:30 the team shipped v1.2.3 to 1,234,567 users; "+
	"revenue rose 12.5% to $3.5M, and the 5 km run starts at 3pm (call 555-123-4567). "+
	"我们在2026年11月30日10:05发布了新版本，售价¥12.5，下载量增长了45%，我有3个apple。"+
	"Temperatures hit -5°C in 1999 & again in 2005. Plain words need no change at all. ", 2)

func BenchmarkText(b *testing.B) {
	b.SetBytes(int64(len(paragraph)))
	b.ReportAllocs()
	for b.Loop() {
		normalize.Text(paragraph)
	}
}

func BenchmarkTextPlain(b *testing.B) {
	plain := strings.Repeat("Plain words need no change at all, 你好世界。 ", 20)
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	for b.Loop() {
		normalize.Text(plain)
	}
}

// The readings the peer suites taught (suite_test.go), on sentences of
// this package's own, in both languages.
func TestPeerReadingsEnglish(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"Add 2 1/2 cups", "Add two and a half cups"},
		{"a 5/16 inch bolt", "a five sixteenths inch bolt"},
		{"-3/4", "minus three quarters"},
		{"1/4th of it", "one quarter of it"},
		{"the 3th row", "the three th row"},
		{"on 7 march 2025", "on the seventh of March, twenty twenty-five"},
		{"on 07.03.2025", "on July third, twenty twenty-five"},
		{"due 12/25/99", "due December twenty-fifth, ninety-nine"},
		{"2Q24 results", "the second quarter of twenty-four results"},
		{"$30/mo", "thirty dollars per month"},
		{"$250-$300", "two hundred fifty dollars to three hundred dollars"},
		{"A$20", "twenty Australian dollars"},
		{"₩5000", "five thousand won"},
		{"at 1:05:09", "at one hour five minutes and nine seconds"},
		{"at 9.45 p.m. sharp", "at nine forty-five p m sharp"},
		{"5 ≥ 3", "five is greater than or equal to three"},
		{"4*5", "four times five"},
		{"call 1-800-FLOWERS", "call one, eight hundred, FLOWERS"},
		{"8 mbps", "eight megabits per second"},
		{"3 cm²", "three square centimeters"},
		{"±5", "plus or minus five"},
		{"a 4 x 6 m room", "a four by six meters room"},
		{"the 1960-80 era", "the nineteen sixty to eighty era"},
		{"300 million km", "three hundred million kilometers"},
		{"scored 10/10", "scored ten out of ten"},
		{"It's 50/50.", "It's fifty-fifty."},
		{"Exhibit No. 162", "Exhibit number one hundred sixty-two"},
		{"the card ending in 8876", "the card ending in eight eight seven six"},
		{"1980-1970 kg", "one thousand nine hundred eighty to one thousand nine hundred seventy kilograms"},
		{"a 1920x1080 screen", "a one thousand nine hundred twenty by one thousand eighty screen"},
	})
}

func TestPeerReadingsChinese(t *testing.T) {
	check(t, normalize.Text, []tcase{
		{"3/16的人", "十六分之三的人"},
		{"下降-1/4", "下降负四分之一"},
		{"2008-08开业", "二零零八年八月开业"},
		{"08/08见", "八月八日见"},
		{"公元前221年", "公元前二二一年"},
		{"约676ad", "约公元六七六年"},
		{"１２３个", "一百二十三个"},
		{"22：58到", "二十二点五十八分到"},
		{"时间00:00:00", "时间零点零分零秒"},
		{"在10:04am", "在上午十点零四分"},
		{"融资$1.5万", "融资一点五万美元"},
		{"价格CNY 100", "价格一百人民币"},
		{"价格A$13.5", "价格十三点五澳元"},
		{"若3<5", "若三小于五"},
		{"中国队2:1", "中国队二比一"},
		{"湖人 98-95", "湖人 九十八比九十五"},
		{"比赛3-5天", "比赛三到五天"},
		{"90后的人", "九零后的人"},
		{"独得300w张", "独得三百万张"},
		{"速度1Gbps", "速度一吉比特每秒"},
		{"机会50/50", "机会五五开"},
		{"尾号8876的卡", "尾号八八七六的卡"},
		{"3天后来", "三天后来"},
		{"误差±0.5", "误差正负零点五"},
		{"2015年08月08日", "二零一五年八月八日"},
		{"第10000100000", "第一百亿零十万"},
	})
}

// Reply reads an expression with no letters near it in the reply's
// language; letters near it still decide.
func TestReplyLanguage(t *testing.T) {
	for _, c := range []struct {
		in   string
		lang normalize.Language
		want string
	}{
		{"1+1=2", normalize.LangChinese, "一加一等于二"},
		{"1+1=2", normalize.LangEnglish, "one plus one equals two"},
		{"1+1=2", normalize.LangUnknown, "one plus one equals two"},
		{"3/4", normalize.LangChinese, "四分之三"},
		{"I have 3 apples", normalize.LangChinese, "I have three apples"},
		{"我有3个", normalize.LangEnglish, "我有三个"},
	} {
		assert.Equal(t, c.want, normalize.Reply(c.in, c.lang), "%q in %v", c.in, c.lang)
	}
	for _, c := range []struct {
		in   string
		want normalize.Language
	}{
		{"Hello world", normalize.LangEnglish},
		{"你好", normalize.LangChinese},
		{"我用iPhone", normalize.LangChinese},
		{"I said 你好 to them", normalize.LangEnglish},
		{"3+4=7", normalize.LangUnknown},
		{"", normalize.LangUnknown},
	} {
		assert.Equal(t, c.want, normalize.Detect(c.in), "%q", c.in)
	}
}
