package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// IFEvalScores are IFEval's four accuracies (0-100) and their mean, which
// VoiceBench reports as the subset score.
type IFEvalScores struct {
	PromptStrict      float64 `json:"prompt_strict"`
	PromptLoose       float64 `json:"prompt_loose"`
	InstructionStrict float64 `json:"instruction_strict"`
	InstructionLoose  float64 `json:"instruction_loose"`
	Mean              float64 `json:"mean"`
	Instructions      int     `json:"instructions"`
}

// check reports whether a response follows one instruction.
type check func(response string) (bool, error)

// errUnsupported marks an instruction this package cannot check: an unknown
// id, or arguments that are missing or invalid (the reference draws random
// ones there).
var errUnsupported = errors.New("unsupported instruction")

// instrArgs are an instruction's kwargs without the falsy values, which the
// reference drops before building the instruction.
type instrArgs map[string]any

func (a instrArgs) int(name string) (int, error) {
	f, ok := a[name].(float64)
	if !ok || f != math.Trunc(f) {
		return 0, fmt.Errorf("%w: %s is %v, want an integer", errUnsupported, name, a[name])
	}
	return int(f), nil
}

// positive is int for the arguments the reference replaces by a random draw
// when negative.
func (a instrArgs) positive(name string) (int, error) {
	n, err := a.int(name)
	if err == nil && n < 0 {
		err = fmt.Errorf("%w: %s is negative", errUnsupported, name)
	}
	return n, err
}

func (a instrArgs) str(name string) (string, error) {
	s, ok := a[name].(string)
	if !ok {
		return "", fmt.Errorf("%w: %s is %v, want a string", errUnsupported, name, a[name])
	}
	return s, nil
}

func (a instrArgs) strs(name string) ([]string, error) {
	list, ok := a[name].([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %v, want a list of strings", errUnsupported, name, a[name])
	}
	out := make([]string, len(list))
	for i, v := range list {
		if out[i], ok = v.(string); !ok {
			return nil, fmt.Errorf("%w: %s holds %v, want strings", errUnsupported, name, v)
		}
	}
	return out, nil
}

// compare applies a "less than" / "at least" relation.
func (a instrArgs) compare(name string) (func(got, want int) bool, error) {
	switch rel, _ := a[name].(string); rel {
	case "less than":
		return func(got, want int) bool { return got < want }, nil
	case "at least":
		return func(got, want int) bool { return got >= want }, nil
	default:
		return nil, fmt.Errorf("%w: %s is %v, want \"less than\" or \"at least\"", errUnsupported, name, a[name])
	}
}

// counted builds the checks that compare a count against a threshold.
func counted(a instrArgs, num, rel string, count func(string) (int, error)) (check, error) {
	want, err := a.positive(num)
	if err != nil {
		return nil, err
	}
	cmp, err := a.compare(rel)
	if err != nil {
		return nil, err
	}
	return func(r string) (bool, error) {
		got, err := count(r)
		return err == nil && cmp(got, want), err
	}, nil
}

func pure(f func(string) bool) check { return func(r string) (bool, error) { return f(r), nil } }

func noArgs(f func(string) bool) func(instrArgs) (check, error) {
	return func(instrArgs) (check, error) { return pure(f), nil }
}

// atLeast builds the checks that count matches of re.
func atLeast(num string, count func(string) int) func(instrArgs) (check, error) {
	return func(a instrArgs) (check, error) {
		want, err := a.positive(num)
		if err != nil {
			return nil, err
		}
		return pure(func(r string) bool { return count(r) >= want }), nil
	}
}

// ciRegexp compiles a keyword the way the reference uses it: as a
// case-insensitive regular expression.
func ciRegexp(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnsupported, err)
	}
	return re, nil
}

// keywordCheck builds the checks that every keyword of argument name, put
// into format, is present (or, with present false, absent).
func keywordCheck(name, format string, present bool) func(instrArgs) (check, error) {
	return func(a instrArgs) (check, error) {
		kws, err := a.strs(name)
		if err != nil {
			return nil, err
		}
		res := make([]*regexp.Regexp, len(kws))
		for i, k := range kws {
			if res[i], err = ciRegexp(fmt.Sprintf(format, k)); err != nil {
				return nil, err
			}
		}
		return pure(func(r string) bool {
			for _, re := range res {
				if re.MatchString(r) != present {
					return false
				}
			}
			return true
		}), nil
	}
}

