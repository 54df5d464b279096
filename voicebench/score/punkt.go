package score

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/neurosnap/sentences"
	"github.com/neurosnap/sentences/data"
)

// This file ports the sentence splitting of NLTK 3.8's
// PunktSentenceTokenizer.tokenize (the function behind IFEval's
// count_sentences and word_tokenize) onto the English Punkt model that
// github.com/neurosnap/sentences ships. That library has its own Punkt
// implementation, but it splits differently from NLTK on ellipses,
// abbreviations before punctuation and quotes, so only its model is used.
// Indexes are in runes, as NLTK's are in code points.

// Orthographic context flags of the Punkt model.
const (
	orthoBegUC = 1 << 1
	orthoMidUC = 1 << 2
	orthoUnkUC = 1 << 3
	orthoBegLC = 1 << 4
	orthoMidLC = 1 << 5
	orthoUnkLC = 1 << 6
	orthoUC    = orthoBegUC + orthoMidUC + orthoUnkUC
	orthoLC    = orthoBegLC + orthoMidLC + orthoUnkLC
)

type punktModel struct {
	abbrevs, sentStarters map[string]bool
	collocations          map[[2]string]bool
	ortho                 map[string]int
}

var englishPunkt = sync.OnceValues(func() (*punktModel, error) {
	b, err := data.Asset("data/english.json")
	if err != nil {
		return nil, fmt.Errorf("punkt english model: %w", err)
	}
	s, err := sentences.LoadTraining(b)
	if err != nil {
		return nil, fmt.Errorf("punkt english model: %w", err)
	}
	m := &punktModel{abbrevs: keys(s.AbbrevTypes), sentStarters: keys(s.SentStarters), collocations: map[[2]string]bool{}, ortho: s.OrthoContext}
	for k := range s.Collocations {
		if a, b, ok := strings.Cut(k, ","); ok {
			m.collocations[[2]string{a, b}] = true
		}
	}
	return m, nil
})

func keys(s sentences.SetString) map[string]bool {
	out := make(map[string]bool, len(s))
	for k := range s {
		out[k] = true
	}
	return out
}

// punktToken is a word token with the annotations of both passes.
type punktToken struct {
	tok, typ                  string
	periodFinal               bool
	sentbreak, abbr, ellipsis bool
}

func newPunktToken(tok string) *punktToken {
	t := &punktToken{tok: tok, typ: strings.ToLower(tok), periodFinal: strings.HasSuffix(tok, ".")}
	if isNumericToken(t.typ) {
		t.typ = "##number##"
	}
	return t
}

// isNumericToken is NLTK's ^-?[\.,]?\d[\d,\.-]*\.?$ on the whole token.
func isNumericToken(s string) bool {
	r := []rune(s)
	i := 0
	if i < len(r) && r[i] == '-' {
		i++
	}
	if i < len(r) && (r[i] == '.' || r[i] == ',') {
		i++
	}
	if i >= len(r) || !unicode.IsDigit(r[i]) {
		return false
	}
	for i++; i < len(r) && (unicode.IsDigit(r[i]) || strings.ContainsRune(",.-", r[i])); i++ {
	}
	// The optional final period is already taken by the class above.
	return i == len(r)
}

func (t *punktToken) typeNoPeriod() string {
	if len(t.typ) > 1 && strings.HasSuffix(t.typ, ".") {
		return t.typ[:len(t.typ)-1]
	}
	return t.typ
}

func (t *punktToken) typeNoSentPeriod() string {
	if t.sentbreak {
		return t.typeNoPeriod()
	}
	return t.typ
}

func (t *punktToken) firstRune() rune {
	for _, r := range t.tok {
		return r
	}
	return 0
}

func (t *punktToken) firstUpper() bool { return unicode.IsUpper(t.firstRune()) }
func (t *punktToken) firstLower() bool { return unicode.IsLower(t.firstRune()) }

func (t *punktToken) isEllipsis() bool {
	return len(t.tok) >= 2 && strings.Trim(t.tok, ".") == ""
}

// isInitial is NLTK's [^\W\d]\.$: one non-digit word character and a period.
func (t *punktToken) isInitial() bool {
	r := []rune(t.tok)
	return len(r) == 2 && r[1] == '.' && (r[0] == '_' || unicode.IsLetter(r[0]) || (unicode.IsNumber(r[0]) && !unicode.IsDigit(r[0])))
}

// Characters of NLTK's Punkt language variables.
const (
	punktNonWord      = `)";}]*:@'({[!?`
	punktNotWordStart = "(\"`{[:;&#*@)}]-,"
	punktSentEnd      = ".?!"
	punktBoundary     = `"')]}`
)

