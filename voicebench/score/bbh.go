package score

import (
	"fmt"
	"regexp"
	"strings"
)

type matchKind int

const (
	contains matchKind = iota
	equals
	prefix
	suffix
	regex
)

// bbhRule maps a phrasing of the normalized response to an answer: 0 for
// "no"/"(A)", 1 for "yes"/"(B)". Rules are tried in order, as the reference's
// if/elif chains are.
type bbhRule struct {
	kind    matchKind
	pattern string
	answer  int
}

// compiledRules keeps the regexps of a rule table compiled once.
type compiledRules struct {
	rules []bbhRule
	res   map[int]*regexp.Regexp
}

func compileRules(rules []bbhRule) compiledRules {
	c := compiledRules{rules: rules, res: map[int]*regexp.Regexp{}}
	for i, r := range rules {
		if r.kind == regex {
			c.res[i] = regexp.MustCompile(r.pattern)
		}
	}
	return c
}

// match returns the answer of the first rule that matches, or -1.
func (c compiledRules) match(s string) int {
	for i, r := range c.rules {
		var ok bool
		switch r.kind {
		case contains:
			ok = strings.Contains(s, r.pattern)
		case equals:
			ok = s == r.pattern
		case prefix:
			ok = strings.HasPrefix(s, r.pattern)
		case suffix:
			ok = strings.HasSuffix(s, r.pattern)
		case regex:
			ok = c.res[i].MatchString(s)
		}
		if ok {
			return r.answer
		}
	}
	return -1
}

// bbhTasks pairs the task name found in a sample id with its rules. Every
// task but hyperbaton first tries the shared yes/no phrasings.
var bbhTasks = []struct {
	name  string
	rules compiledRules
}{
	// The reference checks the id in this order.
	{"sports_understanding", compileRules(append(append([]bbhRule{}, bbhYesNo...), bbhSports...))},
	{"hyperbaton", compileRules(bbhHyperbaton)},
	{"navigate", compileRules(append(append([]bbhRule{}, bbhYesNo...), bbhNavigate...))},
	{"web_of_lies", compileRules(append(append([]bbhRule{}, bbhYesNo...), bbhLies...))},
}

var bbhNormalizer = strings.NewReplacer(":", " ", "**", " ", `"`, " ", "-", " ", ",", " ", ".", " ", "：", " ")

// normalizeBBH lowercases, drops turn markers and punctuation and collapses
// whitespace, as the reference does before matching.
func normalizeBBH(response string) string {
	r := trimTurnPrefix(trimUserSuffix(strings.ToLower(response)))
	r = strings.ReplaceAll(r, "<|turn_end|>", "")
	return strings.Join(strings.Fields(bbhNormalizer.Replace(r)), " ")
}

// extractBBH returns 0 or 1 for a response to the task named in id, -1 when
// no rule matches; it is an error when id names no task the reference knows.
func extractBBH(response, id string) (int, error) {
	for _, t := range bbhTasks {
		if strings.Contains(id, t.name) {
			return t.rules.match(normalizeBBH(response)), nil
		}
	}
	return -1, fmt.Errorf("bbh id %q names no known task (sports_understanding, hyperbaton, navigate, web_of_lies)", id)
}

var bbhReferences = map[string]int{"yes": 1, "no": 0, "(a)": 0, "(b)": 1}

func scoreBBH(samples []sample) (subsetResult, error) {
	return scoreEach(samples, func(s sample) (verdict, error) {
		want, ok := bbhReferences[strings.ToLower(s.rec.Reference)]
		if !ok {
			return wrong, fmt.Errorf("bbh reference %q is none of yes, no, (A), (B)", s.rec.Reference)
		}
		got, err := extractBBH(s.rec.Response, string(s.rec.ID))
		switch {
		case err != nil:
			return wrong, err
		case got == -1:
			return unmatched, nil
		case got == want:
			return right, nil
		}
		return wrong, nil
	})
}

// The tables below are the reference's rules, in its order.

