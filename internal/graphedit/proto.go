// Package graphedit rewrites ONNX models on the file's protobuf fields
// (read and written with protowire, with no ONNX tooling): the rewrites
// the synthesizer makes at load (RingCaches, SharedKVAttention, each
// checked on its ExactActivations form), external weight data read in
// (Inline) and written shared (DataFile), and the graph, node and tensor
// core (Rewrite, ReadGraph) the offline quantizer, package quantize,
// builds on. All of it serves the run time; the quantizer, which only
// the offline tools use, stays out of internal/ and imports this.
package graphedit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// Field numbers of onnx.proto (ModelProto, GraphProto, NodeProto,
// TensorProto, AttributeProto, OperatorSetIdProto).
const (
	modelGraph  = onnxproto.ModelGraph
	modelOpset  = 8
	graphNode   = 1
	graphInit   = onnxproto.GraphInitializer
	graphInput  = onnxproto.GraphInput
	valueName   = onnxproto.ValueInfoName
	nodeInput   = 1
	nodeOutput  = 2
	nodeOpType  = 4
	nodeAttr    = 5
	nodeDomain  = 7
	attrName    = 1
	attrFloat   = 2
	attrInt     = 3
	attrGraph   = 6
	attrInts    = 8
	attrGraphs  = 11
	attrType    = 20
	attrTypeInt = 2
	tensorDims  = 1
	tensorType  = 2
	tensorFloat = 4
	tensorName  = onnxproto.TensorName
	tensorRaw   = 9
	tensorExt   = 13
	opsetDomain = 1
	opsetVer    = 2
)

// What the quantizer writes beside its rewritten nodes: a node's name
// (NodeProto), its tensors' element types (TensorProto.DataType), and the
// domain of ONNX Runtime's own operators.
const (
	NodeName  = 3
	TypeFloat = 1
	TypeUint8 = 2
	TypeInt8  = 3
	MSDomain  = "com.microsoft"
)

// Rewrite copies the model with its graph rewritten by rewrite, declaring
// the com.microsoft operator set if rewrite says it used one of its
// operators.
func Rewrite(model []byte, rewrite func(graph []byte) (out []byte, microsoft bool, err error)) ([]byte, error) {
	var out []byte
	sawGraph, sawMS, usedMS := false, false, false
	err := eachField(model, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == modelGraph && typ == protowire.BytesType:
			sawGraph = true
			g, ms, err := rewrite(val)
			if err != nil {
				return err
			}
			usedMS = ms
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, g)
		case num == modelOpset && typ == protowire.BytesType:
			domain, opset := readOpset(val)
			sawMS = sawMS || domain == MSDomain
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, atLeastOpset13(domain, opset, val))
		default:
			out = append(out, raw...)
		}
		return nil
	})
	if err != nil || !sawGraph {
		return nil, errors.Join(ErrNotONNX, err)
	}
	if usedMS && !sawMS {
		var o []byte
		o = protowire.AppendTag(o, opsetDomain, protowire.BytesType)
		o = protowire.AppendString(o, MSDomain)
		o = protowire.AppendTag(o, opsetVer, protowire.VarintType)
		o = protowire.AppendVarint(o, 1)
		out = protowire.AppendTag(out, modelOpset, protowire.BytesType)
		out = protowire.AppendBytes(out, o)
	}
	return out, nil
}

// ErrNotONNX is returned for bytes that are not an ONNX model.
var ErrNotONNX = errors.New("not an ONNX model")

// Node is a NodeProto: what the rewrites read or change, and every other
// field as written.
type Node struct {
	Inputs         []string
	outputs        []string // also kept in Fields
	OpType, Domain string
	Ints           map[string]int64   // its integer attributes
	Floats         map[string]float32 // its float attributes (a Gemm's alpha)
	lists          map[string][]int64 // its integer-list attributes (a Transpose's perm)
	subgraphs      bool               // an attribute holds a graph
	Fields         [][]byte           // every other field, as written
	Extra          [][]byte           // fields a rewrite adds (attributes)
}