// multiCharPunct returns the length of NLTK's (?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)
// at r[i:], or 0.
func multiCharPunct(r []rune, i int) int {
	run := func(c rune) int {
		n := 0
		for i+n < len(r) && r[i+n] == c {
			n++
		}
		return n
	}
	if n := run('-'); n >= 2 {
		return n
	}
	if n := run('.'); n >= 2 {
		return n
	}
	reps := 0
	for j := i; j+1 < len(r) && r[j] == '.' && unicode.IsSpace(r[j+1]); j += 2 {
		reps++
	}
	if end := i + 2*reps; reps >= 2 && end < len(r) && r[end] == '.' {
		return 2*reps + 1
	}
	if reps >= 3 {
		return 2*(reps-1) + 1
	}
	return 0
}

// wordEnds is the look-ahead that ends a word token at r[j:].
func wordEnds(r []rune, j int) bool {
	if j >= len(r) || unicode.IsSpace(r[j]) || strings.ContainsRune(punktNonWord, r[j]) || multiCharPunct(r, j) > 0 {
		return true
	}
	if r[j] == ',' {
		k := j + 1
		return k >= len(r) || unicode.IsSpace(r[k]) || strings.ContainsRune(punktNonWord, r[k]) || multiCharPunct(r, k) > 0
	}
	return false
}

// punktWords is PunktLanguageVars.word_tokenize on one line.
func punktWords(line string) []string {
	r := []rune(line)
	var out []string
	for i := 0; i < len(r); {
		n := multiCharPunct(r, i)
		switch {
		case n > 0:
		case unicode.IsSpace(r[i]):
			i++
			continue
		case !strings.ContainsRune(punktNotWordStart, r[i]):
			for n = 1; !wordEnds(r, i+n); n++ {
			}
		default:
			n = 1
		}
		out = append(out, string(r[i:i+n]))
		i += n
	}
	return out
}

// tokenizeWords is PunktBaseClass._tokenize_words: the words of each line.
func tokenizeWords(text string) []*punktToken {
	var out []*punktToken
	for _, line := range strings.Split(text, "\n") {
		for _, w := range punktWords(line) {
			out = append(out, newPunktToken(w))
		}
	}
	return out
}

func (m *punktModel) annotate(tokens []*punktToken) {
	for _, t := range tokens {
		m.firstPass(t)
	}
	for i := 0; i+1 < len(tokens); i++ {
		m.secondPass(tokens[i], tokens[i+1])
	}
}

func (m *punktModel) firstPass(t *punktToken) {
	switch {
	case len(t.tok) == 1 && strings.Contains(punktSentEnd, t.tok):
		t.sentbreak = true
	case t.isEllipsis():
		t.ellipsis = true
	case t.periodFinal && !strings.HasSuffix(t.tok, ".."):
		stem := strings.ToLower(t.tok[:len(t.tok)-1])
		parts := strings.Split(stem, "-")
		if m.abbrevs[stem] || m.abbrevs[parts[len(parts)-1]] {
			t.abbr = true
		} else {
			t.sentbreak = true
		}
	}
}

// orthoHeuristic says whether t starts a sentence: yes, no or unknown.
type tristate int

const (
	unknown tristate = iota
	yes
	no
)

func (m *punktModel) orthoHeuristic(t *punktToken) tristate {
	if len(t.tok) == 1 && strings.Contains(";:,.!?", t.tok) {
		return no
	}
	ctx := m.ortho[t.typeNoSentPeriod()]
	if t.firstUpper() && ctx&orthoLC != 0 && ctx&orthoMidUC == 0 {
		return yes
	}
	if t.firstLower() && (ctx&orthoUC != 0 || ctx&orthoBegLC == 0) {
		return no
	}
	return unknown
}

func (m *punktModel) secondPass(t1, t2 *punktToken) {
	if !t1.periodFinal {
		return
	}
	typ, next := t1.typeNoPeriod(), t2.typeNoSentPeriod()
	initial := t1.isInitial()
	if m.collocations[[2]string{typ, next}] {
		t1.sentbreak, t1.abbr = false, true
		return
	}
	if (t1.abbr || t1.ellipsis) && !initial {
		if m.orthoHeuristic(t2) == yes {
			t1.sentbreak = true
			return
		}
		if t2.firstUpper() && m.sentStarters[next] {
			t1.sentbreak = true
			return
		}
	}
	if initial || typ == "##number##" {
		h := m.orthoHeuristic(t2)
		if h == no {
			t1.sentbreak, t1.abbr = false, true
			return
		}
		if h == unknown && initial && t2.firstUpper() && m.ortho[next]&orthoLC == 0 {
			t1.sentbreak, t1.abbr = false, true
		}
	}
}

// containsSentbreak is text_contains_sentbreak: a break before the last token.
func (m *punktModel) containsSentbreak(text string) bool {
	tokens := tokenizeWords(text)
	m.annotate(tokens)
	for i := 0; i+1 < len(tokens); i++ {
		if tokens[i].sentbreak {
			return true
		}
	}
	return false
}

// endContext is a potential sentence end: the end character at index at,
// the word before it (from), and what follows (after, next).
type endContext struct {
	from, at, after, next int // next is -1 when no token follows
}

