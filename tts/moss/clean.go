package moss

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// cleanText is upstream's robust normalizer, normalize_tts_text
// (OpenMOSS/MOSS-TTS-Nano tts_robust_normalizer_single_script.py:98),
// which the reference runtime runs over every request: it drops control
// characters and Markdown line markers, turns arrows, brackets, dash runs
// and repeated punctuation into plain punctuation, fixes the spacing
// around CJK text, keeps URLs, e-mail addresses, mentions, hashtags and
// file names as they are, and ends the text with sentence punctuation
// ("。" where it has none, English included). It reads no numbers:
// tts/normalize, which runs first, stands in for upstream's
// WeTextProcessing pass.
//
// The patterns are Python's, whose \s, \d and \w are Unicode classes
// (pyspace, \p{Nd} and isWord here); those with lookaround, which RE2
// lacks, are matched by hand. Line numbers in the comments below are the
// upstream file's.
func cleanText(s string) string {
	s = baseCleanup(s)
	s = markdownAndLines(s)
	s = arrowRE.ReplaceAllString(s, "，")
	s, spans := protectSpans(s)
	s = visibleUnderscores(s)
	s = normalizeSpaces(s)
	s = structuralPunctuation(s)
	s = repeatedPunctuation(s)
	s = normalizeSpaces(s)
	for i, span := range spans {
		s = strings.ReplaceAll(s, placeholder(i), span)
	}
	// Upstream ends each line (:293), but no line break survives
	// markdownAndLines.
	return ensureTerminal(trimSpace(s))
}

// pyspace is the class Python's \s matches in a str pattern, the runes
// str.isspace accepts: unicode.IsSpace's and U+001C..U+001F.
const pyspace = `\t\n\v\f\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`

func isSpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

func trimSpace(s string) string { return strings.TrimFunc(s, isSpace) }

// isWord is Python's \w.
func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func isASCIIAlnum(r rune) bool { return isASCIILetter(r) || r >= '0' && r <= '9' }

func isASCIIWord(r rune) bool { return r == '_' || isASCIIAlnum(r) }

func isDigit(r rune) bool { return unicode.Is(unicode.Nd, r) }

// isHanKana is the normalizer's _CJK (:59): Han and kana; Hangul is
// spaced like Latin text.
func isHanKana(r rune) bool {
	return r >= 0x3400 && r <= 0x4dbf || r >= 0x4e00 && r <= 0x9fff || r >= 0x3040 && r <= 0x30ff
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// afterASCIIWord reports whether s[:i] ends with [A-Za-z0-9_], the
// lookbehind most protected patterns start with.
func afterASCIIWord(s string, i int) bool { return i > 0 && isASCIIWord(rune(s[i-1])) }

// runEnd returns the end of the run of ASCII bytes in class from i.
func runEnd(s string, i int, class string) int {
	for i < len(s) && strings.IndexByte(class, s[i]) >= 0 {
		i++
	}
	return i
}

const (
	asciiAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	asciiWord  = asciiAlnum + "_"
	// fileChars is [A-Za-z0-9._/+:-], the characters of a file name or
	// version (_FILELIKE_RE, _LATINISH).
	fileChars = asciiAlnum + "._/+:-"
)

var (
	mdLinkRE = regexp.MustCompile(`\[([^\[\]]+?)\]\((https?://[^)` + pyspace + `]+)\)`)
	// Heading, quote, bullet and numbered-list markers (:142).
	lineMarkerREs = []*regexp.Regexp{
		regexp.MustCompile(`^#{1,6}[` + pyspace + `]+`),
		regexp.MustCompile(`^>[` + pyspace + `]+`),
		regexp.MustCompile(`^[-*+][` + pyspace + `]+`),
		regexp.MustCompile(`^\p{Nd}+[.)][` + pyspace + `]+`),
	}
	arrowRE = regexp.MustCompile(`[` + pyspace + `]*(?:<[-=]+>|[-=]+>|<[-=]+|[→←↔⇒⇐⇔⟶⟵⟷⟹⟸⟺↦↤↪↩])[` + pyspace + `]*`)
	urlRE   = regexp.MustCompile(`https?://[^` + pyspace + `，。！？；、）】》〉」』]+`)
	protRE  = regexp.MustCompile(`___PROT\p{Nd}+___`)
)

// baseCleanup (:120) turns CR and U+3000 into a newline and a space and
// drops the characters of category C (control, format, private use,
// unassigned) other than tab and newline.
func baseCleanup(s string) string {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u3000", " ").Replace(s)
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z) {
			return r
		}
		return -1
	}, s)
}

