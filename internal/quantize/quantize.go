// Package quantize shrinks ONNX models for the device: weight-only
// quantization done on the model file itself (an ONNX ModelProto, read and
// written with protowire), with no Python and no ONNX Runtime tooling.
//
// Bits does all of it. MatMul weights become ONNX Runtime's MatMulNBits
// and embedding tables its GatherBlockQuantized, 8 or 4 bits in blocks of
// 32 (or more) with one scale each (NBits): both compute from the packed weights.
// The other weights of Gemm and Conv are stored as int8 with one scale per
// output channel, a DequantizeLinear in front of the operator giving the
// fp32 weight back at run time (Int8). Activations stay fp32, so the
// model's inputs, outputs and other numerics are unchanged: only the
// weights lose precision. Everything else in the file is copied as it
// was. Dir quantizes a model set whose graphs share external data files;
// Compare measures how closely a quantized model follows its original.
//
// The same field-level editing serves one rewrite that is not a
// quantization: RingCaches turns a streaming graph's sliding caches into
// rings written in place, which the synthesizer derives from its codec at
// load.
package quantize

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// Stats says what Int8 did.
type Stats struct {
	// Weights counts the weights quantized; FP32Bytes and Int8Bytes are
	// their size before and after (scales included).
	Weights              int
	FP32Bytes, Int8Bytes int64
	microsoft            bool // com.microsoft operators were written
}

func (s *Stats) add(o Stats) {
	s.Weights += o.Weights
	s.FP32Bytes += o.FP32Bytes
	s.Int8Bytes += o.Int8Bytes
	s.microsoft = s.microsoft || o.microsoft
}

// Bits quantizes the model's weights to 8 or 4 bits: MatMul weights and
// embedding tables with NBits in format f, then what is left (Conv, Gemm)
// to int8 with Int8.
func Bits(model []byte, f Format) ([]byte, Stats, error) {
	out, st, err := NBits(model, f)
	if err != nil {
		return nil, st, err
	}
	out, rest, err := Int8(out)
	st.add(rest)
	return out, st, err
}

// ErrNotONNX is returned for bytes that are not an ONNX model.
var ErrNotONNX = errors.New("not an ONNX model")

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
	nodeName    = 3
	nodeOpType  = 4
	nodeAttr    = 5
	nodeDomain  = 7
	attrName    = 1
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
	typeFloat   = 1
	typeUint8   = 2
	typeInt8    = 3
	msDomain    = "com.microsoft"
)

// weightInput is which input of an operator is its weight, and which axis
// of it the output channel (-1: Gemm's, from transB; -2: the last).
var weightInput = map[string][2]int{"MatMul": {1, -2}, "Gemm": {1, -1}, "Conv": {1, 0}}

// Int8 returns the model with the weights of its MatMul, Gemm and Conv
// operators as int8 behind DequantizeLinear, and its embedding tables as
// 8-bit GatherBlockQuantized (see the package doc).
func Int8(model []byte) ([]byte, Stats, error) {
	return rewriteGraph(model, int8Graph)
}

// rewriteGraph copies the model with its graph rewritten by rewrite,
// declaring the com.microsoft operator set if the rewrite used one of its
// operators.
func rewriteGraph(model []byte, rewrite func([]byte, *Stats) ([]byte, error)) ([]byte, Stats, error) {
	var st Stats
	var out []byte
	sawGraph, sawMS := false, false
	err := eachField(model, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == modelGraph && typ == protowire.BytesType:
			sawGraph = true
			g, err := rewrite(val, &st)
			if err != nil {
				return err
			}
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, g)
		case num == modelOpset && typ == protowire.BytesType:
			domain, opset := readOpset(val)
			sawMS = sawMS || domain == msDomain
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, atLeastOpset13(domain, opset, val))
		default:
			out = append(out, raw...)
		}
		return nil
	})
	if err != nil || !sawGraph {
		return nil, st, fmt.Errorf("quantize: %w", errors.Join(ErrNotONNX, err))
	}
	if st.microsoft && !sawMS {
		var o []byte
		o = protowire.AppendTag(o, opsetDomain, protowire.BytesType)
		o = protowire.AppendString(o, msDomain)
		o = protowire.AppendTag(o, opsetVer, protowire.VarintType)
		o = protowire.AppendVarint(o, 1)
		out = protowire.AppendTag(out, modelOpset, protowire.BytesType)
		out = protowire.AppendBytes(out, o)
	}
	return out, st, nil
}