// Tensor is an initializer: its encoding, and its fp32 values if it is a
// plain fp32 tensor stored in the file.
type Tensor struct {
	raw    []byte
	Name   string
	Dims   []int64
	Floats []float32 // nil unless fp32 and inline
}

// Graph is a GraphProto read for a rewrite.
type Graph struct {
	Nodes     []*Node
	inits     map[string]*Tensor
	initOrder []*Tensor
	Inputs    map[string]bool   // initializers listed as graph inputs stay: they may be fed
	outputs   map[string]bool   // the graph's outputs
	identity  map[string]string // an Identity node's output -> its input
	rest      [][]byte          // every other field, in order
}

// Weight is the initializer that name is, directly or through a chain of
// Identity nodes, or nil. torch.onnx.export writes a weight used at several
// places of a graph once and hands it to the other uses through Identity
// nodes: MOSS's local frame graph, its 17 steps unrolled, reaches each of
// its transformer's weights through 16 of them. ONNX Runtime removes the
// Identity nodes when it loads the graph, so a MatMul behind one runs as
// one by the weight itself, and a quantizer that missed them would leave
// 16 of the 17 steps in fp32.
func (gr *Graph) Weight(name string) *Tensor {
	for range len(gr.identity) + 1 {
		if t := gr.inits[name]; t != nil {
			return t
		}
		src, ok := gr.identity[name]
		if !ok {
			return nil
		}
		name = src
	}
	return nil // a cycle, which a valid graph does not have
}

// ReadGraph reads a GraphProto for a rewrite.
func ReadGraph(g []byte) (*Graph, error) {
	gr := &Graph{inits: map[string]*Tensor{}, Inputs: map[string]bool{}, outputs: map[string]bool{}, identity: map[string]string{}}
	err := eachField(g, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == graphNode && typ == protowire.BytesType:
			n, err := readNode(val)
			if err != nil {
				return err
			}
			gr.Nodes = append(gr.Nodes, n)
			if n.OpType == "Identity" && n.Domain == "" && len(n.Inputs) == 1 && len(n.outputs) == 1 {
				gr.identity[n.outputs[0]] = n.Inputs[0]
			}
		case num == graphInit && typ == protowire.BytesType:
			t, err := readTensor(val, raw)
			if err != nil {
				return err
			}
			gr.inits[t.Name] = t
			gr.initOrder = append(gr.initOrder, t)
		default:
			if (num == graphInput || num == onnxproto.GraphOutput) && typ == protowire.BytesType {
				names := gr.Inputs
				if num == onnxproto.GraphOutput {
					names = gr.outputs
				}
				_ = eachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
					if num == valueName && typ == protowire.BytesType {
						names[string(v)] = true
					}
					return nil
				})
			}
			gr.rest = append(gr.rest, raw)
		}
		return nil
	})
	return gr, err
}

