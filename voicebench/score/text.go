package score

import (
	"errors"
	"regexp"
	"strings"
	"unicode"

	"github.com/voiceassistant/voice/voicebench/score/internal/langdetect"
)

// wordRe is Python's Unicode \w+, which IFEval's count_words uses.
var wordRe = regexp.MustCompile(`[\p{L}\p{N}_]+`)

func countWords(text string) int { return len(wordRe.FindAllStringIndex(text, -1)) }

// treebankRule is one substitution of NLTK's NLTKWordTokenizer (the
// tokenizer behind word_tokenize). Python's \w and \d are Unicode-aware, so
// they are spelled out as classes here.
type treebankRule struct {
	re   *regexp.Regexp
	repl string
}

func tb(pattern, repl string) treebankRule {
	return treebankRule{regexp.MustCompile(pattern), repl}
}

var (
	tbStartingQuotes = []treebankRule{
		tb("([«“‘„]|[`]+)", " $1 "),
		tb(`^"`, "``"),
		tb("(``)", " $1 "),
		tb(`([ (\[{<])("|'')`, "$1 `` "),
	}
	tbPunctuation = []treebankRule{
		tb(`([^.])(\.)([\]\)}>"'»”’ ]*)\s*$`, "$1 $2 $3 "),
		tb(`([:,])([^\p{Nd}])`, " $1 $2"),
		tb(`([:,])$`, " $1 "),
		tb(`\.{2,}`, " $0 "),
		tb(`[;@#$%&]`, " $0 "),
		tb(`([^.])(\.)([\]\)}>"']*)\s*$`, "$1 $2$3 "),
		tb(`[?!]`, " $0 "),
		tb(`([^'])' `, "$1 ' "),
		tb(`[*]`, " $0 "),
		tb(`[\]\[\(\)\{\}<>]`, " $0 "),
		tb(`--`, " -- "),
	}
	tbEndingQuotes = []treebankRule{
		tb("([»”’])", " $1 "),
		tb(`''`, " '' "),
		tb(`"`, " '' "),
		tb(`([^' ])('[sS]|'[mM]|'[dD]|') `, "$1 $2 "),
		tb(`([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) `, "$1 $2 "),
	}
	tbContractions = []treebankRule{
		tb(`(?i)\b(can)(not)\b`, " $1 $2 "),
		tb(`(?i)\b(d)('ye)\b`, " $1 $2 "),
		tb(`(?i)\b(gim)(me)\b`, " $1 $2 "),
		tb(`(?i)\b(gon)(na)\b`, " $1 $2 "),
		tb(`(?i)\b(got)(ta)\b`, " $1 $2 "),
		tb(`(?i)\b(lem)(me)\b`, " $1 $2 "),
		tb(`(?i)\b(more)('n)\b`, " $1 $2 "),
		// "(?=\s)" in NLTK: the whitespace is matched and put back.
		tb(`(?i)\b(wan)(na)(\s)`, " $1 $2 $3"),
		tb(`(?i) ('t)(is)\b`, " $1 $2 "),
		tb(`(?i) ('t)(was)\b`, " $1 $2 "),
	}
)

func applyRules(text string, rules []treebankRule) string {
	for _, r := range rules {
		text = r.re.ReplaceAllString(text, r.repl)
	}
	return text
}

// treebankTokenize is NLTKWordTokenizer.tokenize for one sentence.
func treebankTokenize(text string) []string {
	text = applyRules(text, tbStartingQuotes)
	text = splitLoneQuotes(text)
	text = applyRules(text, tbPunctuation)
	text = applyRules(" "+text+" ", tbEndingQuotes)
	text = applyRules(text, tbContractions)
	return strings.Fields(text)
}

// isWordRune is Python's Unicode \w.
func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// splitLoneQuotes is the starting-quote rule (')(?!re|ve|ll|m|t|s|d|n)(\w)\b
// (case-insensitive), written out because RE2 has no look-ahead and its \b
// is ASCII-only: a quote before a one-character word is split off unless the
// character starts a clitic ('m, 't, 's, 'd, 'n).
func splitLoneQuotes(text string) string {
	r := []rune(text)
	var b strings.Builder
	for i, c := range r {
		b.WriteRune(c)
		if c == '\'' && i+1 < len(r) && isWordRune(r[i+1]) && (i+2 == len(r) || !isWordRune(r[i+2])) &&
			!strings.ContainsRune("mtsdnMTSDN", r[i+1]) {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// wordTokenize is NLTK's word_tokenize: Punkt sentences, then the Treebank
// rules on each.
func wordTokenize(text string) ([]string, error) {
	sents, err := splitSentences(text)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range sents {
		out = append(out, treebankTokenize(s)...)
	}
	return out, nil
}

// isUpper and isLower are Python's str.isupper and str.islower: at least one
// cased letter, and none of the other case.
func isUpper(s string) bool { return casedOnly(s, unicode.IsUpper, unicode.IsLower) }
func isLower(s string) bool { return casedOnly(s, unicode.IsLower, unicode.IsUpper) }

func casedOnly(s string, want, reject func(rune) bool) bool {
	cased := false
	for _, r := range s {
		switch {
		case reject(r) || unicode.IsTitle(r):
			return false
		case want(r):
			cased = true
		}
	}
	return cased
}

// detectLanguage returns langdetect's code for text's language, or "" where
// langdetect raises for want of features (IFEval then counts the
// instruction as followed).
func detectLanguage(text string) (string, error) {
	lang, err := langdetect.Detect(text)
	if errors.Is(err, langdetect.ErrNoFeatures) {
		return "", nil
	}
	return lang, err
}
