package onnx

import (
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

// Weights is what a model's matrix products and convolutions read of its
// constants at every run: the least memory a run must stream, whatever
// the runtime does.
type Weights struct {
	// Bytes is the size of the constant inputs of its MatMul, Gemm,
	// Conv and MatMulNBits nodes (and of the DequantizeLinear nodes
	// feeding them), each counted once however many nodes read it,
	// as the file stores them (4-bit weights half a byte each).
	// A weight read through Identity nodes (as the steps of an unrolled
	// loop read theirs) counts as the weight itself.
	Bytes int64
	// NBits is the bits attribute of its MatMulNBits nodes, 0 if none.
	NBits int
}

// weightReaders are the operators whose constant inputs are read whole at
// every run.
var weightReaders = map[string]bool{
	"MatMul": true, "Gemm": true, "Conv": true, "ConvTranspose": true, "MatMulNBits": true,
	"DequantizeLinear": true, "MatMulInteger": true, "ConvInteger": true,
}

// Field numbers of onnx.proto beyond onnxproto's: NodeProto, TensorProto,
// AttributeProto.
const (
	graphNode    = 1
	nodeInput    = 1
	nodeOutput   = 2
	nodeOpType   = 4
	nodeAttr     = 5
	tensorDims   = 1
	tensorDType  = 2
	attrName     = 1
	attrInt      = 3
	identityNode = "Identity"
)

// ReadWeights reads what the model at path's runs read of its weights
// (Weights), from the file itself, mapped.
func ReadWeights(path string) (Weights, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return Weights{}, fmt.Errorf("model %s: %w", path, err)
	}
	defer unmap()
	w, err := readWeights(data)
	if err != nil {
		return w, fmt.Errorf("model %s: %w", path, err)
	}
	return w, nil
}

func readWeights(model []byte) (Weights, error) {
	var graph []byte
	if err := onnxproto.EachField(model, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num == onnxproto.ModelGraph && typ == protowire.BytesType {
			graph = val
		}
		return nil
	}); err != nil || graph == nil {
		return Weights{}, fmt.Errorf("cannot read it as ONNX (%v)", err)
	}
	g, err := readWeightGraph(graph)
	return g.weights(), err
}

// weightGraph is what of a GraphProto the count of its weights needs.
type weightGraph struct {
	sizes    map[string]int64  // initializer -> its bytes
	identity map[string]string // Identity output -> its input
	nodes    []weightNode
}

// weightNode is what of a NodeProto the count of weights needs.
type weightNode struct {
	op     string
	inputs []string
	bits   int
}

// readWeightGraph reads graph's initializers' sizes and its nodes; what
// it could read, where it fails.
func readWeightGraph(graph []byte) (weightGraph, error) {
	g := weightGraph{sizes: map[string]int64{}, identity: map[string]string{}}
	err := onnxproto.EachField(graph, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == onnxproto.GraphInitializer && typ == protowire.BytesType:
			name, size, err := tensorSize(val)
			g.sizes[name] = size
			return err
		case num == graphNode && typ == protowire.BytesType:
			n, outputs, err := readWeightNode(val)
			if n.op == identityNode && len(n.inputs) == 1 && len(outputs) == 1 {
				g.identity[outputs[0]] = n.inputs[0]
			}
			g.nodes = append(g.nodes, n)
			return err
		}
		return nil
	})
	return g, err
}

// readWeightNode reads a NodeProto's operator, inputs, outputs and bits
// attribute.
func readWeightNode(node []byte) (n weightNode, outputs []string, err error) {
	err = onnxproto.EachField(node, func(num protowire.Number, typ protowire.Type, v, _ []byte) error {
		switch {
		case num == nodeInput && typ == protowire.BytesType:
			n.inputs = append(n.inputs, string(v))
		case num == nodeOutput && typ == protowire.BytesType:
			outputs = append(outputs, string(v))
		case num == nodeOpType && typ == protowire.BytesType:
			n.op = string(v)
		case num == nodeAttr && typ == protowire.BytesType:
			if name, i := readIntAttr(v); name == "bits" {
				n.bits = int(i)
			}
		}
		return nil
	})
	return n, outputs, err
}

// readIntAttr reads an AttributeProto's name and integer value (0 if it has
// none); what cannot be read is left out.
func readIntAttr(attr []byte) (name string, i uint64) {
	_ = onnxproto.EachField(attr, func(num protowire.Number, typ protowire.Type, a, _ []byte) error {
		switch {
		case num == attrName && typ == protowire.BytesType:
			name = string(a)
		case num == attrInt && typ == protowire.VarintType:
			i, _ = protowire.ConsumeVarint(a)
		}
		return nil
	})
	return name, i
}

// weights counts each initializer that a weight reader reads, directly or
// through Identity nodes, once.
func (g weightGraph) weights() Weights {
	var w Weights
	counted := map[string]bool{}
	for _, n := range g.nodes {
		if !weightReaders[n.op] {
			continue
		}
		if n.op == "MatMulNBits" && w.NBits == 0 {
			w.NBits = n.bits
		}
		for _, in := range n.inputs {
			for hops := 0; hops <= len(g.identity) && g.sizes[in] == 0 && g.identity[in] != ""; hops++ {
				in = g.identity[in]
			}
			size, ok := g.sizes[in]
			if !ok {
				continue
			}
			if !counted[in] {
				counted[in] = true
				w.Bytes += size
			}
		}
	}
	return w
}

// tensorSize reads a TensorProto's name and the bytes of its values, from
// its dimensions and element type (wherever the values are stored).
func tensorSize(t []byte) (name string, size int64, err error) {
	var dims []int64
	var elem int64
	err = onnxproto.EachField(t, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		switch {
		case num == onnxproto.TensorName && typ == protowire.BytesType:
			name = string(val)
		case num == tensorDType && typ == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			elem = int64(x)
		case num == tensorDims && typ == protowire.VarintType:
			x, _ := protowire.ConsumeVarint(val)
			dims = append(dims, int64(x))
		case num == tensorDims && typ == protowire.BytesType:
			for len(val) > 0 {
				x, k := protowire.ConsumeVarint(val)
				if k < 0 {
					return protowire.ParseError(k)
				}
				dims = append(dims, int64(x))
				val = val[k:]
			}
		}
		return nil
	})
	size = elementBits(ort.TensorElementDataType(elem))
	for _, d := range dims {
		size *= d
	}
	return name, size / 8, err
}
