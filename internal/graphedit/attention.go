package graphedit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// KVCache names one attention layer's key and value caches in a decode
// step graph, each as its graph input (past) and output (present).
type KVCache struct {
	Key, Value [2]string
}

// DecodeStep names what SharedKVAttention reads of a decode step graph.
type DecodeStep struct {
	// Rows is the graph input of the rows fed, laid [batch, rows, ...];
	// Lengths the one of each batch row's cached rows (MOSS:
	// past_valid_lengths), which is the first fed row's position.
	Rows, Lengths string
	// Hidden are the outputs laid [batch, rows, ...].
	Hidden []string
	Caches []KVCache
}

// ErrNotAttention is returned by SharedKVAttention for a graph whose
// attention is not the form it rewrites; the reason follows it.
var ErrNotAttention = errors.New("the graph's attention is not one a shared KV buffer can replace")

// SharedKVAttention rewrites a decode step whose KV caches grow by a
// Concat into one whose caches are buffers written in place by ONNX
// Runtime's GroupQueryAttention (com.microsoft), and which takes any
// number of rows at once: a prefill that continues from the cache.
//
// A growing cache is a Concat of the cached keys (or values), laid
// [batch, entries, heads, head_dim], and the step's new ones, which the
// graph returns as the next step's cache and which the attention reads
// transposed to [batch, heads, head_dim, entries] (keys) and [batch,
// heads, entries, head_dim] (values): every step copies the whole cache
// three times (MOSS-TTS-Nano's global transformer: 37 of a step's 90 MB
// at 250 entries, half its time). GroupQueryAttention takes the cache
// laid [batch, heads, capacity, head_dim] and, when its present output
// is its past input's buffer, writes only the new entries there, after
// the cached ones, and attends over those and, causally, the new ones
// without copying the rest (onnxruntime
// contrib_ops/cpu/bert/gqa_attention_base.h: past_present_share_buffer is
// past_key's data being present_key's; a "subsequent prompt" is several
// new entries after cached ones). The rewritten graph's caches are
// declared in the new layout, their entries' axis its capacity; a caller
// binds each present output to its past input's tensor.
//
// Per layer the rewrite finds, from the caches, the attention it
// replaces: the keys' Concat read through a Transpose by a MatMul with
// the queries (laid [batch, heads, rows, head_dim] by a Transpose), scaled
// by a constant (Mul or Div), maybe masked (an Add of a bias, or a Where:
// upstream's masked_fill), a Softmax over the entries, and its MatMul with
// the values' Concat read through a Transpose. GroupQueryAttention masks
// nothing but the entries past the count and, among the new rows, those
// after each: the graph's mask must let a step see every cached entry and
// its own, which MOSS's does when every cached entry is valid, as its
// runtimes feed it (past_valid_lengths is the cache's length;
// OpenMOSS/MOSS-TTS-Nano ort_cpu_runtime.py:678, and the export's mask
// keeps keys up to past_valid_lengths,
// onnx/export_moss_tts_browser_onnx.py:213-221).
//
// The rows' positions: a decode step computes its one row's position as
// Lengths put on an axis of its own (an Unsqueeze on axis 1, maybe after
// Casts: export_moss_tts_browser_onnx.py:277, past_valid_lengths
// .unsqueeze(1)); the rewrite adds 0, 1, ... for the rows fed. Only the
// order of the sums changes: the results agree to rounding, which whoever
// loads the rewritten graph is to check against the original.
func SharedKVAttention(model []byte, step DecodeStep) ([]byte, error) {
	var rewriteErr error
	out, err := Rewrite(model, func(g []byte) ([]byte, bool, error) {
		e, err := newGraphEdit(g, ErrNotAttention)
		if err == nil {
			err = e.sharedKV(step)
		}
		var b []byte
		if err == nil {
			b, err = e.encode()
		}
		rewriteErr = err
		return b, true, err
	})
	if rewriteErr != nil {
		return nil, rewriteErr
	}
	return out, err
}

