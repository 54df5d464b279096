package spm

import "container/heap"

// A bpeSymbol is a run of the normalized text, norm[begin:end], in the
// linked list of symbols that merges shorten.
type bpeSymbol struct {
	prev, next int // -1 at either end
	begin, end int // empty once merged into the symbol before it
	freeze     bool
}

// A bpePair is a candidate merge of symbols left and right, which spelled
// a piece of size bytes when it was found.
type bpePair struct {
	left, right int
	score       float32
	size        int
}

// bpeAgenda is a max-heap of candidate merges: the best score first, the
// leftmost among equals (google/sentencepiece src/bpe_model.cc:51-57).
type bpeAgenda []bpePair

func (a bpeAgenda) Len() int { return len(a) }

func (a bpeAgenda) Less(i, j int) bool {
	return a[i].score > a[j].score || a[i].score == a[j].score && a[i].left < a[j].left
}

func (a bpeAgenda) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *bpeAgenda) Push(x any)   { *a = append(*a, x.(bpePair)) }

func (a *bpeAgenda) Pop() any {
	old := *a
	p := old[len(old)-1]
	*a = old[:len(old)-1]
	return p
}

// encodeBPE segments norm as bpe::Model::Encode does
// (src/bpe_model.cc:38-203, without dropout): starting from characters and
// user-defined pieces, it merges the adjacent pair that spells the
// best-scoring piece until no pair spells one.
func (m *Model) encodeBPE(norm string) []segment {
	syms := make([]bpeSymbol, 0, len(norm))
	for i := 0; i < len(norm); { // bpe_model.cc:110-120
		n, freeze := m.prefixMatch(norm[i:])
		syms = append(syms, bpeSymbol{prev: len(syms) - 1, next: len(syms) + 1, begin: i, end: i + n, freeze: freeze})
		i += n
	}
	syms[len(syms)-1].next = -1

	var agenda bpeAgenda
	// revMerge maps an unused piece to the two pieces it was last found
	// merging from, to split it back into (bpe_model.cc:102-106).
	var revMerge map[string][2]string
	addPair := func(left, right int) { // bpe_model.cc:83-107
		if left < 0 || right < 0 || syms[left].freeze || syms[right].freeze {
			return
		}
		l, r := syms[left], syms[right]
		piece := norm[l.begin:r.end]
		id, ok := m.pieceIDs[piece]
		if !ok {
			return
		}
		heap.Push(&agenda, bpePair{left: left, right: right, score: m.pieces[id].score, size: len(piece)})
		if m.pieces[id].typ == typeUnused {
			if revMerge == nil {
				revMerge = make(map[string][2]string)
			}
			revMerge[piece] = [2]string{norm[l.begin:l.end], norm[r.begin:r.end]}
		}
	}
	for i := 1; i < len(syms); i++ {
		addPair(i-1, i)
	}

	for agenda.Len() > 0 { // bpe_model.cc:142-173
		top := heap.Pop(&agenda).(bpePair)
		l, r := &syms[top.left], &syms[top.right]
		// A pair whose symbols have merged since it was found is stale.
		if l.begin == l.end || r.begin == r.end || (l.end-l.begin)+(r.end-r.begin) != top.size {
			continue
		}
		l.end = r.end
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = top.left
		}
		r.begin = r.end
		addPair(l.prev, top.left)
		addPair(top.left, l.next)
	}

	segs := make([]segment, 0, len(syms))
	pos := 0
	// resegment splits unused pieces back into pieces that are used
	// (bpe_model.cc:176-193).
	var resegment func(w string)
	resegment = func(w string) {
		id := m.pieceToID(w)
		if m.pieces[id].typ == typeUnused {
			if p, ok := revMerge[w]; ok {
				resegment(p[0])
				resegment(p[1])
				return
			}
		}
		segs = append(segs, segment{pos, pos + len(w), id})
		pos += len(w)
	}
	for i := 0; i >= 0; i = syms[i].next {
		resegment(norm[syms[i].begin:syms[i].end])
	}
	return segs
}

// pieceToID is sentencepiece's PieceToId: the id of piece, or of <unk>.
func (m *Model) pieceToID(piece string) int {
	if id, ok := m.ID(piece); ok {
		return id
	}
	return m.unkID
}
