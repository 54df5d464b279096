// Package spm is a pure-Go SentencePiece tokenizer.
//
// It reads a sentencepiece tokenizer.model file (a serialized
// sentencepiece.ModelProto, decoded with protowire) and reproduces the ids of
// sentencepiece's SentencePieceProcessor.Encode / Decode for unigram and BPE
// models: normalization (the model's precompiled charsmap, such as
// nmt_nfkc's, dummy prefix or suffix, extra-whitespace removal, "▁"
// escaping), Viterbi segmentation over the piece scores or BPE merges,
// user-defined pieces, unknown characters and byte fallback.
//
// WORD and CHAR models are rejected by Parse.
package spm

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"unicode/utf8"
)

const (
	spaceSymbol = "\u2581" // ▁
	// unkPenalty is sentencepiece's kUnkPenalty: unknown characters score
	// min_score - unkPenalty.
	unkPenalty float32 = 10.0
	// replacementChar is what sentencepiece substitutes for malformed UTF-8.
	replacementChar = "\uFFFD"
)

// Model is a loaded SentencePiece model. It is safe for concurrent use.
type Model struct {
	name   string
	pieces []protoPiece
	// pieceIDs holds NORMAL, USER_DEFINED and UNUSED pieces (the ones that can
	// be matched in text); reservedIDs holds the others (UNKNOWN, CONTROL, BYTE).
	pieceIDs    map[string]int
	reservedIDs map[string]int
	trie        trie
	user        trie // user-defined pieces only; nil root if none
	hasUser     bool
	unkID       int
	byteIDs     [256]int // id of <0xXX>, or unkID when missing
	minScore    float32
	maxScore    float32
	trainer     trainerSpec
	normalizer  normalizerSpec
	charsmap    *charsmap // nil for the identity normalizer
}

// Load reads and parses the tokenizer.model file at path.
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("spm: %w", err)
	}
	return Parse(data, path)
}

// Parse parses a serialized sentencepiece.ModelProto. name (usually the file
// path) is used in error messages.
func Parse(data []byte, name string) (*Model, error) {
	m, err := parse(data, name)
	if err != nil {
		return nil, fmt.Errorf("spm: %s: %w", name, err)
	}
	return m, nil
}

// parse is Parse, its errors without the "spm: name: " prefix.
func parse(data []byte, name string) (*Model, error) {
	if len(data) == 0 {
		return nil, errors.New("empty file, not a sentencepiece model")
	}
	mp, err := parseModelProto(data)
	if err != nil {
		return nil, fmt.Errorf("invalid sentencepiece ModelProto: %v", err)
	}
	if len(mp.pieces) == 0 {
		return nil, errors.New("not a sentencepiece model: no pieces")
	}
	if err := checkModelType(mp.trainer.modelType); err != nil {
		return nil, err
	}
	var cm *charsmap
	// An empty charsmap is the identity normalizer, whatever the name says
	// (google/sentencepiece src/normalizer.cc:48-49).
	if len(mp.normalizer.charsmap) != 0 {
		if cm, err = parseCharsmap(mp.normalizer.charsmap); err != nil {
			return nil, fmt.Errorf("normalizer %q: %v", mp.normalizer.name, err)
		}
	}

	m := &Model{
		name:        name,
		pieces:      mp.pieces,
		pieceIDs:    make(map[string]int, len(mp.pieces)),
		reservedIDs: make(map[string]int),
		unkID:       -1,
		minScore:    math.MaxFloat32,
		maxScore:    math.SmallestNonzeroFloat32 * (1 << 23), // FLT_MIN
		trainer:     mp.trainer,
		normalizer:  mp.normalizer,
		charsmap:    cm,
	}
	userPieces, err := m.indexPieces()
	if err != nil {
		return nil, err
	}
	m.buildLookups(userPieces)
	return m, nil
}

// checkModelType accepts the two segmentation algorithms Encode runs.
func checkModelType(t int) error {
	switch t {
	case modelUnigram, modelBPE:
		return nil
	case modelWord:
		return errors.New("unsupported model_type WORD: not a unigram or BPE model")
	case modelChar:
		return errors.New("unsupported model_type CHAR: not a unigram or BPE model")
	}
	return fmt.Errorf("unsupported model_type %d: not a unigram or BPE model", t)
}

