package score

import "strings"

// mcqTemplates are the answer phrasings of VoiceBench's mcq.py, in its order
// (the first template that matches, trying choices a..d, wins). [CHOICE]
// stands for the option letter; matching is on the lowercased response.
var mcqTemplates = []string{
	"答案是[CHOICE]",
	"答案是 [CHOICE]",
	"答案是选项[CHOICE]",
	"答案应该是[CHOICE]",
	"答案应该是 [CHOICE]",
	"答案就是选项[CHOICE]",
	"答案是‘[CHOICE]",
	"是[CHOICE]：",
	"答案选[CHOICE]",
	"[CHOICE]是正确",
	"选项[CHOICE]是最合适的",
	"answer is: **[CHOICE]",
	"answer is **[CHOICE]",
	"the answer to the question is: **[CHOICE]",
	"the answer to the multiple-choice question is **[CHOICE]",
	"the answer is '[CHOICE]'",
	"[CHOICE] is the best answer",
	"the answer is [CHOICE]",
	"the correct answer is [CHOICE]",
	"would select [CHOICE]",
	"would choose [CHOICE]",
	"would select option [CHOICE]",
	"would choose option [CHOICE]",
	"is \"[CHOICE]\"",
	"is \"[CHOICE].",
	"is: **[CHOICE])",
	"is **[CHOICE],",
	"is **[CHOICE]:",
	"is **[CHOICE])",
	"is: **[CHOICE].",
	"is: **[CHOICE]:",
	"is **[CHOICE].",
	"be **[CHOICE],",
	"is: **[CHOICE]**",
	"is therefore option **[CHOICE]:",
	"is: \n\n**[CHOICE])",
	"as **[CHOICE]:",
	"be **[CHOICE])",
	"be **[CHOICE]:",
	"is: \n\n**[CHOICE]**",
	"suggests **[CHOICE])",
	"be option **[CHOICE]:",
	"with **[CHOICE])",
	"is typically \"[CHOICE])",
	"be to **[CHOICE])",
	"is: \n\n[CHOICE])",
	"is likely to be: **[CHOICE].",
	"is **[CHOICE] (",
	"is option **[CHOICE]**",
	"is likely **[CHOICE]**",
	"is:\n**[CHOICE].",
	"is:\n\n**[CHOICE].",
	"would be [CHOICE]",
	"would be option [CHOICE]",
	"would be ([CHOICE])",
	"would be option ([CHOICE])",
	"is [CHOICE],",
	"is typically [CHOICE],",
	"is typically [CHOICE].",
	"i'd say [CHOICE].",
	"option [CHOICE].",
	"option [CHOICE]:",
	"option [CHOICE],",
	"the answer is:\n**[CHOICE]",
	"is [CHOICE]:",
	"is [CHOICE].",
	"is [CHOICE],",
	"is: [CHOICE].",
	"is ([CHOICE])",
	"is:\n**[CHOICE])",
	"is likely **[CHOICE]:",
	"is the **[CHOICE])",
	":\n[CHOICE].",
	":\n[CHOICE])",
	":\n[CHOICE],",
	": \n[CHOICE].",
	":  \n[CHOICE].",
	":\n\n[CHOICE].",
	":\n\n[CHOICE])",
	"is most likely **[CHOICE]:",
	":\n\n[CHOICE],",
	": \n\n[CHOICE].",
	"is option [CHOICE],",
	"([CHOICE]) would be",
	"is ([CHOICE]).",
	"is [CHOICE])",
	"is: [CHOICE])",
	"is:\n\n[CHOICE]:",
	"is: **[CHOICE],",
	"(option [CHOICE])",
	"answer is ([CHOICE])",
	"select option \"[CHOICE]\"",
	"is: [CHOICE]",
	"is typically **[CHOICE],",
	"is **[CHOICE]**",
	"is likely '[CHOICE]'",
	"is option '[CHOICE]'",
	"is:\n**[CHOICE]:",
	"is \\( \\boxed{[CHOICE] ",
	"would be '[CHOICE]'",
	"is the **[CHOICE]** ",
	"question is [CHOICE] (",
	"is:\n\n**[CHOICE])",
	"closest to option **[CHOICE]**",
	"is most likely **[CHOICE])",
	"the answer to the question is '[CHOICE]'",
	"question is **[CHOICE]**",
	"known as '[CHOICE]'",
	"is '[CHOICE])",
	"is typically **[CHOICE]:",
	"is \\( \\boxed{\\text{[CHOICE]}} \\)",
	"is \\( \\text{[CHOICE]) }",
	"is \\( \\text{[CHOICE]} \\)",
	"is \\( \\text{[CHOICE]:",
	"is \\( \\text{[CHOICE])",
	"is \\(\\text{[CHOICE].",
	"is:\n\n**[CHOICE]",
	"is \\( \\text{[CHOICE].}",
	"is \\( \\text{[CHOICE].",
	"is \\( \\boxed{[CHOICE]}",
	"is:\n\\[ \\boxed{\\text{[CHOICE]}}",
	"is:\n\\[ \\text{[CHOICE])",
	"is:\n\n\\[ \\text{[CHOICE])",
	"is \\( \\textbf{[CHOICE])",
	"is \\( \\text{[CHOICE]}",
	"is: \\( \\text{[CHOICE].",
	"corresponds to:\n- **[CHOICE]:",
	"would be: **[CHOICE]**.",
	"is \\( [CHOICE] \\)",
	"is:\n**[CHOICE] ",
	"corresponds to option **[CHOICE]**",
	"be **[CHOICE]**",
	"be: \n\n[CHOICE])",
	"is:\n\\[ \\boxed{[CHOICE]}",
	"is:  \n**[CHOICE]:",
	"is: \\( \\text{[CHOICE])",
	"is likely: **[CHOICE],",
	"is } \\mathbf{[CHOICE].",
	"is \\( \\boxed{[CHOICE])",
	"is \\( \\textbf{[CHOICE]}",
	"is \\([CHOICE]\\)",
	"is:\n  \n**[CHOICE]:",
	"is option **[CHOICE] ",
	"is:\n\\( \\textbf{[CHOICE].",
	"is \\( \\mathbf{[CHOICE]}",
	"was option **[CHOICE]**",
	"is likely \"[CHOICE])",
	"option **[CHOICE]:",
	"is \"[CHOICE])",
	"is most likely **[CHOICE],",
	"is often **[CHOICE]:",
	"is:  \n[CHOICE])",
	" [CHOICE].",
	" [CHOICE],",
	" [CHOICE]:",
	" [CHOICE])",
	"**[CHOICE].",
	"**[CHOICE])",
	"\"[CHOICE].",
	"\"[CHOICE],",
	"\"[CHOICE]:",
	"([CHOICE])",
	"\"[CHOICE]\"",
}