// potentialEnds are the matches of NLTK's period context expression
// [.?!](?=(?P<after_tok>NonWord|\s+(?P<next_tok>\S+))).
func potentialEnds(r []rune) []endContext {
	var out []endContext
	for k := 0; k+1 < len(r); k++ {
		if !strings.ContainsRune(punktSentEnd, r[k]) {
			continue
		}
		if strings.ContainsRune(punktNonWord, r[k+1]) {
			out = append(out, endContext{at: k, after: k + 2, next: -1})
			continue
		}
		j := k + 1
		for j < len(r) && unicode.IsSpace(r[j]) {
			j++
		}
		if j == k+1 || j == len(r) {
			continue
		}
		e := j
		for e < len(r) && !unicode.IsSpace(r[e]) {
			e++
		}
		out = append(out, endContext{at: k, after: e, next: j})
	}
	return out
}

// isASCIISpace is Python's string.whitespace.
func isASCIISpace(c rune) bool { return strings.ContainsRune(" \t\n\r\v\f", c) }

// splitSentences is NLTK's PunktSentenceTokenizer.tokenize with boundary
// realignment.
func splitSentences(text string) ([]string, error) {
	m, err := englishPunkt()
	if err != nil {
		return nil, err
	}
	r := []rune(text)
	slices := m.slicesFromText(r, matchEndContexts(r), len([]rune(strings.TrimRightFunc(text, unicode.IsSpace))))
	return realignBoundaries(r, slices), nil
}

// runeSpan is r[start:stop] of a text's runes.
type runeSpan struct{ start, stop int }

// matchEndContexts is _match_potential_end_contexts: each end with the
// word before it, skipping ends whose word overlaps the previous context.
func matchEndContexts(r []rune) []endContext {
	var contexts []endContext
	prev, havePrev := runeSpan{}, false
	var prevEnd endContext
	for _, e := range potentialEnds(r) {
		idx := 0
		for i := e.at - 1; i >= prev.stop; i-- {
			if isASCIISpace(r[i]) {
				idx = i - prev.stop
				break
			}
		}
		if idx != 0 {
			idx += prev.stop + 1
		} else {
			idx = prev.start
		}
		word := runeSpan{idx, e.at}
		if havePrev && prev.stop <= word.start {
			contexts = append(contexts, prevEnd)
		}
		prevEnd, havePrev = e, true
		prevEnd.from = word.start
		prev = word
	}
	if havePrev {
		contexts = append(contexts, prevEnd)
	}
	return contexts
}

// slicesFromText is _slices_from_text: the sentences that the contexts
// holding a break end, the last one ending at end (the text's length
// without trailing space).
func (m *punktModel) slicesFromText(r []rune, contexts []endContext, end int) []runeSpan {
	var slices []runeSpan
	last := 0
	for _, c := range contexts {
		if m.containsSentbreak(string(r[c.from:c.after])) {
			slices = append(slices, runeSpan{last, c.at + 1})
			if c.next >= 0 {
				last = c.next
			} else {
				last = c.at + 1
			}
		}
	}
	return append(slices, runeSpan{last, end})
}

// realignBoundaries is _realign_boundaries: closing punctuation at the
// start of a sentence moves to the end of the one before.
func realignBoundaries(r []rune, slices []runeSpan) []string {
	var out []string
	sentence := func(s runeSpan) string {
		if s.start >= s.stop {
			return ""
		}
		return string(r[s.start:s.stop])
	}
	realign := 0
	for i, s1 := range slices {
		s1.start += realign
		if i+1 == len(slices) {
			if t := sentence(s1); t != "" {
				out = append(out, t)
			}
			break
		}
		s2 := slices[i+1]
		if n, end, ok := boundaryRealignment(r, s2); ok {
			out = append(out, sentence(runeSpan{s1.start, s2.start + n}))
			realign = end
			continue
		}
		realign = 0
		if t := sentence(s1); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// boundaryRealignment matches NLTK's ["\')\]}]+?(?:\s+|(?=--)|$) (multiline)
// at the start of sentence s: closing punctuation that belongs to the
// previous sentence. It returns the length without trailing space and the
// match's end, relative to s.
func boundaryRealignment(r []rune, s runeSpan) (n, end int, ok bool) {
	t := r[min(s.start, s.stop):s.stop]
	closing := 0
	for closing < len(t) && strings.ContainsRune(punktBoundary, t[closing]) {
		closing++
	}
	for k := 1; k <= closing; k++ {
		switch {
		case k < len(t) && unicode.IsSpace(t[k]):
			e := k
			for e < len(t) && unicode.IsSpace(t[e]) {
				e++
			}
			return k, e, true
		case k+1 < len(t) && t[k] == '-' && t[k+1] == '-', k == len(t):
			return k, k, true
		}
	}
	return 0, 0, false
}