// indexPieces maps each piece to its id, the pieces segmentation may
// choose apart from the reserved ones, and returns the user-defined
// pieces, which are matched whole before segmentation.
func (m *Model) indexPieces() (userPieces []string, err error) {
	for i, p := range m.pieces {
		if p.piece == "" {
			return nil, fmt.Errorf("piece %d is empty", i)
		}
		normal := p.typ == typeNormal || p.typ == typeUserDefined || p.typ == typeUnused
		dst := m.reservedIDs
		if normal {
			dst = m.pieceIDs
		}
		if _, dup := dst[p.piece]; dup {
			return nil, fmt.Errorf("piece %q (id %d) is already defined", p.piece, i)
		}
		dst[p.piece] = i
		switch p.typ {
		case typeNormal:
			m.minScore = min(m.minScore, p.score)
			m.maxScore = max(m.maxScore, p.score)
		case typeUnknown:
			if m.unkID >= 0 {
				return nil, fmt.Errorf("unk is already defined (ids %d and %d)", m.unkID, i)
			}
			m.unkID = i
		case typeUserDefined:
			userPieces = append(userPieces, p.piece)
		case typeControl, typeUnused, typeByte:
		default:
			return nil, fmt.Errorf("piece %d has invalid type %d", i, p.typ)
		}
	}
	if m.unkID < 0 {
		return nil, errors.New("unk is not defined")
	}
	return userPieces, nil
}

// buildLookups builds the byte fallback table and the tries that
// segmentation searches.
func (m *Model) buildLookups(userPieces []string) {
	for b := range m.byteIDs {
		m.byteIDs[b] = m.unkID
		if id, ok := m.reservedIDs[bytePiece(byte(b))]; ok && m.pieces[id].typ == typeByte {
			m.byteIDs[b] = id
		}
	}
	m.trie = buildTrie(m.pieceIDs)
	if len(userPieces) > 0 {
		u := make(map[string]int, len(userPieces))
		for _, p := range userPieces {
			u[p] = m.pieceIDs[p]
		}
		m.user = buildTrie(u)
		m.hasUser = true
	}
}

func bytePiece(b byte) string { return fmt.Sprintf("<0x%02X>", b) }

// Len returns the vocabulary size.
func (m *Model) Len() int { return len(m.pieces) }

// Piece returns the piece string of id, or "" if id is out of range.
func (m *Model) Piece(id int) string {
	if id < 0 || id >= len(m.pieces) {
		return ""
	}
	return m.pieces[id].piece
}

// ID returns the id of piece, and whether it is in the vocabulary. Like
// sentencepiece's PieceToId, a control, unknown or byte piece wins over a
// normal one spelled the same.
func (m *Model) ID(piece string) (int, bool) {
	if id, ok := m.reservedIDs[piece]; ok {
		return id, true
	}
	id, ok := m.pieceIDs[piece]
	return id, ok
}

// oneCharLen is sentencepiece's string_util::OneCharLen: the length of the
// UTF-8 sequence introduced by b, judged from the lead byte only.
func oneCharLen(b byte) int {
	return int("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x02\x02\x03\x04"[b>>4])
}

type bestNode struct {
	id      int
	score   float32
	startAt int
}

// A segment is a piece of the normalized text, norm[begin:end], and its id.
type segment struct{ begin, end, id int }

// Encode tokenizes text into piece ids, like sentencepiece's
// SentencePieceProcessor.EncodeAsIds.
func (m *Model) Encode(text string) []int {
	norm := m.normalize(text)
	if norm == "" {
		return []int{}
	}
	var segs []segment
	if m.trainer.modelType == modelBPE {
		segs = m.encodeBPE(norm)
	} else {
		segs = m.encodeUnigram(norm)
	}

	// As SentencePieceProcessor::PopulateSentencePieceText
	// (google/sentencepiece src/sentencepiece_processor.cc:553-626).
	ids := make([]int, 0, len(segs))
	prevUnk := false
	for _, s := range segs {
		isUnk := s.id == m.unkID
		switch {
		case isUnk && m.trainer.byteFallback:
			for i := s.begin; i < s.end; i++ {
				ids = append(ids, m.byteIDs[norm[i]])
			}
		case isUnk && prevUnk:
			// sentencepiece merges runs of unknown pieces into one <unk>.
		default:
			ids = append(ids, s.id)
		}
		prevUnk = isUnk
	}
	return ids
}