var bbhYesNo = []bbhRule{
	{contains, "answer is no", 0},
	{contains, "answer is yes", 1},
	{contains, "the answer no", 0},
	{contains, "the answer yes", 1},
	{contains, "final answer no", 0},
	{contains, "final answer yes", 1},
	{contains, "i would answer no", 0},
	{contains, "i would answer yes", 1},
	{contains, "the answer is without any modification no", 0},
	{contains, "the answer is without any modification yes", 1},
	{contains, "the answer to the question is no", 0},
	{contains, "the answer to the question is yes", 1},
	{contains, "the answer is false", 0},
	{contains, "the answer is true", 1},
	{contains, "answer false", 0},
	{contains, "answer true", 1},
	{contains, "the answer is $\\boxed{\\text{false}}$", 0},
	{contains, "the answer is $\\boxed{\\text{true}}$", 1},
	{contains, "the answer is \\boxed{no}", 0},
	{contains, "the answer is \\boxed{yes}", 1},
	{contains, "the answer is \\boxed{\\text{false}}", 0},
	{contains, "the answer is \\boxed{\\text{true}}", 1},
	{contains, "the answer is \\boxed{\\text{no}}", 0},
	{contains, "the answer is \\boxed{\\text{yes}}", 1},
	{contains, "i will provide the answer as no", 0},
	{contains, "i will provide the answer as yes", 1},
	{contains, "prefix answer no", 0},
	{contains, "prefix answer yes", 1},
	{contains, "conclusion no", 0},
	{contains, "conclusion yes", 1},
}