// Encode writes the graph back: first nodes, then its nodes, the
// initializers not replaced (or still used), the new ones, and the rest.
// An Identity node that passed a replaced weight on and that nothing reads
// any more goes, so that the weight's fp32 copy does too.
func (gr *Graph) Encode(replaced map[string]bool, first, newInits [][]byte) []byte {
	nodes := gr.Nodes
	var used map[string]bool
	for {
		used = gr.used(nodes)
		kept := nodes[:0:0]
		for _, n := range nodes {
			if t := gr.Weight(firstOf(n.Inputs)); n.OpType == "Identity" && t != nil && replaced[t.Name] && !used[firstOf(n.outputs)] {
				continue
			}
			kept = append(kept, n)
		}
		if len(kept) == len(nodes) {
			break
		}
		nodes = kept
	}
	var out []byte
	add := func(num protowire.Number, b []byte) {
		out = protowire.AppendTag(out, num, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	for _, b := range first {
		add(graphNode, b)
	}
	for _, n := range nodes {
		add(graphNode, n.Encode())
	}
	for _, t := range gr.initOrder {
		if !replaced[t.Name] || used[t.Name] {
			out = append(out, t.raw...)
		}
	}
	for _, b := range newInits {
		add(graphInit, b)
	}
	for _, r := range gr.rest {
		out = append(out, r...)
	}
	return out
}

// used is every name that nodes read or the graph puts out. A node with a
// subgraph (If, Loop, Scan) may read outer names from inside it: every
// name its fields hold counts as read.
func (gr *Graph) used(nodes []*Node) map[string]bool {
	used := maps.Clone(gr.outputs)
	var withSubgraphs [][]byte
	for _, n := range nodes {
		for _, in := range n.Inputs {
			used[in] = true
		}
		if n.subgraphs {
			withSubgraphs = append(withSubgraphs, n.Fields...)
		}
	}
	if len(withSubgraphs) > 0 {
		for name := range gr.inits {
			used[name] = used[name] || slices.ContainsFunc(withSubgraphs, func(f []byte) bool { return bytes.Contains(f, []byte(name)) })
		}
		for name := range gr.identity {
			used[name] = used[name] || slices.ContainsFunc(withSubgraphs, func(f []byte) bool { return bytes.Contains(f, []byte(name)) })
		}
	}
	return used
}

func firstOf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func readNode(b []byte) (*Node, error) {
	n := &Node{}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == nodeInput && typ == protowire.BytesType:
			n.Inputs = append(n.Inputs, string(val))
			return nil
		case num == nodeOutput && typ == protowire.BytesType:
			n.outputs = append(n.outputs, string(val))
		case num == nodeOpType && typ == protowire.BytesType:
			n.OpType = string(val)
			return nil
		case num == nodeDomain && typ == protowire.BytesType:
			n.Domain = string(val)
			return nil
		case num == nodeAttr && typ == protowire.BytesType:
			var name string
			var i int64
			var f *float32
			var list []int64
			if err := eachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
				switch {
				case num == attrName && typ == protowire.BytesType:
					name = string(v)
				case num == attrInt && typ == protowire.VarintType:
					x, _ := protowire.ConsumeVarint(v)
					i = int64(x)
				case num == attrFloat && typ == protowire.Fixed32Type:
					x, _ := protowire.ConsumeFixed32(v)
					f = new(math.Float32frombits(x))
				case num == attrInts:
					return appendInts(&list, typ, v)
				case (num == attrGraph || num == attrGraphs) && typ == protowire.BytesType:
					n.subgraphs = true
				}
				return nil
			}); err != nil {
				return err
			}
			if n.Ints == nil {
				n.Ints, n.Floats, n.lists = map[string]int64{}, map[string]float32{}, map[string][]int64{}
			}
			n.Ints[name] = i
			if f != nil {
				n.Floats[name] = *f
			}
			if list != nil {
				n.lists[name] = list
			}
		}
		n.Fields = append(n.Fields, raw)
		return nil
	})
	return n, err
}

// DropAttributes removes the node's attributes, for a rewrite that makes
// it another operator, whose attributes go in Extra.
func (n *Node) DropAttributes() {
	n.Fields = slices.DeleteFunc(n.Fields, func(f []byte) bool {
		num, _, _ := protowire.ConsumeTag(f)
		return num == nodeAttr
	})
	n.Extra, n.Ints, n.Floats, n.lists = nil, nil, nil, nil
}