var (
	placeholderRe     = regexp.MustCompile(`\[.*?\]`)
	bulletStarRe      = regexp.MustCompile(`(?m)^\s*\*[^*].*$`)
	bulletDashRe      = regexp.MustCompile(`(?m)^\s*-.*$`)
	highlightRe       = regexp.MustCompile(`\*[^\n*]*\*`)
	doubleHighlightRe = regexp.MustCompile(`\*\*[^\n*]*\*\*`)
	paragraphSplitRe  = regexp.MustCompile(`\s?\*\*\*\s?`)
	titleRe           = regexp.MustCompile(`<<[^\n]+>>`)
)

var constrainedResponses = []string{"My answer is yes.", "My answer is no.", "My answer is maybe."}

// instructions builds each IFEval instruction type's check from its
// arguments.
var instructions = map[string]func(instrArgs) (check, error){
	"keywords:existence": keywordCheck("keywords", "%s", true),
	"keywords:frequency": func(a instrArgs) (check, error) {
		kw, err := a.str("keyword")
		if err != nil {
			return nil, err
		}
		re, err := ciRegexp(strings.TrimSpace(kw))
		if err != nil {
			return nil, err
		}
		return counted(a, "frequency", "relation", func(r string) (int, error) {
			return len(re.FindAllStringIndex(r, -1)), nil
		})
	},
	"keywords:forbidden_words": keywordCheck("forbidden_words", `\b%s\b`, false),
	"keywords:letter_frequency": func(a instrArgs) (check, error) {
		letter, err := a.str("letter")
		if err != nil {
			return nil, err
		}
		letter = strings.ToLower(letter)
		if len(letter) != 1 || letter[0] < 'a' || letter[0] > 'z' {
			return nil, fmt.Errorf("%w: letter %q is not one of a-z", errUnsupported, letter)
		}
		return counted(a, "let_frequency", "let_relation", func(r string) (int, error) {
			return strings.Count(strings.ToLower(r), letter), nil
		})
	},
	"language:response_language": func(a instrArgs) (check, error) {
		lang, err := a.str("language")
		if err != nil {
			return nil, err
		}
		return func(r string) (bool, error) {
			got, err := detectLanguage(r)
			return got == "" || got == lang, err
		}, nil
	},
	"length_constraints:number_sentences": func(a instrArgs) (check, error) {
		return counted(a, "num_sentences", "relation", func(r string) (int, error) {
			s, err := splitSentences(r)
			return len(s), err
		})
	},
	"length_constraints:number_paragraphs": func(a instrArgs) (check, error) {
		want, err := a.positive("num_paragraphs")
		if err != nil {
			return nil, err
		}
		return pure(func(r string) bool {
			paragraphs := paragraphSplitRe.Split(r, -1)
			n := len(paragraphs)
			for i, p := range paragraphs {
				if strings.TrimSpace(p) == "" {
					if i != 0 && i != len(paragraphs)-1 {
						return false
					}
					n--
				}
			}
			return n == want
		}), nil
	},
	"length_constraints:number_words": func(a instrArgs) (check, error) {
		return counted(a, "num_words", "relation", func(r string) (int, error) { return countWords(r), nil })
	},
	"length_constraints:nth_paragraph_first_word": nthParagraphFirstWord,
	"detectable_content:number_placeholders": atLeast("num_placeholders", func(r string) int {
		return len(placeholderRe.FindAllStringIndex(r, -1))
	}),
	"detectable_content:postscript": func(a instrArgs) (check, error) {
		marker, err := a.str("postscript_marker")
		if err != nil {
			return nil, err
		}
		var pattern string
		switch marker = strings.TrimSpace(marker); marker {
		case "P.P.S":
			pattern = `\s*p\.\s?p\.\s?s.*$`
		case "P.S.":
			pattern = `\s*p\.\s?s\..*$`
		default:
			pattern = `\s*` + strings.ToLower(marker) + `.*$`
		}
		re, err := regexp.Compile("(?m)" + pattern)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUnsupported, err)
		}
		return pure(func(r string) bool { return re.MatchString(strings.ToLower(r)) }), nil
	},
	"detectable_format:number_bullet_lists": func(a instrArgs) (check, error) {
		want, err := a.positive("num_bullets")
		if err != nil {
			return nil, err
		}
		return pure(func(r string) bool {
			return len(bulletStarRe.FindAllStringIndex(r, -1))+len(bulletDashRe.FindAllStringIndex(r, -1)) == want
		}), nil
	},
	"detectable_format:constrained_response": noArgs(func(r string) bool {
		r = strings.TrimSpace(r)
		for _, c := range constrainedResponses {
			if strings.Contains(r, c) {
				return true
			}
		}
		return false
	}),
	"detectable_format:number_highlighted_sections": atLeast("num_highlights", func(r string) int {
		n := 0
		for _, h := range highlightRe.FindAllString(r, -1) {
			if strings.TrimSpace(strings.Trim(h, "*")) != "" {
				n++
			}
		}
		for _, h := range doubleHighlightRe.FindAllString(r, -1) {
			if strings.TrimSpace(h[2:len(h)-2]) != "" {
				n++
			}
		}
		return n
	}),
	"detectable_format:multiple_sections": func(a instrArgs) (check, error) {
		splitter, err := a.str("section_spliter")
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(`\s?` + strings.TrimSpace(splitter) + `\s?\d+\s?`)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUnsupported, err)
		}
		// The reference splits on the pattern and counts pieces minus one:
		// the number of matches.
		return atLeast("num_sections", func(r string) int { return len(re.FindAllStringIndex(r, -1)) })(a)
	},
	"detectable_format:json_format": noArgs(func(r string) bool {
		r = strings.TrimSpace(r)
		for _, p := range []string{"```json", "```Json", "```JSON", "```"} {
			r = strings.TrimPrefix(r, p)
		}
		r = strings.TrimSpace(strings.TrimSuffix(r, "```"))
		return json.Valid([]byte(r))
	}),
	"detectable_format:title": noArgs(func(r string) bool {
		for _, t := range titleRe.FindAllString(r, -1) {
			if strings.TrimSpace(strings.TrimRight(strings.TrimLeft(t, "<"), ">")) != "" {
				return true
			}
		}
		return false
	}),
	"combination:two_responses": noArgs(func(r string) bool {
		parts := strings.Split(r, "******")
		var valid []string
		for i, p := range parts {
			if strings.TrimSpace(p) == "" {
				if i != 0 && i != len(parts)-1 {
					return false
				}
				continue
			}
			valid = append(valid, p)
		}
		return len(valid) == 2 && strings.TrimSpace(valid[0]) != strings.TrimSpace(valid[1])
	}),
	"combination:repeat_prompt": func(a instrArgs) (check, error) {
		p, err := a.str("prompt_to_repeat")
		if err != nil {
			return nil, err
		}
		p = strings.ToLower(strings.TrimSpace(p))
		return pure(func(r string) bool { return strings.HasPrefix(strings.ToLower(strings.TrimSpace(r)), p) }), nil
	},
	"startend:end_checker": func(a instrArgs) (check, error) {
		end, err := a.str("end_phrase")
		if err != nil {
			return nil, err
		}
		end = strings.ToLower(strings.TrimSpace(end))
		return pure(func(r string) bool {
			return strings.HasSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(r), `"`)), end)
		}), nil
	},
	"startend:quotation": noArgs(func(r string) bool {
		r = strings.TrimSpace(r)
		return utf8.RuneCountInString(r) > 1 && r[0] == '"' && r[len(r)-1] == '"'
	}),
	"change_case:capital_word_frequency": func(a instrArgs) (check, error) {
		return counted(a, "capital_frequency", "capital_relation", func(r string) (int, error) {
			words, err := wordTokenize(r)
			n := 0
			for _, w := range words {
				if isUpper(w) {
					n++
				}
			}
			return n, err
		})
	},
	"change_case:english_capital":   englishIn(isUpper),
	"change_case:english_lowercase": englishIn(isLower),
	"punctuation:no_comma":          noArgs(func(r string) bool { return !strings.Contains(r, ",") }),
}