var bbhHyperbaton = []bbhRule{
	{equals, "a", 0},
	{equals, "b", 0},
	{contains, "the answer is (a)", 0},
	{contains, "the answer is (b)", 1},
	{contains, "the correct adjective order is option (a)", 0},
	{contains, "the correct adjective order is option (b)", 1},
	{contains, "the correct grammatical order is a", 0},
	{contains, "the correct grammatical order is b", 1},
	{contains, "the correct sentence is option (a)", 0},
	{contains, "the correct sentence is option (b)", 1},
	{contains, "the sentence with the correct adjectives is a", 0},
	{contains, "the sentence with the correct adjectives is b", 1},
	{contains, "correct adjective order options is a", 0},
	{contains, "correct adjective order options is b", 1},
	{contains, "the correct answer is (a)", 0},
	{contains, "the correct answer is (b)", 1},
	{contains, "the correct option is (a)", 0},
	{contains, "the correct option is (b)", 1},
	{contains, "the correct order of adjectives in the sentence is option a", 0},
	{contains, "the correct order of adjectives in the sentence is option b", 1},
	{contains, "the correct sentence would be option (a)", 0},
	{contains, "the correct sentence would be option (b)", 1},
	{contains, "the correct sentence is (a)", 0},
	{contains, "the correct sentence is (b)", 1},
	{contains, "the proper adjective order is a", 0},
	{contains, "the proper adjective order is b", 1},
	{contains, "the correct adjective order is (a)", 0},
	{contains, "the correct adjective order is (b)", 1},
	{contains, "correct adjective order is a", 0},
	{contains, "correct adjective order is b", 1},
	{contains, "the adjectives in option a are in the correct order", 0},
	{contains, "the adjectives in option b are in the correct order", 1},
	{contains, "the right adjective order is a)", 0},
	{contains, "the right adjective order is b)", 1},
	{contains, "the correct adjectivs is (a)", 0},
	{contains, "the correct adjectivs is (b)", 1},
	{contains, "the right adjective order is (a)", 0},
	{contains, "the right adjective order is (b)", 1},
	{contains, "correct adjectival order is a", 0},
	{contains, "correct adjectival order is b", 1},
	{contains, "the proper adjective order is (a)", 0},
	{contains, "the proper adjective order is (b)", 1},
	{contains, "the correct sentence order is a", 0},
	{contains, "the correct sentence order is b", 1},
	{contains, "option a correctly follows the standard adjective order", 0},
	{contains, "option b correctly follows the standard adjective order", 1},
	{contains, "the answer directly is a", 0},
	{contains, "the answer directly is b", 1},
	{contains, "the correct order would be option a", 0},
	{contains, "the correct order would be option b", 1},
	{contains, "final answer should be a", 0},
	{contains, "final answer should be b", 1},
	{contains, "final answer a", 0},
	{contains, "final answer b", 1},
	{contains, "option (a) uses the correct adjective sequence", 0},
	{contains, "option (b) uses the correct adjective sequence", 1},
	{contains, "the correct option is option a", 0},
	{contains, "the correct option is option b", 1},
	{contains, "the answer is without any modification a", 0},
	{contains, "the answer is without any modification b", 1},
	{contains, "the correct one is option a", 0},
	{contains, "the correct one is option b", 1},
	{contains, "answer is without any modification a", 0},
	{contains, "answer is without any modification b", 1},
	{contains, "the answer is without any modification option a", 0},
	{contains, "the answer is without any modification option b", 1},
	{contains, "answer is a", 0},
	{contains, "answer is b", 1},
	{contains, "the answer is [a]", 0},
	{contains, "the answer is [b]", 1},
	{contains, "option a follows the correct adjective order", 0},
	{contains, "option b follows the correct adjective order", 1},
	{contains, "the correct order of adjectives is a", 0},
	{contains, "the correct order of adjectives is b", 1},
	{contains, "option (a) is the correct answer", 0},
	{contains, "option (b) is the correct answer", 1},
	{contains, "the correct order is a", 0},
	{contains, "the correct order is b", 1},
	{contains, "the correct object order is a", 0},
	{contains, "the correct object order is b", 1},
	{contains, "the correct answer order is a", 0},
	{contains, "the correct answer order is b", 1},
	{contains, "the final answer without any modification is a", 0},
	{contains, "the final answer without any modification is b", 1},
	{contains, "the correct sentence is a", 0},
	{contains, "the correct sentence is b", 1},
	{contains, "correct adjective order option is a", 0},
	{contains, "correct adjective order option is b", 1},
	{contains, "correct adjective order is sentence a", 0},
	{contains, "correct adjective order is sentence b", 1},
	{contains, "correct objective order option is a", 0},
	{contains, "correct objective order option is b", 1},
	{contains, "the answer is is a", 0},
	{contains, "the answer is is b", 1},
	{contains, "the correct adjective order is option a", 0},
	{contains, "the correct adjective order is option b", 1},
	{contains, "the correct adjective order is provided in option a", 0},
	{contains, "the correct adjective order is provided in option b", 1},
	{contains, "option a is more accurate", 0},
	{contains, "option b is more accurate", 1},
	{contains, "answer is option a", 0},
	{contains, "answer is option b", 1},
	{contains, "option a has the adjectives in the correct order", 0},
	{contains, "option b has the adjectives in the correct order", 1},
	{contains, "option a is closer to being correct", 0},
	{contains, "option b is closer to being correct", 1},
	{contains, "the most logical order is option a", 0},
	{contains, "the most logical order is option b", 1},
	{contains, "in option a the adjectives are in the correct order", 0},
	{contains, "in option b the adjectives are in the correct order", 1},
	{contains, "sentence a is the closest to the correct adjective order", 0},
	{contains, "sentence b is the closest to the correct adjective order", 1},
	{contains, "option a has the correct order", 0},
	{contains, "option b has the correct order", 1},
	{contains, "sentence a has a more logical", 0},
	{contains, "sentence b has a more logical", 1},
	{contains, "the closest correct order is option a", 0},
	{contains, "the closest correct order is option b", 1},
	{contains, "sentence a has the correct adjective order", 0},
	{contains, "sentence b has the correct adjective order", 1},
	{contains, "option a is the closest to the typical order", 0},
	{contains, "option b is the closest to the typical order", 1},
	{contains, "the correct answer would be option a", 0},
	{contains, "the correct answer would be option b", 1},
	{contains, "the correct option is a", 0},
	{contains, "the correct option is b", 1},
	{contains, "option a has a better adjective order", 0},
	{contains, "option b has a better adjective order", 1},
	{contains, "option a has the correct adjective order", 0},
	{contains, "option b has the correct adjective order", 1},
	{contains, "option a seems to follow the typical order", 0},
	{contains, "option b seems to follow the typical order", 1},
	{contains, "the correct order is found in option a", 0},
	{contains, "the correct order is found in option b", 1},
	{contains, "the correct adjective order is in the first option", 0},
	{contains, "the correct adjective order is in the second option", 1},
	{contains, "the correct adverb order would be a", 0},
	{contains, "the correct adverb order would be b", 1},
	{contains, "the correct answer would be the a", 0},
	{contains, "the correct answer would be the b", 1},
	{contains, "the correct adjective order is in option a", 0},
	{contains, "the correct adjective order is in option b", 1},
	{contains, "the correct adjective order is in sentence a", 0},
	{contains, "the correct adjective order is in sentence b", 1},
	{contains, "the adjectives are in the correct order for a", 0},
	{contains, "the adjectives are in the correct order for b", 1},
	{contains, "the answer is [option a]", 0},
	{contains, "the answer is [option b]", 1},
	{contains, "option (a) has a correct adjective order", 0},
	{contains, "option (b) has a correct adjective order", 1},
	{contains, "the correct sentence would be a", 0},
	{contains, "the correct sentence would be b", 1},
	{contains, "option a follows the correct sequence of adjectives", 0},
	{contains, "option b follows the correct sequence of adjectives", 1},
	{contains, "option a would be closer to the correct order", 0},
	{contains, "option b would be closer to the correct order", 1},
	{contains, "the correct sentence with the adjective order is a", 0},
	{contains, "the correct sentence with the adjective order is b", 1},
	{contains, "option a is more grammatically correct", 0},
	{contains, "option b is more grammatically correct", 1},
	{contains, "option a would be more correct", 0},
	{contains, "option b would be more correct", 1},
	{contains, "option a is incorrect and option b is correct", 1},
	{contains, "option a is the closest match", 0},
	{contains, "option b is the closest match", 1},
	{contains, "option b follows the typical order of adjectives", 1},
	{contains, "the correct sentence with the adjective order is option a", 0},
	{contains, "the correct sentence with the adjective order is option b", 1},
	{contains, "the correct sentence is option a", 0},
	{contains, "the correct sentence is option b", 1},
	{contains, "the correct objective order is in option a", 0},
	{contains, "the correct objective order is in option b", 1},
	{contains, "the answer is option (a)", 0},
	{contains, "the answer is option (b)", 1},
	{contains, "the correct option would be (a)", 0},
	{contains, "the correct option would be (b)", 1},
	{contains, "the correct order is in option a", 0},
	{contains, "the correct order is in option b", 1},
	{contains, "the correct adjective order is found in option a", 0},
	{contains, "the correct adjective order is found in option b", 1},
	{contains, "option (a) follows the typical order of adjectives", 0},
	{contains, "option (b) follows the typical order of adjectives", 1},
	{contains, "option (a) has the correct adjective order", 0},
	{contains, "option (b) has the correct adjective order", 1},
	{contains, "option (a) follows the general adjective order", 0},
	{contains, "option (b) follows the general adjective order", 1},
	{contains, "option (a) would be more grammatically correct", 0},
	{contains, "option (b) would be more grammatically correct", 1},
	{contains, "option a is the correct", 0},
	{contains, "option b is the correct", 1},
	{contains, "option a has the correct word order", 0},
	{contains, "option b has the correct word order", 1},
	{contains, "option a follows the correct order", 0},
	{contains, "option b follows the correct order", 1},
	{contains, "following the typical order is the first option", 0},
	{contains, "following the typical order is the second option", 1},
	{contains, "option a has a slightly better chance of being correct", 0},
	{contains, "option b has a slightly better chance of being correct", 1},
	{contains, "the answer is sentence a", 0},
	{contains, "the answer is sentence b", 1},
	{contains, "the final answer is (a)", 0},
	{contains, "the final answer is (b)", 1},
	{regex, "sentence a (.+?) seems to have a more logical", 0},
	{regex, "sentence b (.+?) seems to have a more logical", 1},
	{regex, "the correct adjective order is (.+?) option a", 0},
	{regex, "the correct adjective order is (.+?) option b", 1},
	{prefix, "a ", 0},
	{prefix, "b ", 1},
	{prefix, "a)", 0},
	{prefix, "b)", 1},
}