func (e *graphEdit) sharedKV(step DecodeStep) error {
	decl, ok := e.declared[step.Lengths]
	if !ok || len(decl.dims) != 1 {
		return fmt.Errorf("%w: no graph input %s of one axis", ErrNotAttention, step.Lengths)
	}
	if rows, ok := e.declared[step.Rows]; !ok || len(rows.dims) < 2 {
		return fmt.Errorf("%w: no graph input %s of two axes or more", ErrNotAttention, step.Rows)
	}
	const p = "shared_kv/"
	e.addInit(p+"rows_axis", nil, 1)
	e.addInit32(p+"one", nil, 1)
	e.addedFirst(
		NewNode("Shape", []string{step.Rows}, p+"rows_shape"),
		NewNode("Gather", []string{p + "rows_shape", p + "rows_axis"}, p+"rows"),
		NewNode("Cast", []string{p + "rows"}, p+"rows32", IntAttr("to", typeInt32)),
	)
	// GroupQueryAttention counts in int32: seqlens_k per batch row, its
	// entries less one once the rows are in, and total_sequence_length,
	// the most entries any row attends.
	counts := step.Lengths
	if decl.elemType != typeInt32 {
		counts = p + "lengths32"
		e.addedFirst(NewNode("Cast", []string{step.Lengths}, counts, IntAttr("to", typeInt32)))
	}
	e.addedFirst(
		NewNode("Sub", []string{p + "rows32", p + "one"}, p+"rows_after_first"),
		NewNode("Add", []string{counts, p + "rows_after_first"}, p+"seqlens_k"),
		NewNode("ReduceMax", []string{counts}, p+"most", IntAttr("keepdims", 0)),
		NewNode("Add", []string{p + "most", p + "rows32"}, p+"total"),
	)
	e.addInit(p+"flat", []int64{3}, 0, 0, -1)
	for _, c := range step.Caches {
		if err := e.sharedLayer(c, p+"seqlens_k", p+"total", p+"flat"); err != nil {
			return err
		}
	}
	if err := e.rowPositions(step.Lengths, decl.elemType, p+"rows"); err != nil {
		return err
	}
	e.resize(map[int64]int64{1: freeAxis}, append([]string{step.Rows}, step.Hidden...)...)
	return nil
}

// rowPositions gives the rows fed their positions: every Unsqueeze on
// axis 1 of lengths (maybe through Casts, of type typ then) is the first
// row's position, to which the rewrite adds each row's offset, 0 to
// rows - 1 (rows an int64 scalar). One that only the replaced attention's
// mask read goes with it.
func (e *graphEdit) rowPositions(lengths string, typ int64, rows string) error {
	found := false
	var follow func(name string, typ int64) error
	follow = func(name string, typ int64) error {
		for _, r := range e.readers[name] {
			switch r.OpType {
			case "Cast":
				if err := follow(r.outputs[0], r.Ints["to"]); err != nil {
					return err
				}
			case "Unsqueeze":
				axes := r.lists["axes"]
				if len(r.Inputs) > 1 {
					axes, _ = e.int64s(r.Inputs[1])
				}
				if !slices.Equal(axes, []int64{1}) {
					continue
				}
				if err := e.offsetRows(r.outputs[0], typ, rows); err != nil {
					return err
				}
				found = true
			}
		}
		return nil
	}
	if err := follow(lengths, typ); err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: no position is %s on an axis of its own", ErrNotAttention, lengths)
	}
	return nil
}

// offsetRows has what reads position (a [batch, 1] tensor of type typ)
// read position + [0, 1, ..., rows - 1] instead.
func (e *graphEdit) offsetRows(position string, typ int64, rows string) error {
	p := "shared_kv/" + position + "/"
	switch typ {
	case TypeFloat:
		e.addFloat(p+"zero", 0)
		e.addFloat(p+"one", 1)
	case typeInt32:
		e.addInit32(p+"zero", nil, 0)
		e.addInit32(p+"one", nil, 1)
	case typeInt64:
		e.addInit(p+"zero", nil, 0)
		e.addInit(p+"one", nil, 1)
	default:
		return fmt.Errorf("%w: the position %s is of type %d", ErrNotAttention, position, typ)
	}
	e.addedFirst(
		NewNode("Cast", []string{rows}, p+"rows", IntAttr("to", typ)),
		NewNode("Range", []string{p + "zero", p + "rows", p + "one"}, p+"offsets"),
		NewNode("Add", []string{position, p + "offsets"}, p+"rows_positions"),
	)
	e.renamed[position] = p + "rows_positions"
	return nil
}