// englishIn builds the checks for English in one letter case; as in the
// reference, text langdetect cannot place counts as English.
func englishIn(caseOK func(string) bool) func(instrArgs) (check, error) {
	return func(instrArgs) (check, error) {
		return func(r string) (bool, error) {
			if !caseOK(r) {
				return false, nil
			}
			lang, err := detectLanguage(r)
			return lang == "" || lang == "en", err
		}, nil
	}
}

func nthParagraphFirstWord(a instrArgs) (check, error) {
	num, err := a.positive("num_paragraphs")
	if err != nil {
		return nil, err
	}
	nth, err := a.int("nth_paragraph")
	if err != nil {
		return nil, err
	}
	if nth <= 0 || nth > num {
		return nil, fmt.Errorf("%w: nth_paragraph %d is not in 1..%d", errUnsupported, nth, num)
	}
	first, err := a.str("first_word")
	if err != nil {
		return nil, err
	}
	first = strings.ToLower(first)
	return pure(func(r string) bool {
		paragraphs := strings.Split(r, "\n\n")
		n := len(paragraphs)
		for _, p := range paragraphs {
			if strings.TrimSpace(p) == "" {
				n--
			}
		}
		if nth > n {
			return false
		}
		p := strings.TrimSpace(paragraphs[nth-1])
		if p == "" {
			return false
		}
		word := strings.TrimLeft(strings.TrimLeft(strings.Fields(p)[0], "'"), `"`)
		var got strings.Builder
		for _, c := range word {
			if strings.ContainsRune(`.,?!'"`, c) {
				break
			}
			got.WriteString(strings.ToLower(string(c)))
		}
		return n == num && got.String() == first
	}), nil
}

