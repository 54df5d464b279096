package moss

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Upstream's punctuation sets (OpenMOSS/MOSS-TTS-Nano onnx_tts_runtime.py:40).
const (
	sentenceEnd = ".!?。！？；;"
	clauseEnd   = ",，、；;：:"
	// closing quotes and brackets stay with the punctuation they follow.
	closing = "\"'”’)]}）】》」』"
)

// splitText cuts text, as cleanText left it, into the chunks that are
// synthesized one at a time, as upstream's split_voice_clone_text
// (onnx_tts_runtime.py:387) does: into sentences, a sentence over budget
// tokens into clauses, a clause over budget into pieces (see
// splitByBudget); then it joins neighbours back into chunks of up to
// budget tokens. count is the tokenizer's count of a text's tokens.
//
// A text that stays one chunk is returned as given, without what
// prepareForSplit adds (:435): a short request, such as a reply's first
// words, reaches the model exactly as cleanText left it.
func splitText(text string, budget int, count func(string) int) []string {
	text = trimSpace(text)
	if text == "" {
		return nil
	}
	type slice struct {
		text   string
		tokens int
	}
	var parts []slice
	add := func(s string, n int) { parts = append(parts, slice{s, n}) }
	for _, sentence := range splitAfter(prepareForSplit(text), sentenceEnd) {
		if n := count(sentence); n <= budget {
			add(sentence, n)
			continue
		}
		for _, clause := range splitAfter(sentence, clauseEnd) {
			if n := count(clause); n <= budget {
				add(clause, n)
				continue
			}
			for _, piece := range splitByBudget(clause, budget, count) {
				add(piece, count(piece))
			}
		}
	}
	var chunks []string
	cur := parts[0]
	for _, s := range parts[1:] {
		if cur.tokens+s.tokens > budget {
			chunks = append(chunks, cur.text)
			cur = s
			continue
		}
		cur.text = joinParts(cur.text, s.text)
		cur.tokens = count(cur.text)
	}
	if chunks == nil {
		return []string{text}
	}
	return append(chunks, cur.text)
}

// prepareForSplit is upstream's _prepare_text_for_sentence_chunking
// (onnx_tts_runtime.py:188) for text that cleanText has already put on
// one line with single spaces: text holding CJK is ended with "。" unless
// it ends a sentence; other text is capitalized and ended with "." after a
// letter or digit.
//
// Upstream also prefixes eight spaces to non-CJK text of fewer than five
// words (:203). They never reach the tokenizer: every sentence is trimmed
// (:221, :230), and a text that stays one chunk is returned as it was
// before this preparation (:435). SentencePiece would drop them anyway:
// its normalizer removes leading whitespace unless a model turns
// remove_extra_whitespaces off. So they are left out here.
func prepareForSplit(text string) string {
	last, _ := utf8.DecodeLastRuneInString(text)
	if hasCJK(text) {
		if !strings.ContainsRune(sentenceEnd, last) {
			text += "。"
		}
		return text
	}
	// Python's str.upper also maps a few runes to two (ß to SS); those
	// stay as they are.
	if first, n := utf8.DecodeRuneInString(text); unicode.IsLower(first) || unicode.Is(unicode.Other_Lowercase, first) {
		text = string(unicode.ToUpper(first)) + text[n:]
	}
	if unicode.IsLetter(last) || unicode.IsNumber(last) {
		text += "."
	}
	return text
}

// hasCJK is upstream's _contains_cjk (onnx_tts_runtime.py:176): Han, kana
// or Hangul.
func hasCJK(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r >= 0x4e00 && r <= 0x9fff || r >= 0x3400 && r <= 0x4dbf || r >= 0x3040 && r <= 0x30ff || r >= 0xac00 && r <= 0xd7af
	})
}

// splitAfter is upstream's _split_text_by_punctuation
// (onnx_tts_runtime.py:208): text cut after each rune of punct and the
// closing quotes and brackets that follow it, the pieces trimmed, empty
// ones dropped.
func splitAfter(text, punct string) []string {
	var out []string
	add := func(s string) {
		if s = trimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	start := 0
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !strings.ContainsRune(punct, r) {
			continue
		}
		i = len(text) - len(strings.TrimLeft(text[i:], closing))
		add(text[start:i])
		i = len(text) - len(strings.TrimLeftFunc(text[i:], isSpace))
		start = i
	}
	add(text[start:])
	return out
}

// splitByBudget is upstream's split_text_by_token_budget
// (onnx_tts_runtime.py:345): it cuts the longest prefix of at most budget
// tokens, found by bisection over runes and each candidate encoded, back
// to the last space or punctuation in its last 24 runes, so that a word is
// cut only where no such boundary is near (a long CJK run, a long word).
func splitByBudget(text string, budget int, count func(string) int) []string {
	var pieces []string
	for rest := trimSpace(text); rest != ""; {
		if count(rest) <= budget {
			return append(pieces, rest)
		}
		// rest is trimmed, so no prefix of it is blank.
		rs := []rune(rest)
		best := 1
		for lo, hi := 1, len(rs); lo <= hi; {
			if mid := (lo + hi) / 2; count(trimSpace(string(rs[:mid]))) <= budget {
				best, lo = mid, mid+1
			} else {
				hi = mid - 1
			}
		}
		cut := best
		for i := best - 1; i > max(-1, best-25); i-- {
			if rs[i] == ' ' || strings.ContainsRune(clauseEnd+sentenceEnd, rs[i]) {
				cut = i + 1
				break
			}
		}
		pieces = append(pieces, trimSpace(string(rs[:cut])))
		rest = trimSpace(string(rs[cut:]))
	}
	return pieces
}

// joinParts is upstream's _join_sentence_parts (onnx_tts_runtime.py:236):
// CJK text is joined without a space.
func joinParts(left, right string) string {
	if hasCJK(left) || hasCJK(right) {
		return left + right
	}
	return left + " " + right
}

// chunkGap is the silence after chunk, upstream's
// estimate_voice_clone_inter_chunk_pause_seconds (onnx_tts_runtime.py:437):
// longer after a chunk of ShortChunkWords whitespace-separated words or
// fewer, which a CJK chunk always is.
func chunkGap(chunk string) time.Duration {
	if len(strings.FieldsFunc(chunk, isSpace)) <= ShortChunkWords {
		return ShortChunkGap
	}
	return ChunkGap
}
