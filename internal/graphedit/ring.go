package graphedit

import (
	"errors"
	"fmt"
)

// SlidingCache names one attention layer's sliding caches in a streaming
// graph: the positions that tag each cached entry, and the tensors cached
// beside them (keys, values), each as its graph input and output.
type SlidingCache struct {
	Positions [2]string
	Tensors   [][2]string
	// Ring is the length the caches take as rings: at least the
	// window plus the most entries one call adds, so that every entry a
	// call's queries may see is still there when they look.
	Ring int64
}

// ErrNotSliding is returned by RingCaches for a graph whose caches are not
// the Concat-then-Slice it rewrites; the reason follows it.
var ErrNotSliding = errors.New("the graph's caches do not slide as a ring can replace")

// RingCaches rewrites a streaming graph whose caches slide into one whose
// caches are rings written in place.
//
// A sliding cache is a Concat of the cached entries and the call's new
// ones, which the attention reads, and a Slice of its last entries, which
// the graph returns for the next call: every call copies the whole cache
// twice (MOSS's codec: 25 MB of caches, 4 of its 11 ms a call). As a ring
// of length Ring, the call writes only its new entries, at their positions
// modulo Ring (ScatterElements), and the attention reads the ring. The
// attention must tell entries by the positions the graph carries beside
// them, not by where they lie, which a graph with a positions cache does
// (its mask compares query and key positions); the ring's extra entries,
// outside the window, are masked as the sliding cache's dropped ones were.
// Only the order of the attended entries changes, and with it the order of
// the sums: the results agree to rounding, not bit for bit, which whoever
// loads the rewritten graph is to check against the original.
//
// ScatterElements copies its data input to its output unless they are
// the same buffer (ONNX Runtime,
// onnxruntime/core/providers/cpu/tensor/scatter.cc: "We allow runtime to
// re-use input for output"): a caller that binds each cache's output to
// its input's tensor writes the ring in place. The graph's cache inputs
// and outputs are declared Ring long.
func RingCaches(model []byte, caches []SlidingCache) ([]byte, error) {
	var ringErr error
	out, err := Rewrite(model, func(g []byte) ([]byte, bool, error) {
		b, err := ringGraph(g, caches)
		ringErr = err
		return b, false, err
	})
	if ringErr != nil {
		return nil, ringErr
	}
	return out, err
}

func ringGraph(g []byte, caches []SlidingCache) ([]byte, error) {
	e, err := newGraphEdit(g, ErrNotSliding)
	if err != nil {
		return nil, err
	}
	for _, c := range caches {
		if err := e.ring(c); err != nil {
			return nil, err
		}
	}
	return e.encode()
}

// ring rewrites one layer's caches.
func (e *graphEdit) ring(c SlidingCache) error {
	if c.Ring <= 0 {
		return fmt.Errorf("graphedit: ring length %d for %s", c.Ring, c.Positions[0])
	}
	in, out := c.Positions[0], c.Positions[1]
	// The positions may be widened for the Concat and narrowed back for
	// the output (torch.onnx.export's int64 arithmetic on int32 inputs).
	read, widen := in, (*Node)(nil)
	if r := e.readers[in]; len(r) == 1 && r[0].OpType == "Cast" {
		widen, read = r[0], r[0].outputs[0]
	}
	decl, concat, slice, axis, err := e.sliding(in, read, out, true)
	if err != nil {
		return err
	}
	p := "ring/" + in + "/"
	fresh := concat.Inputs[1]
	rLen := p + "length"
	e.addInit(rLen, []int64{1}, c.Ring)
	add := []*Node{
		NewNode("Cast", []string{fresh}, p+"fresh64", IntAttr("to", typeInt64)),
		NewNode("Mod", []string{p + "fresh64", rLen}, p+"slot"),
		NewNode("Cast", []string{fresh}, p+"fresh", IntAttr("to", decl.elemType)),
		NewNode("ScatterElements", []string{in, p + "slot", p + "fresh"}, out, IntAttr("axis", axis)),
	}
	if widen != nil {
		add = append(add, NewNode("Cast", []string{out}, p+"read", IntAttr("to", widen.Ints["to"])))
		e.renamed[concat.outputs[0]] = p + "read"
		e.removed[widen] = true
	} else {
		e.renamed[concat.outputs[0]] = out
	}
	e.removed[concat], e.removed[slice] = true, true
	if r := e.readers[slice.outputs[0]]; len(r) == 1 && slice.outputs[0] != out {
		e.removed[r[0]] = true // the Cast back to the output's type
	}
	e.resize(map[int64]int64{axis: c.Ring}, in, out)
	for _, t := range c.Tensors {
		more, err := e.ringTensor(t, p+"slot", c.Ring)
		if err != nil {
			return err
		}
		add = append(add, more...)
	}
	e.addedAt[concat] = add
	return nil
}

