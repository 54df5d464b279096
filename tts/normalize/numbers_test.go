package normalize_test

// Cardinals, ordinals, decimals, percentages, money and units.

import (
	"testing"

	"github.com/voiceassistant/voice/tts/normalize"
)

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
