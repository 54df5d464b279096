package normalize_test

// Phone numbers and versions.

import (
	"testing"

	"github.com/voiceassistant/voice/tts/normalize"
)

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
