// Package normalize rewrites what a speech synthesizer cannot read — digits,
// currency and unit symbols, dates, clock times, phone numbers, a few
// operators — as words, for English and Mandarin Chinese (simplified).
//
// API:
//
//	Text(s)        picks English or Chinese readings per expression (see below)
//	Reply(s, lang) as Text, for a piece of a reply in lang (Detect's)
//	English(s)     always uses English readings
//	Chinese(s)     always uses Chinese readings
//	Detect(s)      the language of s by its letters, or LangUnknown
//
// All of them leave every byte that needs no change untouched (punctuation,
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
// decides (a tie between Han and Latin goes to Chinese). An expression with
// no letters anywhere near it ("3.14", "1+1=2" on a line of its own) is
// read in the reply's language: Reply's lang, which the pipeline takes
// from the reply's latest words, or else from the conversation (Detect:
// Chinese when a text has at least as many Han characters as Latin
// words). Text, which knows no reply, reads it in English.
//
// # Numbers
//
//   - Cardinals up to 999 trillion (15 digits) in English, below 10^16 in
//     Chinese; longer digit strings, and strings with a leading zero ("007"),
//     are read digit by digit, except that a number written in thousands
//     groups is a cardinal up to 24 digits (quintillion, sextillion).
//     Thousands separators: "1,234,567" (groups of exactly three after a
//     first group of one to three digits). Full-width digits ("２０１５")
//     are read as the ASCII ones.
//   - English uses no "and" ("one hundred one"). Chinese places 零 per the
//     usual rules ("1005" 一千零五, "10010" 一万零一十, "100010000"
//     一亿零一万; after 零 a count of 万 drops its 一: "10000100000"
//     一百亿零十万) and drops the 一 of 一十 only at the start ("12" 十二,
//     "112" 一百一十二, "150000" 十五万). 2 is read 两 before a measure
//     word (个 人 次 天 年 点 元 块 小时 秒 米 公里 斤 千 万 ...) or a unit
//     other than degrees (两千克), in money (两元) and as an hour (两点), but
//     not after 第 nor in 年级; otherwise 二 (二级, 二楼, 二月).
//     A quantity led by 2 before 千, 万 or 亿 is read 两 as well ("2000"
//     两千, "20000" 两万, "200000000" 两亿), but not before 百 ("200" 二百,
//     the more usual reading), not inside a number ("12000" 一万二千) and
//     not in a rank or label ("第2000" 第二千, "#2000" 二千号).
//   - "No. 162" is number one hundred sixty-two; after "ending in" (a
//     card's last digits) three or more digits are read one by one; in
//     Chinese "300w" is 三百万.
//   - Signs: "-5"/"−5" minus five / 负五, "+5" plus five / 正五, when the sign
//     does not follow a letter or digit. "~5" about five / 约五.
//   - Decimals: "3.14" three point one four / 三点一四; ".5" point five /
//     零点五. The digits after the point are always read one by one.
//   - Ordinals: "1st" "22nd" "3rd" "11th" first, twenty-second, third,
//     eleventh (Chinese: 第一); "第3" → 第三 by the cardinal rule. A suffix
//     that does not fit the number ("1th", "4rd") is read as written: one
//     th.
//   - Fractions a/b (up to six digits each; "a / b" too): "1/2" one half,
//     "3/4" three quarters, "3/16" three sixteenths, "22/3" twenty-two
//     thirds, "142/1" one hundred forty-two over one; 十六分之三. Mixed
//     numbers: "2 1/2" two and a half, "23 4/5" twenty-three and four
//     fifths ("1又1/5" 一又五分之一 follows from the fraction). A sign reads
//     minus / 负, an ordinal suffix after the denominator ("1/4th") is
//     dropped, a unit after it takes the plural ("4 1/2 lbs" four and a
//     half pounds). "24/7" is twenty-four seven, "50/50" fifty-fifty /
//     五五开, "10/10" ten out of ten. A numerator with a leading zero, or a
//     third part ("1/2/3"), makes no fraction.
//   - Ranges: "3-5", "3~5", "3 - 5" between two numbers read "to" / 到,
//     unless "=" follows the right operand ("5-3=2"), which makes it minus /
//     减. "1999-2005" after a year keeps reading years. In Chinese the word
//     after a range's far end ("-", "~", "～", 到, 至) also decides how its
//     near end reads, as a speaker carries it back: "2-3天" 两到三天,
//     "-3~5℃" 零下三到五摄氏度, "2025-2026年" 二零二五到二零二六年.
//   - Ratios: "3:2", "16:9" (not a valid clock time) three to two / 三比二.
//     In Chinese a score after a team or a word about a match is read so
//     whatever joins it ("中国1-2" 中国一比二, "拉齐奥 2/2"), as
//     WeTextProcessing's sport rule does; the teams are a short list of
//     this package's own (its lists are data not copied here).
//   - Between numbers: "<", ">", "<=", ">=", "≤", "≥" is less than (or
//     equal to) / 小于(等于); "*" times / 乘; "±5" plus or minus five /
//     正负五; "2x8 m2" and "25 x 7 m" (a unit after the second number) two
//     by eight square meters / 二乘八平方米, and "1920x1080" (three digits a
//     side) by (a bare "2x8" stays, as NeMo leaves it).
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
//   - it is 1100–2999 and stands alone: only the start of text, a line
//     break or an opening bracket before it, and only the end, a line break
//     or closing punctuation after it ("(1999)", "Founded:\n1999.");
//   - it follows a month name ("November 2026") or precedes an era marker
//     (AD, BC, BCE, CE, A.D., B.C., A.D, B.C; any 1–9999, three digits read
//     in pairs too: "340 A.D" three forty AD);
//   - it starts a range to two digits ("1960-80" nineteen sixty to
//     eighty);
//   - it is the year part of a date.
//
// Everything else is a cardinal: "1999 apples" one thousand nine hundred
// ninety-nine apples. "1990s" / "'80s" are decades: nineteen nineties,
// eighties (一九九零年代, 八十年代).
//
// In Chinese a four-digit integer directly before 年 is read digit by digit
// ("2026年" 二零二六年), and so is any year after 公元, 公元前 or 纪元
// ("公元前202年" 公元前二零二年) or before ad / bc ("2334bc"
// 公元前二三三四年); all other numbers before 年 are cardinals ("10年"
// 十年, "2年" 两年) unless zero-padded ("05年" 零五年). A zero-padded
// month or day drops its zero ("08月08日" 八月八日), and two digits before
// 后 name a generation ("90后" 九零后; not "3天后来").
//
// # Dates and times
//
//   - "2026-11-30", "2026/11/30", "2026.11.30" (validated) → November
//     thirtieth, twenty twenty-six / 二零二六年十一月三十日. "11/30/2026",
//     "11-30-2026" and "11.30.2026" are month first unless the first number
//     exceeds 12; then they are day first and read so: "30/11/2026" the
//     thirtieth of November, twenty twenty-six. English reads a two-digit
//     year after month and day ("11/17/05" November seventeenth, zero
//     five); Chinese reads it first ("12/2/3" 一二年二月三日).
//   - Month names in any case, full or short ("jan", "JAN.", "Sept",
//     "july"; but a lowercase "may" or "mar" before a number is a verb):
//     before the day ("November 30", "jan. 15 2020", "Jan-15-2020") →
//     November thirtieth, January fifteenth, twenty twenty; after it ("30
//     november 2026", "25th jul", "the 26th May") → the thirtieth of
//     November, twenty twenty-six. "3Q22" the third quarter of twenty-two,
//     "1H23" the first half of twenty-three.
//   - Chinese short dates, as WeTextProcessing reads them: "2008-08",
//     "08/2008" 二零零八年八月; "08.08" 八月八日 (one of the two
//     zero-padded, so "12-25" stays a range); NeMo's "2019·2·10".
//     "2026年11月30日" follows from the number rules. Impossible dates ("2026-13-45", "2026-02-30")
//     are not dates; they fall through to the phone and number rules.
//   - "10:30" ten thirty, "9:05" nine oh five, "10:00" ten o'clock, "15:00"
//     fifteen o'clock (as both suites read it), "00:00" midnight; with
//     seconds every part is named: "10:30:15" ten hours thirty minutes and
//     fifteen seconds. With am/pm ("3pm", "3 p.m.", "10:30 AM", and before
//     am/pm a dot for the colon: "2.30 a.m.") three p m, ten thirty a m (a
//     sentence-final "p.m." keeps its period). Chinese: 十点三十分,
//     十点零五分 (minutes under ten keep 零, as WeTextProcessing's
//     minute.tsv reads them), 十点 (on the hour), 两点 for 2, "00:00:00"
//     零点零分零秒, "22：58" (a full-width colon) 二十二点五十八分; am and pm
//     are 上午 and 下午 before the time (WeTextProcessing's noon.tsv), but
//     12 pm is 中午 and 12 am 凌晨, which those would misname. Minutes are always counted
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
// 3.3.4; a dashed number of four groups may end in one of a single digit
// ("123-123-5678-1"). Four dotted groups of up to three digits are read
// digit by digit with "dot" / 点 ("192.168.1.1", "987.987.0.40"). A
// toll-free number spelled in letters keeps its letters: "1-800-GO-U-HAUL"
// one, eight hundred, GO U HAUL. A bare 11-digit number 1[3-9]xxxxxxxxx (a Chinese mobile) is also
// read digit by digit, and so, in Chinese, is a number of three or more
// digits right after 电话, 拨打, 致电, 热线, 号码, 尾号 or 呼叫 (optionally
// with 是, 为 or a colon between) and before no measure word: "拨打12345"
// 拨打幺二三四五, "急救电话是120" 急救电话是幺二零.
//
// # Currency, percent, units
//
//   - "$12.50" twelve dollars fifty cents (no "and", as NeMo reads money),
//     "$1" one dollar, "$0.99" ninety-nine cents, "€3" three euros, "£2.50"
//     two pounds fifty pence, "$1.5 million"/"$1.5M"/"$1.5 m" one point
//     five million dollars; "¥"/"￥" is yen in English (NeMo) and 元 in
//     Chinese; "₩" won / 韩元. Zeros after the cents are dropped ("$20.500"
//     twenty dollars fifty cents); other amounts with three or more
//     decimals are decimals of the unit, trailing zeros dropped ("$1.2320"
//     one point two three two dollars). Letters before "$" name the dollar:
//     US$, A$/AU$, HK$, NT$, C$/CA$, S$. Codes, after the amount or before
//     it ("100 USD", "CNY1.25", "USD 100"): USD, EUR, GBP, CNY, RMB, JPY,
//     KRW, HKD, AUD, CAD, SGD, TWD; CNY and RMB are yuan / 人民币. A dash
//     between amounts is "to" ("$250-$300"); "/mo", "/yr", "/wk", "/d",
//     "/hr" after an amount (or a quantity) are per month, year, week, day,
//     hour ("$20/mo"), as a unit after the slash is per that unit ("12/kg"
//     twelve per kilogram).
//     Chinese: 十二点五美元 (trailing zeros dropped), 三欧元, 一英镑,
//     "¥100" 一百元, "$5M" 五百万美元, "$1.5万" 一点五万美元; "100元" is
//     just the number.
//   - "45%" forty-five percent / 百分之四十五, "12.5%" 百分之十二点五, "100%"
//     百分之百.
//   - Units after a number, glued or after one space, matched longest
//     first and only when no letter or digit follows: km m cm mm kg g mg lb
//     lbs oz mi ft L ml mL ms sec min mins h hr hrs Hz kHz MHz GHz W kW kWh
//     V mAh KB kB MB GB TB Mbps Gbps mbps kbps km/h kph mph m/s m² km² m³
//     cm² mm² km³ cm³ m2 m3 μm KG °C °F ℃ ℉ °. Exactly "1" takes the
//     singular ("1 km" one kilometer); a scale word may come between ("100
//     million kg"). Chinese readings: 公里, 米, 千克, 摄氏度, 兆字节, ...; a
//     speed reads its "per" first, as WeTextProcessing does ("10km/h"
//     每小时十公里), a data rate does not (一吉比特每秒); negative
//     temperatures are 零下. Chinese unit words
//     ("5公里") need nothing but the number.
//   - An address: a house number of three or four digits before a street's
//     name and an abbreviated suffix reads in pairs, and the suffix is
//     spelled out: "1428 Elm St." fourteen twenty-eight Elm Street (St,
//     Ave, Rd, Blvd, Expy, Ln, Dr, Ct, Hwy, Pkwy).
//
// # Symbols
//
// "&" and / 和, "@" at / 艾特, "=" equals / 等于, "+" plus / 加 between
// operands (spaced on both sides or on neither: "a + b", "1+1"; never "C++"
// or "A+"), "×" times / 乘, "÷" divided by / 除以, "#3" number three / 三号.
// Doubled or combined operators ("==", "&&", "=>") are left alone.
//
// # Where the peer suites read otherwise
//
// WeTextProcessing (the normalizer of MOSS-TTS-Nano's reference pipeline)
// and NeMo text processing publish their test cases; suite_test.go reads
// them from ../shared/data/normalize and holds every category to a floor.
// Where the two suites disagree with each other, or with a reading this
// package keeps on purpose, the reading here is kept, asserted in that
// test, for these reasons:
//   - Chinese minutes under ten keep 零 ("03:04" 三点零四分), as
//     WeTextProcessing reads them; NeMo drops it. am/pm become 上午/下午
//     (WeTextProcessing); NeMo keeps the Latin letters.
//   - 号 stays 号 ("6号"): it is what the text says and how it is spoken;
//     NeMo rewrites it to 日.
//   - Two digits before 年 count years ("50年" 五十年); NeMo reads a year.
//   - A temperature below zero is 零下 (NeMo: 负); ¥ is 元 (NeMo: 人民币).
//   - 110 is read as a number to dial only where a word such as 拨打 cues
//     it (see "Phone numbers"); WeTextProcessing reads every bare 110 so.
//   - A sign is "minus" (WeTextProcessing's decimal test and NeMo; its
//     cardinal test says "negative"); "1000" is one thousand (NeMo; the
//     WeTextProcessing cardinal test drops "one").
//   - A month written first is read first ("jan. 5" January fifth,
//     "2012-01-05" January fifth, twenty twelve), as NeMo does;
//     WeTextProcessing reads the day first.
//   - Zero after the point is "zero" (NeMo; WeTextProcessing: "oh"), and an
//     amount of dollars is dollars and cents ("$12.05" twelve dollars five
//     cents, NeMo; WeTextProcessing: twelve point oh five dollars).
//   - A number is a cardinal ("13000" thirteen thousand), as NeMo reads
//     "$15000"; its cardinal test reads two of them digit by digit.
//   - A dash between numbers is "to" ("2-5"), as NeMo reads "1980-1970
//     kg"; its range test elsewhere leaves the dash unread.
//
// # Out of scope
//
// The suites also test what a normalizer for written text does and a
// voice assistant's replies do not need, or must not get; this package
// decides against it:
//   - URLs and e-mail addresses are not spelled out ("dot com", "slash"):
//     a reply that reads a link aloud serves no listener (the assistant is
//     asked for plain spoken language), so URLs are copied verbatim and of
//     an address only "@" is read, "at".
//   - Roman numerals ("Henry III", "Chapter IV") are left for the
//     synthesizer: "I" and "V" are words and initials far more often than
//     numbers in a reply.
//   - Abbreviations of titles and places ("Dr.", "Mrs.", "Mt.", "Rev.",
//     US state codes) are not expanded: without a dictionary of names they
//     are guesses ("St." is Saint or Street); only a street's suffix after
//     a house number is (see "Units").
//   - Filler words (呃, 啊), 儿化 and traditional characters are the
//     speaker's, not the reply's: the reply is written text and is spoken
//     as written. Acronym casing ("ufo" → "UFO"), OOV tagging and symbols
//     spelled out on their own ("#", "$" with no number, "f++") are left
//     to the synthesizer as well.
package normalize