// addedFirst places nodes before the graph's first node.
func (e *graphEdit) addedFirst(nodes ...*Node) {
	first := e.gr.Nodes[0]
	e.addedAt[first] = append(e.addedAt[first], nodes...)
}

// sharedLayer rewrites one layer's attention.
func (e *graphEdit) sharedLayer(c KVCache, counts, total, flat string) error {
	a, err := e.matchAttention(c)
	if err != nil {
		return err
	}
	e.attendShared(c, a, counts, total, flat)
	return nil
}

// layerAttention is one layer's attention over its growing cache, as
// matchAttention found it.
type layerAttention struct {
	// kConcat and vConcat make the present keys and values; query
	// transposes the queries to [batch, heads, rows, head_dim]; weighted
	// weighs the values by the probabilities.
	kConcat, vConcat, query, weighted *Node
	heads, width                      int64
	scale                             float32
	// replaced are the nodes the shared attention stands in for.
	replaced []*Node
}

// matchAttention finds the attention over c: the growing key and value
// caches, the scores of the queries against the keys, scaled, masked and
// Softmaxed, and the values weighed by them.
func (e *graphEdit) matchAttention(c KVCache) (*layerAttention, error) {
	kDecl, kConcat, err := e.growing(c.Key)
	if err != nil {
		return nil, err
	}
	vDecl, vConcat, err := e.growing(c.Value)
	if err != nil {
		return nil, err
	}
	heads, width := kDecl.dims[2], kDecl.dims[3]
	if heads <= 0 || width <= 0 || !slices.Equal(vDecl.dims[2:], kDecl.dims[2:]) {
		return nil, fmt.Errorf("%w: %s is %v and %s %v: heads and head size must be fixed and alike", ErrNotAttention, c.Key[0], kDecl.dims, c.Value[0], vDecl.dims)
	}
	a := &layerAttention{kConcat: kConcat, vConcat: vConcat, heads: heads, width: width, scale: 1,
		replaced: []*Node{kConcat, vConcat}}
	scores, err := e.matchScores(c, a)
	if err != nil {
		return nil, err
	}
	probs, err := e.matchSoftmax(c, a, scores)
	if err != nil {
		return nil, err
	}
	if err := e.matchWeighting(c, a, probs); err != nil {
		return nil, err
	}
	return a, nil
}

// matchScores finds the MatMul of the queries, [batch, rows, heads,
// head_dim] transposed, and the present keys transposed [0 2 3 1].
func (e *graphEdit) matchScores(c KVCache, a *layerAttention) (*Node, error) {
	kRead, err := e.onlyReader(c.Key[1], "Transpose", 0)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(kRead.lists["perm"], []int64{0, 2, 3, 1}) {
		return nil, fmt.Errorf("%w: %s is read transposed by %v, not [0 2 3 1]", ErrNotAttention, c.Key[1], kRead.lists["perm"])
	}
	scores, err := e.onlyReader(kRead.outputs[0], "MatMul", 1)
	if err != nil {
		return nil, err
	}
	qRead := e.producer[scores.Inputs[0]]
	if qRead == nil || qRead.OpType != "Transpose" || !slices.Equal(qRead.lists["perm"], []int64{0, 2, 1, 3}) {
		return nil, fmt.Errorf("%w: the queries that %s meets are not transposed [0 2 1 3] from [batch, rows, heads, head_dim]", ErrNotAttention, c.Key[1])
	}
	a.query = qRead
	a.replaced = append(a.replaced, kRead, scores)
	return scores, nil
}

