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