var bbhSports = []bbhRule{
	{contains, "final answer the sentence is plausible", 1},
	{contains, "the answer is directly yes", 1},
	{contains, "no the sentence is not possible", 0},
	{contains, "the answer is it is not possible", 0},
	{contains, "the answer is the sentence is plausible", 1},
	{contains, "the sentence is not particularly plausible", 0},
	{contains, "the sentence is not plausible", 0},
	{contains, "yes the sentence is structurally plausible", 1},
	{contains, "is the sentence plausible? yes it is", 1},
	{contains, "i would say that it is not a plausible sentence.", 0},
	{contains, "no the original sentence is not plausible", 0},
	{contains, "it s not a plausible", 0},
	{contains, "to answer your original question no", 0},
	{contains, "making it plausible", 1},
	{contains, "making it implausible", 0},
	{contains, "it is indeed a plausible sentence", 1},
	{contains, "considering these points the sentence is plausible", 1},
	{contains, "i would say the sentence is plausible", 1},
	{contains, "i would say that the sentence is plausible", 1},
	{contains, "i d say it s not entirely plausible", 0},
	{contains, "therefore not plausible", 0},
	{contains, "making it an implausible statement", 0},
	{contains, "the following sentence is not plausible", 0},
	{contains, "considering these points the sentence is unlikely to be true", 0},
	{contains, "considering these points the sentence is not plausible", 0},
	{contains, "yes the sentence is plausible", 1},
	{contains, "based on this analysis the sentence is plausible", 1},
	{contains, "considering these points the sentence seems plausible", 1},
	{contains, "given the context the sentence is plausible", 1},
	{contains, "considering these factors the sentence is plausible", 1},
	{contains, "considering these points the sentence is unlikely to be plausible", 0},
	{contains, "given the context of sports particularly basketball this sentence is plausible", 1},
	{contains, "considering these points the sentence is likely true", 1},
	{contains, "considering these elements the sentence is plausible", 1},
	{contains, "i would say it s unlikely", 0},
	{contains, "it seems unlikely", 0},
	{contains, "given this analysis the sentence is plausible", 1},
	{contains, "considering these points the sentence is the plausible", 1},
	{contains, "the sentence is not entirely possible", 0},
	{contains, "the sentence is not entirely accurate", 0},
	{contains, "the sentence is not entirely plausible", 0},
	{contains, "the answer is plausible", 1},
	{contains, "modification of answer not possible", 0},
	{contains, "the answer is without any modification no", 0},
	{contains, "i would say that the sentence is generally plausible", 1},
	{contains, "given these points the sentence is plausible", 1},
	{contains, "yes the sentence is plausible", 1},
	{contains, "considering these points the sentence seems to be a plausible", 1},
	{contains, "the sentence appears to be a plausible", 1},
	{equals, "not plausible", 0},
	{regex, "considering these points the sentence (.+?) is grammatically correct and makes sense", 1},
	{regex, "considering these points the sentence (.+?) is plausible", 1},
	{regex, "considering these points the sentence (.+?) is unlikely", 0},
	{regex, "based on this analysis the sentence (.+?) is plausible", 1},
	{regex, "considering these points the sentence (.+?) seems to be a possible", 1},
	{regex, "based on these steps the sentence (.+?) is plausible", 1},
	{regex, "based on this analysis the sentence (.+?) seems plausible", 1},
	{regex, "considering these points the sentence (.+?) appears to be plausible", 1},
	{regex, "considering these points the sentence (.+?) seems plausible", 1},
	{regex, "the sentence (.+?) is not very plausible", 0},
	{regex, "considering these points (.+?) is a plausible sentence", 1},
	{regex, "given this information the sentence (.+?) is plausible", 1},
	{regex, "given the context the sentence (.+?) is plausible", 1},
	{regex, "the sentence (.+?) is flexible and realistic", 1},
	{regex, "considering these points the sentence (.+?) is not a plausible statement", 0},
	{regex, "the sentence (.+?) is not plausible", 1},
	{prefix, "no", 0},
	{prefix, "yes", 1},
	{prefix, "the following sentence is plausible", 1},
	{suffix, "no", 0},
	{suffix, "yes", 1},
}