// matchSoftmax follows the scores through their scaling by constants
// (into a.scale) and their mask to the Softmax over the entries.
func (e *graphEdit) matchSoftmax(c KVCache, a *layerAttention, scores *Node) (*Node, error) {
	at := scores
	for {
		r := e.readers[at.outputs[0]]
		if len(r) != 1 {
			return nil, fmt.Errorf("%w: %s's attention scores are read by %v", ErrNotAttention, c.Key[1], opTypes(r))
		}
		next := r[0]
		if next.OpType == "Softmax" {
			if axis := next.Ints["axis"]; axis != -1 && axis != 3 {
				return nil, fmt.Errorf("%w: %s's Softmax is over axis %d, not the entries", ErrNotAttention, c.Key[1], axis)
			}
			a.replaced = append(a.replaced, next)
			return next, nil
		}
		switch next.OpType {
		case "Mul", "Div":
			other := next.Inputs[0]
			if other == at.outputs[0] {
				other = next.Inputs[1]
			} else if next.OpType == "Div" {
				return nil, fmt.Errorf("%w: %s's scores divide a constant", ErrNotAttention, c.Key[1])
			}
			v, ok := e.scalar(other)
			if !ok {
				return nil, fmt.Errorf("%w: %s's scores are scaled by %s, not a constant", ErrNotAttention, c.Key[1], other)
			}
			if next.OpType == "Div" {
				v = 1 / v
			}
			a.scale *= v
		case "Add", "Where":
			// The mask, added (a bias) or filled in (upstream's
			// masked_fill): what it hides the buffer's count hides, which
			// the caller's check confirms.
			if next.OpType == "Where" && next.Inputs[0] == at.outputs[0] {
				return nil, fmt.Errorf("%w: %s's attention scores are a Where's condition", ErrNotAttention, c.Key[1])
			}
		default:
			return nil, fmt.Errorf("%w: %s's attention scores go through a %s", ErrNotAttention, c.Key[1], next.OpType)
		}
		a.replaced = append(a.replaced, next)
		at = next
	}
}

// matchWeighting finds the MatMul of the probabilities and the present
// values transposed [0 2 1 3].
func (e *graphEdit) matchWeighting(c KVCache, a *layerAttention, probs *Node) error {
	weighted, err := e.onlyReader(probs.outputs[0], "MatMul", 0)
	if err != nil {
		return err
	}
	vRead, err := e.onlyReader(c.Value[1], "Transpose", 0)
	if err != nil {
		return err
	}
	if !slices.Equal(vRead.lists["perm"], []int64{0, 2, 1, 3}) || weighted.Inputs[1] != vRead.outputs[0] {
		return fmt.Errorf("%w: the attention does not weigh %s transposed [0 2 1 3]", ErrNotAttention, c.Value[1])
	}
	a.weighted = weighted
	a.replaced = append(a.replaced, vRead, weighted)
	return nil
}

// attendShared puts a GroupQueryAttention over the shared buffer in a's
// place, its output transposed back to what the weighting made, and
// marks the cache's tensors as permuted to its layout.
func (e *graphEdit) attendShared(c KVCache, a *layerAttention, counts, total, flat string) {
	p := "shared_kv/" + c.Key[0] + "/"
	e.addInit(p+"heads", []int64{4}, 0, 0, a.heads, a.width)
	attend := &Node{
		Inputs:  []string{p + "q", p + "k", p + "v", c.Key[0], c.Value[0], counts, total},
		outputs: []string{p + "out", c.Key[1], c.Value[1]},
		OpType:  "GroupQueryAttention", Domain: MSDomain,
		Extra: [][]byte{IntAttr("num_heads", a.heads), IntAttr("kv_num_heads", a.heads), FloatAttr("scale", a.scale)},
	}
	for _, o := range attend.outputs {
		attend.Fields = append(attend.Fields, protowire.AppendString(protowire.AppendTag(nil, nodeOutput, protowire.BytesType), o))
	}
	e.addedAt[a.weighted] = []*Node{
		NewNode("Reshape", []string{a.query.Inputs[0], flat}, p+"q"),
		NewNode("Reshape", []string{a.kConcat.Inputs[1], flat}, p+"k"),
		NewNode("Reshape", []string{a.vConcat.Inputs[1], flat}, p+"v"),
		attend,
		NewNode("Reshape", []string{p + "out", p + "heads"}, p+"out_heads"),
		NewNode("Transpose", []string{p + "out_heads"}, a.weighted.outputs[0], intsAttr("perm", []int64{0, 2, 1, 3})),
	}
	for _, n := range a.replaced {
		e.removed[n] = true
	}
	for _, name := range []string{c.Key[0], c.Key[1], c.Value[0], c.Value[1]} {
		e.permuted[name] = []int64{0, 2, 1, 3}
	}
}