var mcqChoices = [...]string{"a", "b", "c", "d"}

// extractChoice returns the option letter ("A".."D") a response picks, or ""
// when no template matches (the reference would guess at random there).
func extractChoice(response string) string {
	r := trimTurnPrefix(strings.ToLower(response))
	for _, tpl := range mcqTemplates {
		for _, c := range mcqChoices {
			if strings.Contains(r, strings.ReplaceAll(tpl, "[CHOICE]", c)) {
				return strings.ToUpper(c)
			}
		}
	}
	for _, c := range mcqChoices {
		if r == c {
			return strings.ToUpper(c)
		}
		for _, punct := range []string{".", ",", ":", ")"} {
			if strings.HasPrefix(r, c+punct) {
				return strings.ToUpper(c)
			}
		}
	}
	// The reference's last three special cases all answer A.
	for _, s := range []string{"would be a.", `would be "a.`, "the best option from the given choices would be a scorpion (a)"} {
		if strings.Contains(r, s) {
			return "A"
		}
	}
	return ""
}

// scoreMCQ scores mmsu and openbookqa: accuracy against reference letters,
// with unmatched answers wrong.
func scoreMCQ(samples []sample) (subsetResult, error) {
	return scoreEach(samples, func(s sample) (verdict, error) {
		switch got := extractChoice(s.rec.Response); got {
		case "":
			return unmatched, nil
		case s.rec.Reference:
			return right, nil
		}
		return wrong, nil
	})
}