// markdownAndLines (:132) keeps a Markdown link's text and URL, drops
// heading, quote and list markers, and joins the lines, each but the last
// ended with punctuation.
func markdownAndLines(s string) string {
	s = mdLinkRE.ReplaceAllString(s, "${1} ${2}")
	// The line breaks of Python's str.splitlines that baseCleanup keeps.
	raw := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\u2028' || r == '\u2029' })
	var lines []string
	for _, line := range raw {
		if line = trimSpace(line); line == "" {
			continue
		}
		for _, re := range lineMarkerREs {
			line = re.ReplaceAllString(line, "")
		}
		if len(lines) > 0 {
			lines[len(lines)-1] = ensureTerminal(lines[len(lines)-1])
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "")
}

// protectSpans (:159) replaces what must be read as written with
// placeholders, one pattern after another, so that the rules that follow
// leave it alone. A later pattern can take in an earlier placeholder (a
// hashtag running into a URL); that one is then not restored, as upstream.
func protectSpans(s string) (string, []string) {
	var spans []string
	protect := func(m string) string {
		spans = append(spans, m)
		return placeholder(len(spans) - 1)
	}
	s = urlRE.ReplaceAllStringFunc(s, protect)
	for _, match := range []func(string, int) int{emailAt, mentionAt, redditAt, hashtagAt, dotTokenAt, fileLikeAt} {
		s = replaceMatches(s, match, protect)
	}
	return s, spans
}

func placeholder(i int) string { return "___PROT" + strconv.Itoa(i) + "___" }

// replaceMatches is Python's re.sub for a pattern matched by hand: match
// returns the end of the match starting at byte i, or -1.
func replaceMatches(s string, match func(s string, i int) int, repl func(string) string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if j := match(s, i); j > i {
			b.WriteString(s[last:i])
			b.WriteString(repl(s[i:j]))
			i, last = j, j
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// emailAt matches _EMAIL_RE (:67):
// (?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}(?![\w.-]).
// The domain must run to its last dot and two or more letters: the
// lookahead rejects any shorter match.
func emailAt(s string, i int) int {
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWord(r) || strings.ContainsRune(".+-", r) {
			return -1
		}
	}
	at := runEnd(s, i, asciiWord+".%+-")
	if at == i || at == len(s) || s[at] != '@' {
		return -1
	}
	end := runEnd(s, at+1, asciiAlnum+".-")
	domain := s[at+1 : end]
	dot := strings.LastIndexByte(domain, '.')
	if dot < 1 || len(domain)-dot-1 < 2 || strings.IndexFunc(domain[dot+1:], func(r rune) bool { return !isASCIILetter(r) }) >= 0 {
		return -1
	}
	if end < len(s) && isWord(firstRune(s[end:])) {
		return -1
	}
	return end
}

// mentionAt matches _MENTION_RE (:68): (?<![A-Za-z0-9_])@[A-Za-z0-9_]{1,32}.
func mentionAt(s string, i int) int {
	if s[i] != '@' || afterASCIIWord(s, i) {
		return -1
	}
	end := min(runEnd(s, i+1, asciiWord), i+1+32)
	if end == i+1 {
		return -1
	}
	return end
}

// redditAt matches _REDDIT_RE (:69): (?<![A-Za-z0-9_])(?:u|r)/[A-Za-z0-9_]+.
func redditAt(s string, i int) int {
	if s[i] != 'u' && s[i] != 'r' || afterASCIIWord(s, i) || !strings.HasPrefix(s[i+1:], "/") {
		return -1
	}
	end := runEnd(s, i+2, asciiWord)
	if end == i+2 {
		return -1
	}
	return end
}

// hashtagAt matches _HASHTAG_RE (:70): (?<![A-Za-z0-9_])#(?!\s)[^\s#]+.
func hashtagAt(s string, i int) int {
	if s[i] != '#' || afterASCIIWord(s, i) {
		return -1
	}
	n := strings.IndexFunc(s[i+1:], func(r rune) bool { return r == '#' || isSpace(r) })
	if n < 0 {
		n = len(s) - i - 1
	}
	if n == 0 {
		return -1
	}
	return i + 1 + n
}

// dotTokenAt matches _DOT_TOKEN_RE (:73), a leading-dot name such as .env:
// (?<![A-Za-z0-9_])\.(?=[A-Za-z0-9._-]*[A-Za-z0-9])[A-Za-z0-9._-]+.
func dotTokenAt(s string, i int) int {
	if s[i] != '.' || afterASCIIWord(s, i) {
		return -1
	}
	end := runEnd(s, i+1, asciiAlnum+"._-")
	if strings.IndexAny(s[i+1:end], asciiAlnum) < 0 {
		return -1
	}
	return end
}

// fileLikeAt matches _FILELIKE_RE (:78), a file name, path or version:
// a run of [A-Za-z0-9._/+:-] from an alphanumeric, not after
// [A-Za-z0-9_], holding a letter and one of ./+:-, backed off until no
// [A-Za-z0-9_] follows.
func fileLikeAt(s string, i int) int {
	if !isASCIIAlnum(rune(s[i])) || afterASCIIWord(s, i) {
		return -1
	}
	end := runEnd(s, i, fileChars)
	if strings.IndexFunc(s[i:end], isASCIILetter) < 0 || strings.IndexAny(s[i:end], "./+:-") < 0 {
		return -1
	}
	for end > i && end < len(s) && isASCIIWord(rune(s[end])) {
		end--
	}
	if end == i {
		return -1
	}
	return end
}

// protAt returns the end of the placeholder at s[i:], or -1.
func protAt(s string, i int) int {
	if !strings.HasPrefix(s[i:], "___PROT") {
		return -1
	}
	if loc := protRE.FindStringIndex(s[i:]); loc != nil && loc[0] == 0 {
		return i + loc[1]
	}
	return -1
}

// visibleUnderscores (:187) reads an underscore outside the protected
// spans as a space.
func visibleUnderscores(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range protRE.FindAllStringIndex(s, -1) {
		b.WriteString(strings.ReplaceAll(s[last:m[0]], "_", " "))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(strings.ReplaceAll(s[last:], "_", " "))
	return b.String()
}

var (
	blanksRE         = regexp.MustCompile(`[ \t\r\f\v]+`)
	doubleSpaceRE    = regexp.MustCompile(` {2,}`)
	beforeCJKPunctRE = regexp.MustCompile(`[` + pyspace + `]+([，。！？；：、”’」』】）》])`)
	afterOpeningRE   = regexp.MustCompile(`([（【「『《“‘])[` + pyspace + `]+`)
	afterCJKPunctRE  = regexp.MustCompile(`([，。！？；：、])[` + pyspace + `]*`)
	beforePunctRE    = regexp.MustCompile(`[` + pyspace + `]+([,.;!?])`)
)

// normalizeSpaces (:203) joins Han and kana text and the digits next to
// it, spaces it from Latin words and protected spans, and drops the spaces
// around CJK punctuation and before ASCII punctuation.
func normalizeSpaces(s string) string {
	s = blanksRE.ReplaceAllString(s, " ")
	s = dropSpaces(s, isHanKana, isHanKana)
	s = dropSpaces(s, isHanKana, isDigit)
	s = dropSpaces(s, isDigit, isHanKana)
	s = spaceAfterHanKana(s)
	s = spaceBeforeHanKana(s)
	s = doubleSpaceRE.ReplaceAllString(s, " ")
	s = beforeCJKPunctRE.ReplaceAllString(s, "$1")
	s = afterOpeningRE.ReplaceAllString(s, "$1")
	s = afterCJKPunctRE.ReplaceAllString(s, "$1")
	s = beforePunctRE.ReplaceAllString(s, "$1")
	return trimSpace(doubleSpaceRE.ReplaceAllString(s, " "))
}

// dropSpaces deletes each run of spaces between a rune before accepts and
// one after accepts: Python's (X)\s+(?=Y) replaced by \1.
func dropSpaces(s string, before, after func(rune) bool) string {
	var b strings.Builder
	prev := utf8.RuneError
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isSpace(r) || !before(prev) {
			b.WriteString(s[i : i+n])
			prev, i = r, i+n
			continue
		}
		end := len(s) - len(strings.TrimLeftFunc(s[i:], isSpace))
		if end == len(s) || !after(firstRune(s[end:])) {
			b.WriteString(s[i:end])
			prev = ' '
		}
		i = end
	}
	return b.String()
}

// latinishAt reports whether _LATINISH (:87) matches at s[i:]: a
// placeholder, or a run of file-name characters from an alphanumeric that
// holds a letter.
func latinishAt(s string, i int) bool {
	if i == len(s) {
		return false
	}
	if protAt(s, i) > 0 {
		return true
	}
	return isASCIIAlnum(rune(s[i])) && strings.IndexFunc(s[i:runEnd(s, i, fileChars)], isASCIILetter) >= 0
}

// spaceAfterHanKana puts a space between Han or kana and a Latin word or
// protected span after it (:215).
func spaceAfterHanKana(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		if i += n; isHanKana(r) && latinishAt(s, i) {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// spaceBeforeHanKana puts a space between a Latin word or protected span
// and Han or kana after it (:216).
func spaceBeforeHanKana(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		end := protAt(s, i)
		if end < 0 && isASCIIAlnum(rune(s[i])) {
			// No later start in the run can match if this one does not.
			end = runEnd(s, i, fileChars)
			if strings.IndexFunc(s[i:end], isASCIILetter) < 0 {
				b.WriteString(s[i:end])
				i = end
				continue
			}
		}
		if end < 0 || end == len(s) || !isHanKana(firstRune(s[end:])) {
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		b.WriteString(s[i:end])
		b.WriteByte(' ')
		i = end
	}
	return b.String()
}

var (
	squareRE  = regexp.MustCompile(`\[[` + pyspace + `]*([^\[\]]+?)[` + pyspace + `]*\]`)
	curlyRE   = regexp.MustCompile(`\{[` + pyspace + `]*([^{}]+?)[` + pyspace + `]*\}`)
	cornerRE  = regexp.MustCompile(`[【〖『「][` + pyspace + `]*([^】〗』」]+?)[` + pyspace + `]*[】〗』」]`)
	dashRunRE = regexp.MustCompile(`[` + pyspace + `]*[—–―-]{2,}[` + pyspace + `]*`)
)

// structuralPunctuation (:232) quotes what brackets enclose, unwraps a
// title that stands alone, and reads arrows as a comma and dash runs as a
// full stop.
func structuralPunctuation(s string) string {
	for _, re := range []*regexp.Regexp{squareRE, curlyRE, cornerRE} {
		s = re.ReplaceAllString(s, `"${1}"`)
	}
	s = standaloneTitles(s)
	s = arrowRE.ReplaceAllString(s, "，")
	return dashRunRE.ReplaceAllString(s, "。")
}

const sentencePunct = "。！？!?；;"

// standaloneTitles drops the 《》 of a title that starts the text or a
// sentence and is followed by the end, punctuation, a dash run or a
// protected span (:240); a title inside a sentence keeps them.
func standaloneTitles(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		open := -1
		switch {
		case i == 0 && r == '《':
			open = 0
		case strings.ContainsRune(sentencePunct, r):
			j := i + n + len(s[i+n:]) - len(strings.TrimLeftFunc(s[i+n:], isSpace))
			if strings.HasPrefix(s[j:], "《") {
				open = j
			}
		}
		if open >= 0 {
			title := open + len("《")
			if k := strings.Index(s[title:], "》"); k > 0 && standsAlone(s, title+k+len("》")) {
				b.WriteString(s[last:open])
				b.WriteString(s[title : title+k])
				i = title + k + len("》")
				last = i
				continue
			}
		}
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// standsAlone is the lookahead after a standalone title's 》.
func standsAlone(s string, i int) bool {
	rest := strings.TrimLeftFunc(s[i:], isSpace)
	if rest == "" || protAt(rest, 0) > 0 || strings.ContainsRune(sentencePunct+"，,", firstRune(rest)) {
		return true
	}
	dashes := 0
	for _, r := range rest {
		if !strings.ContainsRune("—–―-", r) {
			break
		}
		dashes++
	}
	return dashes >= 2
}

var (
	ellipsisRE = regexp.MustCompile(`\.{3,}|…{2,}`)
	repeatREs  = []struct {
		re   *regexp.Regexp
		repl string
	}{
		{regexp.MustCompile(`[。．]{2,}`), "。"},
		{regexp.MustCompile(`[，,]{2,}`), "，"},
		{regexp.MustCompile(`[!！]{2,}`), "！"},
		{regexp.MustCompile(`[?？]{2,}`), "？"},
	}
	mixedRE = regexp.MustCompile(`[!?！？]{2,}`)
)

// repeatedPunctuation (:255) reads an ellipsis as a full stop and
// collapses repeated punctuation, a mix of ? and ! into "？！".
func repeatedPunctuation(s string) string {
	s = ellipsisRE.ReplaceAllString(s, "。")
	for _, r := range repeatREs {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return mixedRE.ReplaceAllStringFunc(s, func(m string) string {
		q, e := strings.ContainsAny(m, "?？"), strings.ContainsAny(m, "!！")
		switch {
		case q && e:
			return "？！"
		case q:
			return "？"
		}
		return "！"
	})
}

// trailingClosers are the closing quotes and brackets ensureTerminal
// looks past (:91).
const trailingClosers = "\"')]}）】》〉」』”’"

// ensureTerminal (:278) appends "。" unless s, before its closing quotes
// and brackets, ends with punctuation (Unicode category P).
func ensureTerminal(s string) string {
	if s == "" {
		return s
	}
	t := strings.TrimRight(strings.TrimRightFunc(s, isSpace), trailingClosers)
	if r, _ := utf8.DecodeLastRuneInString(t); t != "" && unicode.IsPunct(r) {
		return s
	}
	return s + "。"
}