var bbhNavigate = []bbhRule{
	{contains, "you do not return to the starting point", 0},
	{contains, "you are not at the starting point", 0},
	{contains, "you haven t moved back to the starting point", 0},
	{contains, "you cannot return to the starting point", 0},
	{contains, "you return to the starting point", 1},
	{contains, "you are not facing the starting point", 0},
	{contains, "you haven t returned to the starting point", 0},
	{contains, "you end up back at the starting point", 1},
	{contains, "you are not back at the starting point", 0},
	{contains, "you will not return to the starting point", 0},
	{contains, "yes following these instructions", 1},
	{contains, "we end up back at the starting point", 1},
	{contains, "indeed returns us to the starting point", 1},
	{contains, "indeed bring us back to the starting point", 1},
	{contains, "you ll end up right back where you started", 1},
	{contains, "we ve now returned to the starting point", 1},
	{contains, "i have returned to the starting position", 1},
	{contains, "the final position is not directly at the starting point", 0},
	{contains, "it appears that we did not return to the exact starting point", 0},
	{contains, "does not return us to the starting point", 0},
	{contains, "i will end up back where i started", 1},
	{contains, "indeed return to the starting point", 1},
	{contains, "i ll be back where i started", 1},
	{contains, "i ll end up back at the starting point", 1},
	{contains, "after following these instructions we return to the starting point", 1},
	{contains, "we are back at the starting point!", 1},
	{contains, "we are now back at the starting point", 1},
	{contains, "you ll end up back where you started", 1},
	{contains, "we have now returned to the starting point", 1},
	{contains, "i ve returned to the starting point", 1},
	{contains, "following these instructions will always return us to the starting point", 1},
	{contains, "indeed return you to the starting point", 1},
	{contains, "the answer is the starting point", 1},
	{contains, "following these instructions doesn t return us to the starting point", 0},
	{contains, "following these directions does not lead you back to your original starting point", 0},
	{prefix, "no", 0},
	{prefix, "yes", 1},
	{suffix, "no", 0},
	{suffix, "yes", 1},
}