// encodeUnigram segments norm by Viterbi over the piece scores, as
// unigram::Model::EncodeOptimized does (google/sentencepiece
// src/unigram_model.cc:889-1020).
func (m *Model) encodeUnigram(norm string) []segment {
	size := len(norm)
	unkScore := m.minScore - unkPenalty
	best := make([]bestNode, size+1)
	for i := range best {
		best[i].startAt = -1
	}
	best[0].startAt = 0 // only best[0].score (0) is read
	for start := 0; start < size; {
		till := best[start].score
		mblen := min(oneCharLen(norm[start]), size-start)
		hasSingle := false
		m.trie.walk(norm[start:], func(length, id int) {
			typ := m.pieces[id].typ
			if typ == typeUnused {
				return
			}
			t := &best[start+length]
			score := float64(m.pieces[id].score)
			if typ == typeUserDefined {
				// User-defined symbols get a bonus so that they are always
				// selected.
				score = float64(float32(length)*m.maxScore) - 0.1
			}
			// sentencepiece adds and compares in double precision for
			// every piece, not only user-defined ones: its ?: mixes the
			// double bonus with the float score (google/sentencepiece
			// src/unigram_model.cc:979-985). Rounding the sum to float
			// first would break ties between equal paths differently.
			cand := score + float64(till)
			if t.startAt == -1 || cand > float64(t.score) {
				t.score, t.startAt, t.id = float32(cand), start, id
			}
			if length == mblen {
				hasSingle = true
			}
		})
		if !hasSingle {
			t := &best[start+mblen]
			cand := unkScore + till
			if t.startAt == -1 || cand > t.score {
				t.score, t.startAt, t.id = cand, start, m.unkID
			}
		}
		start += mblen
	}

	// Backtrack; count the nodes first to fill ids in order.
	n := 0
	for end := size; end > 0; end = best[end].startAt {
		n++
	}
	segs := make([]segment, n)
	for end := size; end > 0; end = best[end].startAt {
		n--
		segs[n] = segment{best[end].startAt, end, best[end].id}
	}
	return segs
}

// Decode turns ids back into text, like sentencepiece's
// SentencePieceProcessor.DecodeIds. Control ids (<s>, </s>, ...) decode to
// nothing, <unk> to the model's unk_surface (" ⁇ " by default), and runs of
// byte pieces to the UTF-8 text they spell (U+FFFD per invalid byte). Ids out
// of range are skipped (sentencepiece reports an error for them).
func (m *Model) Decode(ids []int) string {
	var text strings.Builder
	// The piece that starts the text loses its leading "▁", the dummy
	// prefix. With extra whitespace removed every piece does until text
	// is written; otherwise only the first "▁" goes
	// (google/sentencepiece src/sentencepiece_processor.cc:792-807, :894).
	stripBOS := m.normalizer.addDummyPrefix || m.normalizer.removeExtraWhitespaces
	bosStripped := false
	var bytes []byte
	flush := func() {
		for off := 0; off < len(bytes); {
			r, n := utf8.DecodeRune(bytes[off:])
			if r == utf8.RuneError && n <= 1 {
				text.WriteString(replacementChar)
				off++
				continue
			}
			text.Write(bytes[off : off+n])
			off += n
		}
		bytes = bytes[:0]
	}
	for _, id := range ids {
		if id < 0 || id >= len(m.pieces) {
			continue
		}
		p := m.pieces[id]
		if p.typ == typeByte {
			if b, ok := parseBytePiece(p.piece); ok {
				bytes = append(bytes, b)
				continue
			}
		}
		flush()
		switch p.typ {
		case typeControl:
			continue
		case typeUnknown:
			text.WriteString(m.trainer.unkSurface)
			continue
		}
		piece := p.piece
		if stripBOS && !bosStripped && text.Len() == 0 {
			var cut bool
			piece, cut = strings.CutPrefix(piece, spaceSymbol)
			bosStripped = cut && !m.normalizer.removeExtraWhitespaces
		}
		text.WriteString(strings.ReplaceAll(piece, spaceSymbol, " "))
	}
	flush()
	return text.String()
}

func parseBytePiece(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v*16 + int(c-'0')
		case c >= 'A' && c <= 'F':
			v = v*16 + int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return byte(v), true
}
