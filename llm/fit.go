package llm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// fitTurn is text cut to at most half of each budget (at least one
// character): the bound of one user message (see History.AddUser).
func fitTurn(text string, budgets []budget) string {
	for _, b := range budgets {
		if b.max > 0 {
			text = cutTo(text, b.size, max(b.max/2, 1))
		}
	}
	return text
}

// cutTo is the longest start of text that size measures at most limit,
// cut back to a boundary (see atBoundary). It is found by halving over
// the characters' starts, so a cut never splits a character and a
// tokenizer runs a few dozen times, not once a character.
func cutTo(text string, size func(string) int, limit int) string {
	if size(text) <= limit {
		return text
	}
	starts := make([]int, 0, len(text)+1)
	for i := range text {
		starts = append(starts, i)
	}
	starts = append(starts, len(text))
	// text[:starts[fits]] is within limit (the empty start is), and
	// text[:starts[over]] is not.
	fits, over := 0, len(starts)-1
	for over-fits > 1 {
		mid := (fits + over) / 2
		if size(text[:starts[mid]]) <= limit {
			fits = mid
		} else {
			over = mid
		}
	}
	return atBoundary(text, starts[fits])
}

// atBoundary is text[:n] cut back to the last sentence end in its second
// half, else to the last break between words there (a space, or a clause
// mark in Chinese, which is written without spaces), else left at n: the
// model reads whole sentences, or at least whole words, where the cut
// costs at most half of what fits.
func atBoundary(text string, n int) string {
	word := -1
	for i := n; i > n/2; {
		r, size := utf8.DecodeLastRuneInString(text[:i])
		next, _ := utf8.DecodeRuneInString(text[i:])
		switch {
		case strings.ContainsRune("。！？", r), strings.ContainsRune(".!?", r) && (i == len(text) || unicode.IsSpace(next)):
			return text[:i]
		case r == '\n':
			return strings.TrimRightFunc(text[:i], unicode.IsSpace)
		case word < 0 && strings.ContainsRune("，、；：,;:", r):
			word = i
		case word < 0 && unicode.IsSpace(r):
			word = i - size
		}
		i -= size
	}
	if word < 0 {
		return text[:n]
	}
	return strings.TrimRightFunc(text[:word], unicode.IsSpace)
}
