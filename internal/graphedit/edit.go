package graphedit

import (
	"encoding/binary"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// graphEdit is what a rewrite of one graph does: nodes it removes and
// adds (each added one placed where a node it replaces was), names whose
// readers read another name, graph inputs and outputs whose axes get new
// lengths or a new order, and the initializers it adds. Nodes that
// nothing reads any more once it is done go too.
type graphEdit struct {
	gr       *Graph
	readers  map[string][]*Node
	producer map[string]*Node
	declared map[string]valueDecl
	removed  map[*Node]bool
	addedAt  map[*Node][]*Node
	renamed  map[string]string
	resized  map[string]map[int64]int64 // axis -> its new length
	permuted map[string][]int64         // the axes' new order
	// mustGo are nodes the rewrite holds only without: nothing may read
	// them once the replaced nodes are gone.
	mustGo   []*Node
	inits    [][]byte
	initName map[string]bool
	// refused wraps every error that says the graph is not the form the
	// rewrite replaces.
	refused error
}

// newGraphEdit reads g for a rewrite that refuses, with refused, a graph
// it cannot follow.
func newGraphEdit(g []byte, refused error) (*graphEdit, error) {
	gr, err := ReadGraph(g)
	if err != nil {
		return nil, err
	}
	e := &graphEdit{gr: gr, readers: map[string][]*Node{}, producer: map[string]*Node{}, removed: map[*Node]bool{},
		addedAt: map[*Node][]*Node{}, renamed: map[string]string{}, resized: map[string]map[int64]int64{},
		permuted: map[string][]int64{}, initName: map[string]bool{}, refused: refused}
	for _, n := range gr.Nodes {
		if n.subgraphs {
			return nil, fmt.Errorf("%w: a %s node holds a subgraph", refused, n.OpType)
		}
		for _, in := range n.Inputs {
			e.readers[in] = append(e.readers[in], n)
		}
		for _, out := range n.outputs {
			e.producer[out] = n
		}
	}
	if e.declared, err = declarations(gr.rest); err != nil {
		return nil, err
	}
	return e, nil
}

// valueDecl is a graph input's declared element type and dims.
type valueDecl struct {
	elemType int64
	dims     []int64 // each dim's value, 0 where it has none (a symbol)
}

// freeAxis is the length resize gives an axis of no fixed length: it gets
// a symbol, the tensor's name and the axis.
const freeAxis = 0

// resize gives the graph inputs and outputs names new lengths on axes.
func (e *graphEdit) resize(lengths map[int64]int64, names ...string) {
	for _, name := range names {
		e.resized[name] = lengths
	}
}

// intsAttr is an AttributeProto of type INTS.
func intsAttr(name string, v []int64) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	for _, x := range v {
		a = protowire.AppendTag(a, attrInts, protowire.VarintType)
		a = protowire.AppendVarint(a, uint64(x))
	}
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	a = protowire.AppendVarint(a, attrTypeInts)
	return protowire.AppendBytes(protowire.AppendTag(nil, nodeAttr, protowire.BytesType), a)
}

func opTypes(ns []*Node) []string {
	var ops []string
	for _, n := range ns {
		ops = append(ops, n.OpType)
	}
	return ops
}

// addInit adds an int64 initializer.
func (e *graphEdit) addInit(name string, dims []int64, v ...int64) {
	e.inits = append(e.inits, TensorBytes(name, typeInt64, dims, int64Raw(v...)))
	e.initName[name] = true
}

func NewNode(op string, inputs []string, output string, attrs ...[]byte) *Node {
	b := protowire.AppendTag(nil, nodeOutput, protowire.BytesType)
	return &Node{Inputs: inputs, outputs: []string{output}, OpType: op,
		Fields: [][]byte{protowire.AppendString(b, output)}, Extra: attrs}
}

