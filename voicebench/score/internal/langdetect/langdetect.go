// Package langdetect is a port of Python's langdetect 1.0.9 (itself a port
// of Nakatani Shuyo's language-detection), the language identifier that
// IFEval uses, with its 55 language profiles (profiles.json.gz, made by
// mkprofiles.py; Apache License 2.0).
//
// Detect behaves like langdetect with DetectorFactory.seed = 0: the same
// n-gram extraction, the same seven randomized trials, drawn from a port of
// CPython's Mersenne Twister, so that verdicts match the reference's rather
// than only resemble them. Two differences remain: profiles are indexed in
// name order where langdetect takes the directory's order, and Go's math
// library may round its last bit differently from C's; both only move
// probabilities at the level of rounding.
package langdetect

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

//go:embed profiles.json.gz
var profilesGz []byte

// ErrNoFeatures is langdetect's "No features in text": nothing in the text
// is a known n-gram, so no language can be named.
var ErrNoFeatures = errors.New("langdetect: no features in text")

// Parameters of langdetect's Detector.
const (
	alphaDefault   = 0.5
	alphaWidth     = 0.05
	iterationLimit = 1000
	probThreshold  = 0.1
	convThreshold  = 0.99999
	baseFreq       = 10000
	nTrial         = 7
	maxTextLength  = 10000
	nGram          = 3
)

type model struct {
	langs []string
	// probs maps an n-gram to its frequency in each language that has it.
	probs          map[string][]langProb
	latin1Excluded string
	cjk            map[rune]rune
	viAlphabet     []rune
	viMarks        []rune
	viNormalized   [][]rune
}

type langProb struct {
	lang int
	p    float64
}