// Encode writes the node back: its inputs, operator and domain, then
// every other field as it was and the added ones (field order carries no
// meaning in protobuf, but the order of the inputs does, and it is kept).
func (n *Node) Encode() []byte {
	var b []byte
	for _, in := range n.Inputs {
		b = protowire.AppendTag(b, nodeInput, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	b = protowire.AppendTag(b, nodeOpType, protowire.BytesType)
	b = protowire.AppendString(b, n.OpType)
	if n.Domain != "" {
		b = protowire.AppendTag(b, nodeDomain, protowire.BytesType)
		b = protowire.AppendString(b, n.Domain)
	}
	for _, f := range append(n.Fields, n.Extra...) {
		b = append(b, f...)
	}
	return b
}

func readTensor(b, raw []byte) (*Tensor, error) {
	t := &Tensor{raw: raw}
	var typ int64 = -1
	var data []byte
	var floats []float32
	external := false
	err := eachField(b, func(num protowire.Number, wt protowire.Type, val, _ []byte) error {
		switch num {
		case tensorDims:
			return appendInts(&t.Dims, wt, val)
		case tensorType:
			x, _ := protowire.ConsumeVarint(val)
			typ = int64(x)
		case tensorName:
			t.Name = string(val)
		case tensorRaw:
			data = val
		case tensorFloat:
			return appendFloats(&floats, wt, val)
		case tensorExt:
			external = true
		}
		return nil
	})
	if err != nil || typ != TypeFloat || external {
		return t, err
	}
	n := 1
	for _, d := range t.Dims {
		n *= int(d)
	}
	switch {
	case data != nil && len(data) == 4*n:
		t.Floats = make([]float32, n)
		for i := range t.Floats {
			t.Floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case data == nil && len(floats) == n:
		t.Floats = floats
	}
	return t, nil
}

func appendInts(dst *[]int64, wt protowire.Type, val []byte) error {
	if wt == protowire.VarintType {
		x, _ := protowire.ConsumeVarint(val)
		*dst = append(*dst, int64(x))
		return nil
	}
	for len(val) > 0 { // packed
		x, n := protowire.ConsumeVarint(val)
		if n < 0 {
			return protowire.ParseError(n)
		}
		*dst = append(*dst, int64(x))
		val = val[n:]
	}
	return nil
}

func appendFloats(dst *[]float32, wt protowire.Type, val []byte) error {
	if wt == protowire.Fixed32Type {
		*dst = append(*dst, math.Float32frombits(binary.LittleEndian.Uint32(val)))
		return nil
	}
	if len(val)%4 != 0 {
		return errors.New("packed floats of a length not a multiple of 4")
	}
	for i := 0; i < len(val); i += 4 {
		*dst = append(*dst, math.Float32frombits(binary.LittleEndian.Uint32(val[i:])))
	}
	return nil
}

// TensorBytes is a TensorProto of type typ (an onnx.proto element type)
// holding data as raw_data.
func TensorBytes(name string, typ int64, dims []int64, data []byte) []byte {
	var b []byte
	for _, d := range dims {
		b = protowire.AppendTag(b, tensorDims, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(d))
	}
	b = protowire.AppendTag(b, tensorType, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(typ))
	b = protowire.AppendTag(b, tensorName, protowire.BytesType)
	b = protowire.AppendString(b, name)
	b = protowire.AppendTag(b, tensorRaw, protowire.BytesType)
	return protowire.AppendBytes(b, data)
}

// readOpset reads an OperatorSetIdProto.
func readOpset(b []byte) (domain string, version int64) {
	_ = eachField(b, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == opsetDomain && typ == protowire.BytesType:
			domain = string(val)
		case num == opsetVer && typ == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			version = int64(x)
		}
		return nil
	})
	return domain, version
}

// atLeastOpset13 raises the default domain's opset (b, read as domain and
// version) to 13, the first with a per-axis DequantizeLinear.
func atLeastOpset13(domain string, version int64, b []byte) []byte {
	if (domain != "" && domain != "ai.onnx") || version >= 13 {
		return b
	}
	var out []byte
	if domain != "" {
		out = protowire.AppendTag(out, opsetDomain, protowire.BytesType)
		out = protowire.AppendString(out, domain)
	}
	out = protowire.AppendTag(out, opsetVer, protowire.VarintType)
	return protowire.AppendVarint(out, 13)
}

// Float32Raw is f as raw_data: little-endian fp32.
func Float32Raw(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// eachField walks a message's fields (onnxproto.EachField).
var eachField = onnxproto.EachField