// buildChecks builds the checks of one IFEval prompt; a nil entry is an
// instruction that cannot be checked.
func buildChecks(rec record) ([]check, int) {
	checks := make([]check, len(rec.InstructionIDList))
	unsupported := 0
	for i, id := range rec.InstructionIDList {
		build, ok := instructions[id]
		if !ok || i >= len(rec.Kwargs) {
			unsupported++
			continue
		}
		args := instrArgs{}
		for k, v := range rec.Kwargs[i] {
			if truthy(v) {
				args[k] = v
			}
		}
		c, err := build(args)
		if err != nil {
			unsupported++
			continue
		}
		checks[i] = c
	}
	return checks, unsupported
}

// truthy is Python's truth value of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// looseVariants are the reference's loose-mode rewrites of a response:
// without its first and/or last line, and without asterisks.
func looseVariants(r string) []string {
	lines := strings.Split(r, "\n")
	join := func(from, to int) string {
		if from > to {
			return ""
		}
		return strings.TrimSpace(strings.Join(lines[from:to], "\n"))
	}
	first, last := join(1, len(lines)), join(0, len(lines)-1)
	both := join(1, len(lines)-1)
	noStar := func(s string) string { return strings.ReplaceAll(s, "*", "") }
	return []string{r, noStar(r), first, last, both, noStar(first), noStar(last), noStar(both)}
}

// followed reports whether any of responses follows c, skipping empty ones.
func followed(c check, responses ...string) (bool, error) {
	if c == nil {
		return false, nil
	}
	for _, r := range responses {
		if strings.TrimSpace(r) == "" {
			continue
		}
		ok, err := c(r)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// ifevalVerdicts checks one prompt strictly and loosely.
func ifevalVerdicts(rec record) (strict, loose []bool, unsupported int, err error) {
	checks, unsupported := buildChecks(rec)
	strict = make([]bool, len(checks))
	loose = make([]bool, len(checks))
	if rec.Error != "" {
		return strict, loose, unsupported, nil
	}
	resp := trimUserSuffix(trimTurnPrefix(rec.Response))
	variants := looseVariants(resp)
	for i, c := range checks {
		if strict[i], err = followed(c, resp); err != nil {
			return nil, nil, 0, err
		}
		if loose[i], err = followed(c, variants...); err != nil {
			return nil, nil, 0, err
		}
	}
	return strict, loose, unsupported, nil
}

func scoreIFEval(samples []sample) (subsetResult, error) {
	var res subsetResult
	var promptStrict, promptLoose, instrStrict, instrLoose, instrTotal int
	for _, s := range samples {
		if len(s.rec.InstructionIDList) == 0 {
			return res, fmt.Errorf("%s: ifeval record has no instruction_id_list", s.where())
		}
		strict, loose, unsupported, err := ifevalVerdicts(s.rec)
		if err != nil {
			return res, fmt.Errorf("%s: %w", s.where(), err)
		}
		res.unsupported += unsupported
		if s.rec.Error != "" {
			res.errors++
		} else {
			res.scored++
		}
		instrTotal += len(strict)
		promptStrict += b2i(allTrue(strict))
		promptLoose += b2i(allTrue(loose))
		instrStrict += countTrue(strict)
		instrLoose += countTrue(loose)
	}
	f := &IFEvalScores{Instructions: instrTotal}
	if n := len(samples); n > 0 {
		f.PromptStrict = 100 * float64(promptStrict) / float64(n)
		f.PromptLoose = 100 * float64(promptLoose) / float64(n)
		f.InstructionStrict = 100 * float64(instrStrict) / float64(instrTotal)
		f.InstructionLoose = 100 * float64(instrLoose) / float64(instrTotal)
		f.Mean = (f.PromptStrict + f.InstructionStrict + f.PromptLoose + f.InstructionLoose) / 4
	}
	res.ifeval = f
	return res, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func allTrue(v []bool) bool { return countTrue(v) == len(v) }

func countTrue(v []bool) int {
	n := 0
	for _, b := range v {
		n += b2i(b)
	}
	return n
}