var loadModel = sync.OnceValues(func() (*model, error) {
	zr, err := gzip.NewReader(bytes.NewReader(profilesGz))
	if err != nil {
		return nil, fmt.Errorf("langdetect profiles: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("langdetect profiles: %w", err)
	}
	var raw struct {
		Langs          []string              `json:"langs"`
		NWords         [][3]float64          `json:"n_words"`
		Freq           map[string][][2]int64 `json:"freq"`
		Latin1Excluded string                `json:"latin1_excluded"`
		CJKClasses     []string              `json:"cjk_classes"`
		VIAlphabet     string                `json:"vi_alphabet"`
		VIMarks        string                `json:"vi_marks"`
		VINormalized   []string              `json:"vi_normalized"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("langdetect profiles: %w", err)
	}
	m := &model{
		langs:          raw.Langs,
		probs:          make(map[string][]langProb, len(raw.Freq)),
		latin1Excluded: raw.Latin1Excluded,
		cjk:            map[rune]rune{},
		viAlphabet:     []rune(raw.VIAlphabet),
		viMarks:        []rune(raw.VIMarks),
	}
	for gram, counts := range raw.Freq {
		n := len([]rune(gram))
		if n < 1 || n > nGram {
			continue
		}
		for _, c := range counts {
			m.probs[gram] = append(m.probs[gram], langProb{int(c[0]), float64(c[1]) / raw.NWords[c[0]][n-1]})
		}
	}
	for _, class := range raw.CJKClasses {
		r := []rune(class)
		for _, c := range r {
			m.cjk[c] = r[0]
		}
	}
	for _, s := range raw.VINormalized {
		m.viNormalized = append(m.viNormalized, []rune(s))
	}
	return m, nil
})

var (
	// urlRe is langdetect's https?://[-_.?&~;+=/#0-9A-Za-z]{1,2076}; RE2
	// caps counted repetition at 1000, so the cap is applied by hand.
	urlRe  = regexp.MustCompile(`https?://[-_.?&~;+=/#0-9A-Za-z]+`)
	mailRe = regexp.MustCompile(`[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}`)
)

const urlMaxTail = 2076

func stripURLs(text string) string {
	return urlRe.ReplaceAllStringFunc(text, func(m string) string {
		scheme := strings.Index(m, "://") + len("://")
		if len(m)-scheme > urlMaxTail {
			return " " + m[scheme+urlMaxTail:]
		}
		return " "
	})
}

// Detect returns the language code of text (such as "en" or "zh-cn"), or
// ErrNoFeatures.
func Detect(text string) (string, error) {
	m, err := loadModel()
	if err != nil {
		return "", err
	}
	grams := m.ngrams(m.clean(text))
	if len(grams) == 0 {
		return "", ErrNoFeatures
	}
	return m.decide(grams), nil
}

// clean is Detector.append and cleaning_text: URLs and addresses out,
// Vietnamese marks composed, runs of spaces collapsed, and Latin letters
// dropped from text that is mostly in another script.
func (m *model) clean(text string) []rune {
	text = mailRe.ReplaceAllString(stripURLs(text), " ")
	r := m.normalizeVI([]rune(text))
	if len(r) > maxTextLength {
		r = r[:maxTextLength]
	}
	var out []rune
	var pre rune
	for _, c := range r {
		if c != ' ' || pre != ' ' {
			out = append(out, c)
		}
		pre = c
	}
	latin, nonLatin := 0, 0
	for _, c := range out {
		switch {
		case 'A' <= c && c <= 'z':
			latin++
		case c >= 0x300 && !inBlock(c, latinExtendedAdditional):
			nonLatin++
		}
	}
	if latin*2 < nonLatin {
		kept := out[:0]
		for _, c := range out {
			if c < 'A' || 'z' < c {
				kept = append(kept, c)
			}
		}
		out = kept
	}
	return out
}

func (m *model) normalizeVI(r []rune) []rune {
	out := make([]rune, 0, len(r))
	for i := 0; i < len(r); i++ {
		if i+1 < len(r) {
			a, d := indexRune(m.viAlphabet, r[i]), indexRune(m.viMarks, r[i+1])
			if a >= 0 && d >= 0 {
				out = append(out, m.viNormalized[d][a])
				i++
				continue
			}
		}
		out = append(out, r[i])
	}
	return out
}

func indexRune(s []rune, c rune) int {
	for i, x := range s {
		if x == c {
			return i
		}
	}
	return -1
}

// Unicode blocks the normalizer treats specially.
type block struct{ lo, hi rune }

var (
	basicLatin              = block{0x0000, 0x007f}
	latin1Supplement        = block{0x0080, 0x00ff}
	latinExtendedB          = block{0x0180, 0x024f}
	arabic                  = block{0x0600, 0x06ff}
	latinExtendedAdditional = block{0x1e00, 0x1eff}
	generalPunctuation      = block{0x2000, 0x206f}
	hiragana                = block{0x3040, 0x309f}
	katakana                = block{0x30a0, 0x30ff}
	bopomofo                = block{0x3100, 0x312f}
	bopomofoExtended        = block{0x31a0, 0x31bf}
	cjkUnifiedIdeographs    = block{0x4e00, 0x9fff}
	hangulSyllables         = block{0xac00, 0xd7af}
)

func inBlock(c rune, b block) bool { return b.lo <= c && c <= b.hi }

// normalize is NGram.normalize: one representative per character class.
func (m *model) normalize(c rune) rune {
	switch {
	case inBlock(c, basicLatin):
		if c < 'A' || ('Z' < c && c < 'a') || 'z' < c {
			return ' '
		}
	case inBlock(c, latin1Supplement):
		if strings.ContainsRune(m.latin1Excluded, c) {
			return ' '
		}
	case inBlock(c, latinExtendedB):
		// Romanian s and t with comma below become the cedilla forms.
		switch c {
		case 'ș':
			return 'ş'
		case 'ț':
			return 'ţ'
		}
	case inBlock(c, generalPunctuation):
		return ' '
	case inBlock(c, arabic):
		if c == 'ی' { // Farsi yeh becomes Arabic yeh
			return 'ي'
		}
	case inBlock(c, latinExtendedAdditional):
		if c >= 'Ạ' {
			return 'ể'
		}
	case inBlock(c, hiragana):
		return 'あ'
	case inBlock(c, katakana):
		return 'ア'
	case inBlock(c, bopomofo), inBlock(c, bopomofoExtended):
		return 'ㄅ'
	case inBlock(c, cjkUnifiedIdeographs):
		if r, ok := m.cjk[c]; ok {
			return r
		}
	case inBlock(c, hangulSyllables):
		return '가'
	}
	return c
}

// ngrams is Detector._extract_ngrams: the known 1- to 3-grams of the text,
// skipping words in capitals.
func (m *model) ngrams(text []rune) []string {
	var out []string
	grams := []rune{' '}
	capital := false
	for _, c := range text {
		c = m.normalize(c)
		last := grams[len(grams)-1]
		if last == ' ' {
			grams, capital = grams[:0], false
			grams = append(grams, ' ')
			if c == ' ' {
				continue
			}
		} else if len(grams) >= nGram {
			grams = append(grams[:0], grams[1:]...)
		}
		grams = append(grams, c)
		if unicode.IsUpper(c) {
			if unicode.IsUpper(last) {
				capital = true
			}
		} else {
			capital = false
		}
		if capital {
			continue
		}
		for n := 1; n <= nGram && n <= len(grams); n++ {
			w := string(grams[len(grams)-n:])
			if w == " " {
				continue
			}
			if _, ok := m.probs[w]; ok {
				out = append(out, w)
			}
		}
	}
	return out
}

// decide is Detector._detect_block and detect.
func (m *model) decide(grams []string) string {
	n := len(m.langs)
	total := make([]float64, n)
	rng := newPyRandom(0)
	factor := make([]float64, n)
	for range nTrial {
		prob := make([]float64, n)
		for i := range prob {
			prob[i] = 1.0 / float64(n)
		}
		alpha := alphaDefault + rng.gauss()*alphaWidth
		weight := alpha / baseFreq
		for i := 0; ; i++ {
			for j := range factor {
				factor[j] = weight
			}
			for _, lp := range m.probs[grams[rng.randBelow(len(grams))]] {
				factor[lp.lang] = weight + lp.p
			}
			for j := range prob {
				prob[j] *= factor[j]
			}
			if i%5 == 0 && (normalize(prob) > convThreshold || i >= iterationLimit) {
				break
			}
		}
		for j := range total {
			total[j] += prob[j] / nTrial
		}
	}
	// langdetect sorts the languages above the threshold by probability,
	// keeping the profile order among equals, and takes the first.
	idx := make([]int, 0, n)
	for j, p := range total {
		if p > probThreshold {
			idx = append(idx, j)
		}
	}
	if len(idx) == 0 {
		return "unknown"
	}
	sort.SliceStable(idx, func(a, b int) bool { return total[idx[a]] > total[idx[b]] })
	return m.langs[idx[0]]
}

// normalize scales prob to sum to one and returns its largest value.
func normalize(prob []float64) float64 {
	var sum, maxp float64
	for _, p := range prob {
		sum += p
	}
	for i, p := range prob {
		p /= sum
		maxp = max(maxp, p)
		prob[i] = p
	}
	return maxp
}