// ringTensor rewrites a cache kept beside the positions: its new entries
// go where their positions' slots say. A cache the attention reads
// transposed (the keys, for the product with the queries: a Transpose
// that swaps the entries' axis with the last) is kept transposed, so that
// the call does not transpose the whole cache again: only the new entries
// are, and the ring is laid along the last axis.
func (e *graphEdit) ringTensor(t [2]string, slot string, length int64) ([]*Node, error) {
	in, out := t[0], t[1]
	decl, concat, slice, axis, err := e.sliding(in, in, out, false)
	if err != nil {
		return nil, err
	}
	p := "ring/" + in + "/"
	fresh := concat.Inputs[1]
	e.renamed[concat.outputs[0]] = out
	e.removed[concat], e.removed[slice] = true, true
	var add []*Node
	rank := len(decl.dims)
	last := int64(rank - 1)
	if tr := e.transposedRead(concat, slice, axis, last); tr != nil {
		// The cache's own dims swap too: its entries' length goes last.
		width := decl.dims[last]
		if width <= 0 {
			return nil, fmt.Errorf("%w: %s's last axis has no fixed length", ErrNotSliding, in)
		}
		add = append(add, NewNode("Transpose", []string{fresh}, p+"fresh", intsAttr("perm", tr.lists["perm"])))
		e.renamed[tr.outputs[0]] = out
		e.removed[tr] = true
		e.resize(map[int64]int64{last: length, axis: width}, in, out)
		fresh, axis = p+"fresh", last
	} else {
		e.resize(map[int64]int64{axis: length}, in, out)
	}
	// The slots, one per new entry ([1, n] for a batch of one), laid
	// along the cache's axis and spread over its other axes.
	shape := make([]int64, rank)
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = -1
	e.addInit(p+"along", []int64{int64(rank)}, shape...)
	return append(add,
		NewNode("Reshape", []string{slot, p + "along"}, p+"slots"),
		NewNode("Shape", []string{fresh}, p+"shape"),
		NewNode("Expand", []string{p + "slots", p + "shape"}, p+"index"),
		NewNode("ScatterElements", []string{in, p + "index", fresh}, out, IntAttr("axis", axis)),
	), nil
}

// transposedRead is the Transpose through which everything but the
// Slice reads a cache's Concat, if it swaps the Concat's axis with the
// last one.
func (e *graphEdit) transposedRead(concat, slice *Node, axis, last int64) *Node {
	var tr *Node
	for _, n := range e.readers[concat.outputs[0]] {
		if n == slice {
			continue
		}
		if n.OpType != "Transpose" || tr != nil {
			return nil
		}
		tr = n
	}
	if tr == nil || axis == last {
		return nil
	}
	perm := tr.lists["perm"]
	if int64(len(perm)) != last+1 {
		return nil
	}
	for i, p := range perm {
		want := int64(i)
		switch int64(i) {
		case axis:
			want = last
		case last:
			want = axis
		}
		if p != want {
			return nil
		}
	}
	return tr
}

// sliding finds the sliding cache that the graph input in is: its
// declaration, the Concat that read (in, or in widened) goes into, first
// of two, the Slice of it that becomes out, directly or (castBack)
// through one Cast, and the Concat's axis counted from the front.
func (e *graphEdit) sliding(in, read, out string, castBack bool) (decl valueDecl, concat, slice *Node, axis int64, err error) {
	decl, ok := e.declared[in]
	if !ok {
		return decl, nil, nil, 0, fmt.Errorf("%w: no graph input %s", ErrNotSliding, in)
	}
	r := e.readers[read]
	if len(r) != 1 || r[0].OpType != "Concat" || len(r[0].Inputs) != 2 || r[0].Inputs[0] != read {
		return decl, nil, nil, 0, fmt.Errorf("%w: %s is read by %s, not only as the first of a Concat's two inputs", ErrNotSliding, read, opTypes(r))
	}
	concat = r[0]
	if axis, err = normalAxis(concat, len(decl.dims)); err != nil {
		return decl, nil, nil, 0, err
	}
	for _, n := range e.readers[concat.outputs[0]] {
		if n.OpType != "Slice" || n.Inputs[0] != concat.outputs[0] {
			continue
		}
		if n.outputs[0] == out {
			return decl, concat, n, axis, nil
		}
		if rr := e.readers[n.outputs[0]]; castBack && len(rr) == 1 && rr[0].OpType == "Cast" && rr[0].outputs[0] == out {
			return decl, concat, n, axis, nil
		}
	}
	return decl, nil, nil, 0, fmt.Errorf("%w: no Slice of %s's Concat is the output %s", ErrNotSliding, read, out)
}

// normalAxis is a Concat's axis counted from the front.
func normalAxis(concat *Node, rank int) (int64, error) {
	axis := concat.Ints["axis"]
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, fmt.Errorf("%w: a Concat's axis %d for rank %d", ErrNotSliding, concat.Ints["axis"], rank)
	}
	return axis, nil
}
