package xasr

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BlankPiece is the transducer's blank symbol; X-ASR's table gives it id 0,
// which is also the id the decoder context starts with.
const BlankPiece = "<blk>"

// spaceMark is SentencePiece's word-boundary mark (U+2581).
const spaceMark = "\u2581"

// Tokens is a model's token table: id -> SentencePiece piece. It is
// immutable after loading and safe for concurrent use.
type Tokens struct {
	pieces  []string
	special []bool // <blk>, <sos/eos>, <unk>, ...: never shown
	byPiece map[string]int
}

// LoadTokens reads a tokens.txt of `<piece> <id>` lines (as icefall and
// sherpa-onnx write them). The ids must be unique and dense (0..n-1) and
// <blk> must be 0; errors name the file and line.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("xasr: token table: %w", err)
	}
	defer f.Close()
	return ParseTokens(f, path)
}

// ParseTokens is LoadTokens on a reader; name is used in errors.
func ParseTokens(r io.Reader, name string) (*Tokens, error) {
	byID := map[int]string{}
	line := map[int]int{} // id -> line it was defined on
	var order []int       // ids in file order, for deterministic errors
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSuffix(sc.Text(), "\r")
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("xasr: token table %s:%d: %q is not a `<piece> <id>` line", name, n, text)
		}
		if !utf8.ValidString(fields[0]) {
			return nil, fmt.Errorf("xasr: token table %s:%d: piece %q is not valid UTF-8", name, n, fields[0])
		}
		id, err := strconv.Atoi(fields[1])
		if err != nil || id < 0 {
			return nil, fmt.Errorf("xasr: token table %s:%d: id %q is not a non-negative integer", name, n, fields[1])
		}
		if prev, dup := line[id]; dup {
			return nil, fmt.Errorf("xasr: token table %s:%d: id %d already used on line %d", name, n, id, prev)
		}
		byID[id], line[id] = fields[0], n
		order = append(order, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("xasr: token table %s: line %d: %w", name, n+1, err)
	}
	if len(byID) == 0 {
		return nil, fmt.Errorf("xasr: token table %s is empty", name)
	}
	t := &Tokens{pieces: make([]string, len(byID)), special: make([]bool, len(byID)), byPiece: make(map[string]int, len(byID))}
	for _, id := range order {
		p := byID[id]
		if id >= len(byID) {
			return nil, fmt.Errorf("xasr: token table %s:%d: id %d out of range: %d tokens must use ids 0..%d", name, line[id], id, len(byID), len(byID)-1)
		}
		t.pieces[id] = p
		t.special[id] = len(p) > 2 && p[0] == '<' && p[len(p)-1] == '>'
		if prev, dup := t.byPiece[p]; dup {
			// Not fatal for decoding, but a table with a repeated piece is
			// not one SentencePiece wrote.
			return nil, fmt.Errorf("xasr: token table %s:%d: piece %q already has id %d (line %d)", name, line[id], p, prev, line[prev])
		}
		t.byPiece[p] = id
	}
	if id, ok := t.byPiece[BlankPiece]; !ok || id != 0 {
		if !ok {
			return nil, fmt.Errorf("xasr: token table %s has no %s (the blank, id 0)", name, BlankPiece)
		}
		return nil, fmt.Errorf("xasr: token table %s:%d: %s has id %d, want 0", name, line[id], BlankPiece, id)
	}
	return t, nil
}

// Len is the number of tokens (the joiner's output size).
func (t *Tokens) Len() int { return len(t.pieces) }

// Piece returns the piece of id ("" when out of range).
func (t *Tokens) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// ID returns the id of piece.
func (t *Tokens) ID(piece string) (int, bool) {
	id, ok := t.byPiece[piece]
	return id, ok
}

// Detokenize turns token ids into text: the pieces joined, the
// SentencePiece mark U+2581 as a space, runs of spaces collapsed and the
// ends trimmed; no space between two CJK characters (X-ASR gives every Han
// character its own word mark) nor after CJK punctuation before a CJK
// character, nor before punctuation (ASCII , . ! ? : ; and CJK ，。？！、：；);
// spaces between Latin words and between CJK and Latin text stay as the
// pieces put them. Special tokens (<blk>, <sos/eos>, <unk>) and ids out of
// range are skipped. No final punctuation is added: see AddFinalStop.
//
// The text of a prefix of ids is a prefix of the text of all of them,
// which is what lets partial results grow monotonically.
func (t *Tokens) Detokenize(ids []int) string {
	var raw strings.Builder
	for _, id := range ids {
		if id < 0 || id >= len(t.pieces) || t.special[id] {
			continue
		}
		raw.WriteString(t.pieces[id])
	}
	return tidy(strings.ReplaceAll(raw.String(), spaceMark, " "))
}

// tidy applies Detokenize's spacing rules to text.
func tidy(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var prev rune // last rune written; 0 at the start
	pendingSpace := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			pendingSpace = prev != 0
			continue
		}
		if pendingSpace && keepSpace(prev, r) {
			b.WriteByte(' ')
		}
		pendingSpace = false
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// keepSpace says whether a space between a and b survives.
func keepSpace(a, b rune) bool {
	switch {
	case isPunct(b):
		return false
	case isCJK(b) && (isCJK(a) || isCJKPunct(a)):
		return false
	}
	return true
}

// AddFinalStop ends text with a full stop unless it already ends in
// punctuation: "。" after a CJK character, "." otherwise. X-ASR emits a
// sentence's closing punctuation only once the next sentence starts, so
// the final result of an utterance gets one here; partial results do not.
// Empty text stays empty.
//
// Neither X-ASR's scripts nor sherpa-onnx add one; the stop is for the
// readers of the final transcript, the LLM's history and the screen, which
// then see a finished sentence. "。" is not in X-ASR's vocabulary (it
// writes ASCII punctuation, Chinese or not), which does not matter: the
// text never goes back into the recognizer, and a Chinese sentence in the
// LLM's history reads as the LLM's own replies end.
// Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:536-540
// is upstream's whole detokenization: pieces joined, "▁" as a space, trimmed.
func AddFinalStop(text string) string {
	last, _ := utf8.DecodeLastRuneInString(text)
	switch {
	case text == "" || isPunct(last):
		return text
	case isCJK(last):
		return text + "。"
	}
	return text + "."
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

func isCJKPunct(r rune) bool { return strings.ContainsRune("，。？！、：；", r) }

func isPunct(r rune) bool { return strings.ContainsRune(",.!?:;", r) || isCJKPunct(r) }