// growing finds the cache that t (past, present) names: the past's
// declaration, [batch, entries, heads, head_dim], and the Concat of it and
// the step's entries along the entries that is the present.
func (e *graphEdit) growing(t [2]string) (valueDecl, *Node, error) {
	decl, ok := e.declared[t[0]]
	if !ok || len(decl.dims) != 4 {
		return decl, nil, fmt.Errorf("%w: no graph input %s of four axes", ErrNotAttention, t[0])
	}
	var concat *Node
	for _, n := range e.readers[t[0]] {
		switch {
		case n.OpType == "Shape":
			// The mask's length (MOSS's is the past's entries + 1): in the
			// new layout its axis means another thing, so the rewrite
			// holds only if nothing reads it once the attention is gone.
			e.mustGo = append(e.mustGo, n)
		case concat == nil && n.OpType == "Concat" && len(n.Inputs) == 2 && n.Inputs[0] == t[0] && n.outputs[0] == t[1]:
			concat = n
		default:
			return decl, nil, fmt.Errorf("%w: %s is read by %v, not by a Concat that is %s and Shapes", ErrNotAttention, t[0], opTypes(e.readers[t[0]]), t[1])
		}
	}
	if concat == nil {
		return decl, nil, fmt.Errorf("%w: %s is read by %v, not by a Concat that is %s", ErrNotAttention, t[0], opTypes(e.readers[t[0]]), t[1])
	}
	if axis := concat.Ints["axis"]; axis != 1 && axis != -3 {
		return decl, nil, fmt.Errorf("%w: %s grows along axis %d, not its entries", ErrNotAttention, t[0], axis)
	}
	return decl, concat, nil
}

// onlyReader is the one node that reads name, which must be an op reading
// it as its input at.
func (e *graphEdit) onlyReader(name, op string, at int) (*Node, error) {
	r := e.readers[name]
	if len(r) != 1 || r[0].OpType != op || len(r[0].Inputs) <= at || r[0].Inputs[at] != name {
		return nil, fmt.Errorf("%w: %s is read by %v, not only by a %s", ErrNotAttention, name, opTypes(r), op)
	}
	return r[0], nil
}

// scalar is the value of a one-element fp32 constant: a Constant node's
// or an initializer's.
func (e *graphEdit) scalar(name string) (float32, bool) {
	t, _ := e.constant(name)
	if t == nil || len(t.Floats) != 1 {
		return 0, false
	}
	return t.Floats[0], true
}

// int64s are the values of an int64 constant held in its raw data.
func (e *graphEdit) int64s(name string) ([]int64, bool) {
	t, body := e.constant(name)
	if t == nil {
		return nil, false
	}
	var typ int64
	var raw []byte
	_ = eachField(body, func(num protowire.Number, wt protowire.Type, val, _ []byte) error {
		switch {
		case num == tensorType && wt == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			typ = int64(x)
		case num == tensorRaw && wt == protowire.BytesType:
			raw = val
		}
		return nil
	})
	if typ != typeInt64 || len(raw)%8 != 0 {
		return nil, false
	}
	v := make([]int64, len(raw)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	return v, true
}

// constant is a Constant node's tensor or an initializer, and its
// TensorProto.
func (e *graphEdit) constant(name string) (t *Tensor, body []byte) {
	if init := e.gr.Weight(name); init != nil {
		_, _, n := protowire.ConsumeTag(init.raw)
		body, _ = protowire.ConsumeBytes(init.raw[n:])
		return init, body
	}
	c := e.producer[name]
	if c == nil || c.OpType != "Constant" {
		return nil, nil
	}
	for _, f := range c.Fields {
		num, _, n := protowire.ConsumeTag(f)
		if num != nodeAttr {
			continue
		}
		attr, _ := protowire.ConsumeBytes(f[n:])
		_ = eachField(attr, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
			if num == attrTensor && typ == protowire.BytesType {
				t, _ = readTensor(val, raw)
				body = val
			}
			return nil
		})
	}
	return t, body
}

// addFloat adds an fp32 scalar initializer.
func (e *graphEdit) addFloat(name string, v float32) {
	e.inits = append(e.inits, TensorBytes(name, TypeFloat, nil, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v))))
	e.initName[name] = true
}

// addInit32 adds an int32 initializer.
func (e *graphEdit) addInit32(name string, dims []int64, v ...int32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	e.inits = append(e.inits, TensorBytes(name, typeInt32, dims, b))
	e.initName[name] = true
}

// Field numbers and types the attention rewrite writes besides the
// others (AttributeProto, TensorProto.DataType).
const (
	attrTensor    = 5
	attrTypeFloat = 1
	typeInt32     = 6
)