// encode writes the rewritten graph: its nodes in an order that computes
// every input before it is read (the added nodes where the nodes they
// replace were, and what they read before them), without those whose
// outputs nothing reads any more, the new initializers, the inputs and
// outputs resized, and no value_info: the shapes it recorded for the
// nodes replaced are gone, and ONNX Runtime infers the rest again.
func (e *graphEdit) encode() ([]byte, error) {
	var want []*Node
	for _, n := range e.gr.Nodes {
		want = append(want, e.addedAt[n]...)
		if !e.removed[n] {
			for i, in := range n.Inputs {
				if to, ok := e.renamed[in]; ok {
					n.Inputs[i] = to
				}
			}
			want = append(want, n)
		}
	}
	live := e.live(want)
	for _, n := range e.mustGo {
		if slices.Contains(live, n) {
			return nil, fmt.Errorf("%w: a %s of %v is still read", e.refused, n.OpType, n.Inputs)
		}
	}
	ordered, err := e.topological(live)
	if err != nil {
		return nil, err
	}
	e.gr.Nodes = ordered
	rest := e.gr.rest[:0:0]
	for _, raw := range e.gr.rest {
		num, _, n := protowire.ConsumeTag(raw)
		switch num {
		case graphValueInfo:
			continue
		case graphInput, onnxproto.GraphOutput:
			v, _ := protowire.ConsumeBytes(raw[n:])
			resized, err := e.resizedInfo(v)
			if err != nil {
				return nil, err
			}
			raw = protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), resized)
		}
		rest = append(rest, raw)
	}
	e.gr.rest = rest
	return e.gr.Encode(nil, nil, e.inits), nil
}

// live is nodes without those no graph output depends on: what only the
// replaced nodes read.
func (e *graphEdit) live(nodes []*Node) []*Node {
	producer := map[string]*Node{}
	for _, n := range nodes {
		for _, o := range n.outputs {
			producer[o] = n
		}
	}
	needed := map[*Node]bool{}
	var need func(name string)
	need = func(name string) {
		p := producer[name]
		if p == nil || needed[p] {
			return
		}
		needed[p] = true
		for _, in := range p.Inputs {
			need(in)
		}
	}
	for name := range e.gr.outputs {
		need(name)
	}
	var kept []*Node
	for _, n := range nodes {
		if needed[n] {
			kept = append(kept, n)
		}
	}
	return kept
}