var bbhLies = []bbhRule{
	{contains, "the prefix no applies to the statement", 0},
	{contains, "veena s statement cannot be true", 0},
	{contains, "therefore truly lorene tells the truth", 1},
	{contains, "the answer is the truth", 1},
	{contains, "affirmatively alejandro tells the truth", 1},
	{regex, "answer is (.+?) tells a lie", 0},
	{regex, "answer is (.+?) lies", 0},
	{regex, "answer is (.+?) says lie", 0},
	{regex, "answer is (.+?) doesn t tell the truth", 0},
	{regex, "answer is (.+?) does not tell the truth", 0},
	{regex, "answer is (.+?) didn t tell the truth", 0},
	{regex, "answer is (.+?) tells the truth", 1},
	{regex, "answer is (.+?) does tell the truth", 1},
	{regex, "answer to the question (.+?) is no", 0},
	{regex, "answer to the question (.+?) is yes", 1},
	{regex, "from the above steps we can conclude that (.+?) tells the truth", 1},
	{suffix, "does not tell the truth", 0},
	{suffix, "cannot be telling the truth", 0},
	{suffix, "is lying", 0},
	{suffix, "tells the lie", 0},
	{suffix, "is also telling the truth", 1},
	{suffix, "must be lying", 1},
	{suffix, "must be telling the truth", 1},
	{suffix, "tells the truth", 1},
	{suffix, "delfina does tell the truth", 1},
	{suffix, "osvaldo is telling the truth", 1},
	{suffix, "lies", 0},
	{prefix, "no", 0},
	{prefix, "yes", 1},
	{suffix, "no", 0},
	{suffix, "yes", 1},
}
