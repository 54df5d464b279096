// Package normalize rewrites what a speech synthesizer cannot read — digits,
// currency and unit symbols, dates, clock times, phone numbers, a few
// operators — as words, for English and Mandarin Chinese (simplified).
//
// API:
//
//	Text(s)    picks English or Chinese readings per expression (see below)
//	English(s) always uses English readings
//	Chinese(s) always uses Chinese readings
//
// All three leave every byte that needs no change untouched (punctuation,
// spacing, line breaks), never panic, and always return valid UTF-8 (invalid
// input bytes become U+FFFD). Text without digits or the trigger symbols is
// returned as is without allocating. URLs (scheme:// or www.) are copied
// verbatim.
//
// # Language choice (Text)
//
// Each expression (a number with its unit, a date, a symbol, ...) is read
// the Chinese way when the whitespace-delimited run around it contains a CJK
// character (Han, kana, CJK or full-width punctuation): "我有3个apple" →
// "我有三个apple", "我的iPhone15" → "我的iPhone十五". Otherwise Latin letters
// in that run mean English. Otherwise the nearest letter on either side
// decides (a tie between Han and Latin goes to Chinese), and an expression
// with no letters anywhere near it ("3.14") is read in English.
//
// # Numbers
//
//   - Cardinals up to 999 trillion (15 digits) in English, below 10^16 in
//     Chinese; longer digit strings, and strings with a leading zero ("007"),
//     are read digit by digit. Thousands separators: "1,234,567" (groups of
//     exactly three after a first group of one to three digits).
//   - English uses no "and" ("one hundred one"). Chinese places 零 per the
//     usual rules ("1005" 一千零五, "10010" 一万零一十, "100010000"
//     一亿零一万) and drops the 一 of 一十 only at the start ("12" 十二,
//     "112" 一百一十二, "150000" 十五万). 2 is read 两 before a measure
//     word (个 人 次 天 年 点 元 块 小时 秒 米 公里 斤 千 万 ...) or a unit
//     other than degrees (两千克), in money (两元) and as an hour (两点), but
//     not after 第 nor in 年级; otherwise 二 (二级, 二楼, 二月).
//     A quantity led by 2 before 千, 万 or 亿 is read 两 as well ("2000"
//     两千, "20000" 两万, "200000000" 两亿), but not before 百 ("200" 二百,
//     the more usual reading), not inside a number ("12000" 一万二千) and
//     not in a rank or label ("第2000" 第二千, "#2000" 二千号).
//   - Signs: "-5"/"−5" minus five / 负五, "+5" plus five / 正五, when the sign
//     does not follow a letter or digit. "~5" about five / 约五.
//   - Decimals: "3.14" three point one four / 三点一四; ".5" point five /
//     零点五. The digits after the point are always read one by one.
//   - Ordinals: "1st" "22nd" "3rd" "11th" first, twenty-second, third,
//     eleventh (Chinese: 第一); "第3" → 第三 by the cardinal rule.
//   - Fractions a/b with 1 ≤ a < b ≤ 10: "1/2" one half, "3/4" three
//     quarters, "2/3" two thirds; 二分之一. Other a/b keep the slash.
//   - Ranges: "3-5", "3~5", "3 - 5" between two numbers read "to" / 到,
//     unless "=" follows the right operand ("5-3=2"), which makes it minus /
//     减. "1999-2005" after a year keeps reading years. In Chinese the word
//     after a range's far end ("-", "~", "～", 到, 至) also decides how its
//     near end reads, as a speaker carries it back: "2-3天" 两到三天,
//     "-3~5℃" 零下三到五摄氏度, "2025-2026年" 二零二五到二零二六年.
//   - Ratios: "3:2", "16:9" (not a valid clock time) three to two / 三比二.
//   - Digits glued after Latin letters ("mp3", "H2O", "A4", "COVID19") are
//     read as a cardinal when at most 4 digits, else digit by digit, with
//     their decimals ("PM2.5" PM two point five / PM二点五) or dotted parts
//     ("Python3.11.2" as a version); "V8" is "V eight". Hex literals "0x1F" are left alone. English words
//     replacing text glued to a letter or digit get a separating space
//     ("3D" three D, "R&D" R and D).
//   - Only ASCII digits are read; full-width digits (０１２) are left as is.
//
// # Versions and dotted numbers
//
// "v1.2.3" is "version one point two point three" (版本一点二点三), each
// component a cardinal ("v1.10" version one point ten); a lowercase "v"
// needs no dot ("v2" version two), an uppercase "V" does ("V8" stays an
// engine); a preceding "version"/"版本" is not repeated. A bare number with two or more dots ("1.2.3") is read the same
// way without "version". Four components each ≤ 255 ("192.168.1.1") are an
// IP address, read digit by digit with "dot" / 点. A number with a single
// dot ("1.5", "3.11") is always a decimal: it cannot be told apart from a
// two-part version.
//
// # English years
//
// A bare four-digit integer (no sign, separator, decimal or unit) is read
// as a year ("nineteen ninety-nine", "two thousand five", "twenty ten",
// "nineteen oh five", "nineteen hundred") when:
//   - it is 1100–2099 and the word before it is in, since, by, year, until,
//     till, from, before, after, circa, during, copyright, spring, summer,
//     autumn, fall, winter (or © precedes it), or to/and/through/or right
//     after another year ("from 1999 to 2005");
//   - it is 1100–2099 and starts a range to another such number
//     ("1999-2005"), or follows a year across a range dash;
//   - it is 1100–2099 and stands alone: only the start of text, a line
//     break or an opening bracket before it, and only the end, a line break
//     or closing punctuation after it ("(1999)", "Founded:\n1999.");
//   - it follows a month name ("November 2026") or precedes an era marker
//     (AD, BC, BCE, CE, A.D., B.C.; any 1000–9999);
//   - it is the year part of a date.
//
// Everything else is a cardinal: "1999 apples" one thousand nine hundred
// ninety-nine apples. "1990s" / "'80s" are decades: nineteen nineties,
// eighties (一九九零年代, 八十年代).
//
// In Chinese a four-digit integer directly before 年 is read digit by digit
// ("2026年" 二零二六年); all other numbers before 年 are cardinals ("10年"
// 十年, "2年" 两年).
//
// # Dates and times
//
//   - "2026-11-30", "2026/11/30", "2026.11.30" (validated) → November
//     thirtieth, twenty twenty-six / 二零二六年十一月三十日. "11/30/2026" and
//     "11-30-2026" are month first unless the first number exceeds 12
//     ("30/11/2026" is day first). "November 30", "Nov. 30th, 2026" →
//     November thirtieth, twenty twenty-six; "30 November 2026" → the
//     thirtieth of November, twenty twenty-six. "2026年11月30日" follows
//     from the number rules. Impossible dates ("2026-13-45", "2026-02-30")
//     are not dates; they fall through to the phone and number rules.
//   - "10:30" ten thirty, "9:05" nine oh five, "10:00" ten o'clock, "15:00"
//     fifteen hundred, "00:00" midnight, "10:30:15" ten thirty and fifteen
//     seconds; with am/pm ("3pm", "3 p.m.", "10:30 AM") three p m, ten
//     thirty a m (a sentence-final "p.m." keeps its period). Chinese:
//     十点三十分, 十点零五分, 十点 (on the hour), 两点 for 2, 下午三点 with
//     上午/下午/晚上/中午/凌晨 for am/pm. Minutes are always counted
//     ("3:30" 三点三十分, not 三点半) and a 24-hour time stays on the
//     24-hour clock ("15:30" 十五点三十分, not 下午三点半), the way times
//     are announced: one reading per written time, with nothing added that
//     could clash with a 下午 the reply already says.
//
// # Phone numbers
//
// Digit groups joined by "-", " " or "." (optionally "+country" and
// "(area)") with 7–15 digits in all are read digit by digit, groups joined
// by ", " / "，"; in Chinese 1 is 幺. To keep ordinary numbers out, two
// groups need a dash and the shape 3-4 or 3/4-4..8 (not 4-4, a year range);
// space-only groups need three or more groups with a first group of at most
// three digits and not a thousands layout ("10 000 000"); dots only as
// 3.3.4. A bare 11-digit number 1[3-9]xxxxxxxxx (a Chinese mobile) is also
// read digit by digit, and so, in Chinese, is a number of three or more
// digits right after 电话, 拨打, 致电, 热线, 号码, 尾号 or 呼叫 (optionally
// with 是, 为 or a colon between) and before no measure word: "拨打12345"
// 拨打幺二三四五, "急救电话是120" 急救电话是幺二零.
//
// # Currency, percent, units
//
//   - "$12.50" twelve dollars and fifty cents, "$1" one dollar, "$0.99"
//     ninety-nine cents, "€3" three euros, "£2.50" two pounds and fifty
//     pence, "$1.5 million"/"$1.5M" one point five million dollars;
//     "¥"/"￥" is yuan in English (it cannot be told from yen). Three or more
//     decimals are read as a decimal. Codes after the amount: USD, EUR, GBP,
//     CNY, RMB, JPY, HKD ("100 USD" one hundred US dollars).
//     Chinese: 十二点五美元 (trailing zeros dropped), 三欧元, 一英镑,
//     "¥100" 一百元, "$5M" 五百万美元; "100元" is just the number.
//   - "45%" forty-five percent / 百分之四十五, "12.5%" 百分之十二点五, "100%"
//     百分之百.
//   - Units after a number, glued or after one space, matched longest
//     first and only when no letter or digit follows: km m cm mm kg g mg lb
//     lbs oz mi ft L ml mL ms sec min mins h hr hrs Hz kHz MHz GHz W kW kWh
//     V mAh KB kB MB GB TB Mbps Gbps km/h kph mph m/s m² km² m³ °C °F ℃ ℉ °.
//     Exactly "1" takes the singular ("1 km" one kilometer). Chinese
//     readings: 公里, 米, 千克, 摄氏度, 兆字节, ...; negative temperatures are
//     零下. Chinese unit words ("5公里") need nothing but the number.
//
// # Symbols
//
// "&" and / 和, "@" at / 艾特, "=" equals / 等于, "+" plus / 加 between
// operands (spaced on both sides or on neither: "a + b", "1+1"; never "C++"
// or "A+"), "×" times / 乘, "÷" divided by / 除以, "#3" number three / 三号.
// Doubled or combined operators ("==", "&&", "=>", "<=") are left alone.
package normalize