// topological orders nodes so that each comes after the producers of what
// it reads, otherwise as given.
func (e *graphEdit) topological(nodes []*Node) ([]*Node, error) {
	given := func(name string) bool {
		return name == "" || e.gr.Inputs[name] || e.gr.inits[name] != nil || e.initName[name]
	}
	producer := map[string]*Node{}
	for _, n := range nodes {
		for _, o := range n.outputs {
			producer[o] = n
		}
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[*Node]int{}
	var ordered []*Node
	var visit func(n *Node) error
	visit = func(n *Node) error {
		switch state[n] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("%w: the rewrite made a cycle through a %s node", e.refused, n.OpType)
		}
		state[n] = visiting
		for _, in := range n.Inputs {
			if p := producer[in]; p != nil {
				if err := visit(p); err != nil {
					return err
				}
			} else if !given(in) {
				return fmt.Errorf("%w: %s reads %s, which nothing makes", e.refused, n.OpType, in)
			}
		}
		state[n] = done
		ordered = append(ordered, n)
		return nil
	}
	for _, n := range nodes {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return ordered, nil
}

// declarations reads the graph inputs' element types and ranks from its
// ValueInfoProtos.
func declarations(rest [][]byte) (map[string]valueDecl, error) {
	decls := map[string]valueDecl{}
	for _, raw := range rest {
		num, _, n := protowire.ConsumeTag(raw)
		if num != graphInput {
			continue
		}
		v, _ := protowire.ConsumeBytes(raw[n:])
		var name string
		var d valueDecl
		err := eachField(v, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
			switch {
			case num == valueName && typ == protowire.BytesType:
				name = string(val)
			case num == valueType && typ == protowire.BytesType:
				return eachTensorType(val, func(num protowire.Number, typ protowire.Type, val []byte) error {
					switch {
					case num == tensorTypeElem && typ == protowire.VarintType:
						x, _ := protowire.ConsumeVarint(val)
						d.elemType = int64(x)
					case num == tensorTypeShape && typ == protowire.BytesType:
						return eachField(val, func(num protowire.Number, typ protowire.Type, dim, _ []byte) error {
							if num != shapeDim || typ != protowire.BytesType {
								return nil
							}
							d.dims = append(d.dims, 0)
							return eachField(dim, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
								if num == dimValue && typ == protowire.VarintType {
									x, _ := protowire.ConsumeVarint(v)
									d.dims[len(d.dims)-1] = int64(x)
								}
								return nil
							})
						})
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		decls[name] = d
	}
	return decls, nil
}

// eachTensorType visits the fields of a TypeProto's tensor_type.
func eachTensorType(typeProto []byte, visit func(num protowire.Number, typ protowire.Type, val []byte) error) error {
	return eachField(typeProto, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num != typeTensor || typ != protowire.BytesType {
			return nil
		}
		return eachField(val, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
			return visit(num, typ, val)
		})
	})
}

// resizedInfo rewrites a ValueInfoProto whose tensor is resized or
// permuted: its axes get their new lengths, then their new order; every
// other field stays.
func (e *graphEdit) resizedInfo(info []byte) ([]byte, error) {
	var name string
	_ = eachField(info, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num == valueName && typ == protowire.BytesType {
			name = string(val)
		}
		return nil
	})
	lengths, resized := e.resized[name]
	perm, permuted := e.permuted[name]
	if !resized && !permuted {
		return info, nil
	}
	return mapNested(info, []protowire.Number{valueType, typeTensor, tensorTypeShape}, func(shape []byte) ([]byte, error) {
		var dims [][]byte
		err := eachField(shape, func(num protowire.Number, _ protowire.Type, _, raw []byte) error {
			if num != shapeDim {
				return nil
			}
			if length, ok := lengths[int64(len(dims))]; ok {
				var dim []byte
				if length == freeAxis {
					dim = protowire.AppendTag(dim, dimParam, protowire.BytesType)
					dim = protowire.AppendString(dim, fmt.Sprintf("%s_dim_%d", name, len(dims)))
				} else {
					dim = protowire.AppendTag(dim, dimValue, protowire.VarintType)
					dim = protowire.AppendVarint(dim, uint64(length))
				}
				raw = protowire.AppendBytes(protowire.AppendTag(nil, shapeDim, protowire.BytesType), dim)
			}
			dims = append(dims, raw)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if permuted && len(perm) != len(dims) {
			return nil, fmt.Errorf("%w: %s has %d axes, not %d", e.refused, name, len(dims), len(perm))
		}
		var out []byte
		for i := range dims {
			if permuted {
				out = append(out, dims[perm[i]]...)
			} else {
				out = append(out, dims[i]...)
			}
		}
		return out, nil
	})
}

// mapNested rewrites the message at path (field numbers, each a message
// field) inside msg with f, copying everything else.
func mapNested(msg []byte, path []protowire.Number, f func([]byte) ([]byte, error)) ([]byte, error) {
	if len(path) == 0 {
		return f(msg)
	}
	var out []byte
	err := eachField(msg, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		if num != path[0] || typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		inner, err := mapNested(val, path[1:], f)
		if err != nil {
			return err
		}
		out = protowire.AppendTag(out, num, protowire.BytesType)
		out = protowire.AppendBytes(out, inner)
		return nil
	})
	return out, err
}

func int64Raw(v ...int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

// Field numbers the rewrites read besides proto.go's (GraphProto,
// ValueInfoProto, TypeProto, TensorShapeProto).
const (
	graphValueInfo  = 13
	valueType       = 2
	typeTensor      = 1
	tensorTypeElem  = 1
	tensorTypeShape = 2
	shapeDim        = 1
	dimValue        = 1
	dimParam        = 2
	typeInt64       = 7
	attrTypeInts    = 7
)
