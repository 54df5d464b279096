package normalize_test

// Dates, times and years.

import (
	"testing"

	"github.com/voiceassistant/voice/tts/normalize"
)

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