// node is a NodeProto: what the rewrites read or change, and every other
// field as written.
type node struct {
	inputs         []string
	outputs        []string // also kept in fields
	opType, domain string
	ints           map[string]int64   // its integer attributes
	lists          map[string][]int64 // its integer-list attributes (a Transpose's perm)
	subgraphs      bool               // an attribute holds a graph
	fields         [][]byte           // every other field, as written
	extra          [][]byte           // fields a rewrite adds (attributes)
}

// tensor is an initializer: its encoding, and its fp32 values if it is a
// plain fp32 tensor stored in the file.
type tensor struct {
	raw    []byte
	name   string
	dims   []int64
	floats []float32 // nil unless fp32 and inline
}

// graph is a GraphProto read for a rewrite.
type graph struct {
	nodes     []*node
	inits     map[string]*tensor
	initOrder []*tensor
	inputs    map[string]bool   // initializers listed as graph inputs stay: they may be fed
	outputs   map[string]bool   // the graph's outputs
	identity  map[string]string // an Identity node's output -> its input
	rest      [][]byte          // every other field, in order
}

// weight is the initializer that name is, directly or through a chain of
// Identity nodes, or nil. torch.onnx.export writes a weight used at several
// places of a graph once and hands it to the other uses through Identity
// nodes: MOSS's local frame graph, its 17 steps unrolled, reaches each of
// its transformer's weights through 16 of them. ONNX Runtime removes the
// Identity nodes when it loads the graph, so a MatMul behind one runs as
// one by the weight itself, and a quantizer that missed them would leave
// 16 of the 17 steps in fp32.
func (gr *graph) weight(name string) *tensor {
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

func readGraph(g []byte) (*graph, error) {
	gr := &graph{inits: map[string]*tensor{}, inputs: map[string]bool{}, outputs: map[string]bool{}, identity: map[string]string{}}
	err := eachField(g, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == graphNode && typ == protowire.BytesType:
			n, err := readNode(val)
			if err != nil {
				return err
			}
			gr.nodes = append(gr.nodes, n)
			if n.opType == "Identity" && n.domain == "" && len(n.inputs) == 1 && len(n.outputs) == 1 {
				gr.identity[n.outputs[0]] = n.inputs[0]
			}
		case num == graphInit && typ == protowire.BytesType:
			t, err := readTensor(val, raw)
			if err != nil {
				return err
			}
			gr.inits[t.name] = t
			gr.initOrder = append(gr.initOrder, t)
		default:
			if (num == graphInput || num == onnxproto.GraphOutput) && typ == protowire.BytesType {
				names := gr.inputs
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

// encode writes the graph back: first nodes, then its nodes, the
// initializers not replaced (or still used), the new ones, and the rest.
// An Identity node that passed a replaced weight on and that nothing reads
// any more goes, so that the weight's fp32 copy does too.
func (gr *graph) encode(replaced map[string]bool, first, newInits [][]byte) []byte {
	nodes := gr.nodes
	var used map[string]bool
	for {
		used = gr.used(nodes)
		kept := nodes[:0:0]
		for _, n := range nodes {
			if t := gr.weight(firstOf(n.inputs)); n.opType == "Identity" && t != nil && replaced[t.name] && !used[firstOf(n.outputs)] {
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
		add(graphNode, n.encode())
	}
	for _, t := range gr.initOrder {
		if !replaced[t.name] || used[t.name] {
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
func (gr *graph) used(nodes []*node) map[string]bool {
	used := maps.Clone(gr.outputs)
	var withSubgraphs [][]byte
	for _, n := range nodes {
		for _, in := range n.inputs {
			used[in] = true
		}
		if n.subgraphs {
			withSubgraphs = append(withSubgraphs, n.fields...)
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

func int8Graph(g []byte, st *Stats) ([]byte, error) {
	gr, err := readGraph(g)
	if err != nil {
		return nil, err
	}
	quantized := map[string]bool{} // fp32 initializers replaced
	made := map[string]string{}    // name@axis -> the dequantized output
	var dqNodes, newInits [][]byte
	for _, n := range gr.nodes {
		spec, ok := weightInput[n.opType]
		if !ok || n.domain != "" || len(n.inputs) <= spec[0] {
			continue
		}
		t := gr.weight(n.inputs[spec[0]])
		if t == nil || t.floats == nil || len(t.dims) < 2 || gr.inputs[t.name] {
			continue
		}
		axis := spec[1]
		switch {
		case axis == -2:
			axis = len(t.dims) - 1
		case axis < 0:
			axis = 1
			if n.ints["transB"] != 0 {
				axis = 0
			}
		}
		key := fmt.Sprintf("%s@%d", t.name, axis)
		if _, ok := made[key]; !ok {
			q, scale := quantizeAxis(t.floats, t.dims, axis)
			qn, sn, zn, out := t.name+"_int8", t.name+"_scale", t.name+"_zero", t.name+"_dq"
			channels := t.dims[axis]
			newInits = append(newInits,
				tensorBytes(qn, typeInt8, t.dims, int8Raw(q)),
				tensorBytes(sn, typeFloat, []int64{channels}, float32Raw(scale)),
				tensorBytes(zn, typeInt8, []int64{channels}, make([]byte, channels)))
			dqNodes = append(dqNodes, dequantizeNode(qn, sn, zn, out, t.name+"_dequantize", int64(axis)))
			made[key] = out
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.floats))
			st.Int8Bytes += int64(len(q) + 4*len(scale))
		}
		n.inputs[spec[0]] = made[key]
		quantized[t.name] = true
	}
	newInits = append(newInits, quantizeGathers(gr, Format{Bits: 8}, st, quantized)...)
	// DequantizeLinear first: the node list stays topologically sorted.
	return gr.encode(quantized, dqNodes, newInits), nil
}

// quantizeAxis quantizes w (of shape dims) symmetrically to int8, one scale
// per index of axis, rounding half to even as numpy does.
func quantizeAxis(w []float32, dims []int64, axis int) ([]int8, []float32) {
	channels := int(dims[axis])
	inner := 1
	for _, d := range dims[axis+1:] {
		inner *= int(d)
	}
	channel := func(i int) int { return i / inner % channels }
	scale := make([]float32, channels)
	for i, v := range w {
		c := channel(i)
		scale[c] = max(scale[c], float32(math.Abs(float64(v))))
	}
	for c := range scale {
		scale[c] /= 127
		if scale[c] == 0 {
			scale[c] = 1
		}
	}
	q := make([]int8, len(w))
	for i, v := range w {
		r := math.RoundToEven(float64(v / scale[channel(i)]))
		q[i] = int8(min(127, max(-127, r)))
	}
	return q, scale
}

func readNode(b []byte) (*node, error) {
	n := &node{}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, val, raw []byte) error {
		switch {
		case num == nodeInput && typ == protowire.BytesType:
			n.inputs = append(n.inputs, string(val))
			return nil
		case num == nodeOutput && typ == protowire.BytesType:
			n.outputs = append(n.outputs, string(val))
		case num == nodeOpType && typ == protowire.BytesType:
			n.opType = string(val)
			return nil
		case num == nodeDomain && typ == protowire.BytesType:
			n.domain = string(val)
			return nil
		case num == nodeAttr && typ == protowire.BytesType:
			var name string
			var i int64
			var list []int64
			if err := eachField(val, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
				switch {
				case num == attrName && typ == protowire.BytesType:
					name = string(v)
				case num == attrInt && typ == protowire.VarintType:
					x, _ := protowire.ConsumeVarint(v)
					i = int64(x)
				case num == attrInts:
					return appendInts(&list, typ, v)
				case (num == attrGraph || num == attrGraphs) && typ == protowire.BytesType:
					n.subgraphs = true
				}
				return nil
			}); err != nil {
				return err
			}
			if n.ints == nil {
				n.ints, n.lists = map[string]int64{}, map[string][]int64{}
			}
			n.ints[name] = i
			if list != nil {
				n.lists[name] = list
			}
		}
		n.fields = append(n.fields, raw)
		return nil
	})
	return n, err
}

// encode writes the node back: its inputs, operator and domain, then
// every other field as it was and the added ones (field order carries no
// meaning in protobuf, but the order of the inputs does, and it is kept).
func (n *node) encode() []byte {
	var b []byte
	for _, in := range n.inputs {
		b = protowire.AppendTag(b, nodeInput, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	b = protowire.AppendTag(b, nodeOpType, protowire.BytesType)
	b = protowire.AppendString(b, n.opType)
	if n.domain != "" {
		b = protowire.AppendTag(b, nodeDomain, protowire.BytesType)
		b = protowire.AppendString(b, n.domain)
	}
	for _, f := range append(n.fields, n.extra...) {
		b = append(b, f...)
	}
	return b
}

func readTensor(b, raw []byte) (*tensor, error) {
	t := &tensor{raw: raw}
	var typ int64 = -1
	var data []byte
	var floats []float32
	external := false
	err := eachField(b, func(num protowire.Number, wt protowire.Type, val, _ []byte) error {
		switch num {
		case tensorDims:
			return appendInts(&t.dims, wt, val)
		case tensorType:
			x, _ := protowire.ConsumeVarint(val)
			typ = int64(x)
		case tensorName:
			t.name = string(val)
		case tensorRaw:
			data = val
		case tensorFloat:
			return appendFloats(&floats, wt, val)
		case tensorExt:
			external = true
		}
		return nil
	})
	if err != nil || typ != typeFloat || external {
		return t, err
	}
	n := 1
	for _, d := range t.dims {
		n *= int(d)
	}
	switch {
	case data != nil && len(data) == 4*n:
		t.floats = make([]float32, n)
		for i := range t.floats {
			t.floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
	case data == nil && len(floats) == n:
		t.floats = floats
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

func tensorBytes(name string, typ int64, dims []int64, data []byte) []byte {
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

func dequantizeNode(q, scale, zero, out, name string, axis int64) []byte {
	var fields [][]byte
	for _, f := range []struct {
		num protowire.Number
		v   string
	}{{nodeOutput, out}, {nodeName, name}} {
		b := protowire.AppendTag(nil, f.num, protowire.BytesType)
		fields = append(fields, protowire.AppendString(b, f.v))
	}
	n := node{inputs: []string{q, scale, zero}, opType: "DequantizeLinear", fields: fields, extra: [][]byte{intAttr("axis", axis)}}
	return n.encode()
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

func int8Raw(q []int8) []byte {
	b := make([]byte, len(q))
	for i, v := range q {
		b[i] = byte(v)
	}
	return b
}

func float32Raw(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// eachField walks a message's fields (onnxproto.EachField).
var eachField = onnxproto.EachField

// MatMulModel is a model of uses MatMuls, y<i> [m, n] = x [m, k] times
// the constant weight w [k, n] (row-major), m any: with one use, the
// yardstick of a runtime's matrix product rate, in fp32 as it is and in 8
// or 4 bits after NBits; with more, a weight read at several places, as
// an unrolled loop's steps read theirs.
func MatMulModel(w []float32, k, n, uses int) []byte {
	return matMuls(k, n, uses, w)
}

// MatMulsModel is a model of one MatMul for each weight, y<i> [m, n] =
// x [m, k] times weights[i] [k, n]: weights that are distinct tensors,
// each packed by a runtime on its own.
func MatMulsModel(k, n int, weights ...[]float32) []byte {
	return matMuls(k, n, 1, weights...)
}

// matMuls is a model of uses MatMuls of x with each of the weights.
func matMuls(k, n, uses int, weights ...[]float32) []byte {
	info := func(name string, dims ...int64) []byte {
		var shape []byte
		for _, d := range dims {
			dim := protowire.AppendString(protowire.AppendTag(nil, 2, protowire.BytesType), "m") // dim_param
			if d >= 0 {
				dim = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(d)) // dim_value
			}
			shape = protowire.AppendBytes(protowire.AppendTag(shape, 1, protowire.BytesType), dim)
		}
		tt := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), typeFloat)
		tt = protowire.AppendBytes(protowire.AppendTag(tt, 2, protowire.BytesType), shape)
		typ := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), tt)
		v := protowire.AppendString(protowire.AppendTag(nil, valueName, protowire.BytesType), name)
		return protowire.AppendBytes(protowire.AppendTag(v, 2, protowire.BytesType), typ)
	}
	var g []byte
	add := func(num protowire.Number, b []byte) {
		g = protowire.AppendBytes(protowire.AppendTag(g, num, protowire.BytesType), b)
	}
	output := func(i int) string {
		if i == 0 {
			return "y"
		}
		return "y" + strconv.Itoa(i)
	}
	weightName := func(j int) string {
		if j == 0 {
			return "w"
		}
		return "w" + strconv.Itoa(j)
	}
	outputs := len(weights) * uses
	for i := range outputs {
		fields := [][]byte{protowire.AppendString(protowire.AppendTag(nil, nodeOutput, protowire.BytesType), output(i))}
		mm := node{inputs: []string{"x", weightName(i / uses)}, opType: "MatMul", fields: fields}
		add(graphNode, mm.encode())
	}
	add(2, []byte("matmul"))
	for j, w := range weights {
		add(graphInit, tensorBytes(weightName(j), typeFloat, []int64{int64(k), int64(n)}, float32Raw(w)))
	}
	add(graphInput, info("x", -1, int64(k)))
	for i := range outputs {
		add(onnxproto.GraphOutput, info(output(i), -1, int64(n)))
	}
	var m []byte
	m = protowire.AppendVarint(protowire.AppendTag(m, 1, protowire.VarintType), 8) // ir_version
	opset := protowire.AppendVarint(protowire.AppendTag(nil, opsetVer, protowire.VarintType), 17)
	m = protowire.AppendBytes(protowire.AppendTag(m, modelOpset, protowire.BytesType), opset)
	return protowire.AppendBytes(protowire.AppendTag(m, modelGraph, protowire.BytesType), g)
}
