// Package quantize shrinks ONNX models for the device: weight-only
// quantization done on the model file itself (an ONNX ModelProto, read and
// written with protowire), with no Python and no ONNX Runtime tooling.
//
// Bits does all of it. MatMul weights become ONNX Runtime's MatMulNBits
// and embedding tables its GatherBlockQuantized, 8 or 4 bits in blocks of
// 32 (or more) with one scale each (NBits): both compute from the packed weights.
// So does a Gemm that is a MatMul with a bias, in 8 bits (NBits). The
// other weights of Gemm and Conv are stored as int8 with one scale per
// output channel, a DequantizeLinear in front of the operator giving the
// fp32 weight back at run time (Int8). Activations stay fp32, so the
// model's inputs, outputs and other numerics are unchanged: only the
// weights lose precision. Everything else in the file is copied as it
// was. Dir quantizes a model set whose graphs share external data files;
// Compare measures how closely a quantized model follows its original.
//
// The file is read and rewritten with internal/graphedit, which also holds
// the rewrites the synthesizer makes at load: the run time needs only
// that, and this package is for the offline tools (voice-agent models
// quantize and compare, bench).
package quantize

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/graphedit"
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

// weightInput is which input of an operator is its weight, and which axis
// of it the output channel (-1: Gemm's, from transB; -2: the last).
var weightInput = map[string][2]int{"MatMul": {1, -2}, "Gemm": {1, -1}, "Conv": {1, 0}}

// Int8 returns the model with the weights of its MatMul, Gemm and Conv
// operators as int8 behind DequantizeLinear, and its embedding tables as
// 8-bit GatherBlockQuantized (see the package doc).
func Int8(model []byte) ([]byte, Stats, error) {
	var st Stats
	out, err := graphedit.Rewrite(model, func(g []byte) ([]byte, bool, error) {
		b, err := int8Graph(g, &st)
		return b, st.microsoft, err
	})
	if err != nil {
		return nil, st, fmt.Errorf("quantize: %w", err)
	}
	return out, st, nil
}

func int8Graph(g []byte, st *Stats) ([]byte, error) {
	gr, err := graphedit.ReadGraph(g)
	if err != nil {
		return nil, err
	}
	quantized := map[string]bool{} // fp32 initializers replaced
	made := map[string]string{}    // name@axis -> the dequantized output
	var dqNodes, newInits [][]byte
	for _, n := range gr.Nodes {
		spec, ok := weightInput[n.OpType]
		if !ok || n.Domain != "" || len(n.Inputs) <= spec[0] {
			continue
		}
		t := gr.Weight(n.Inputs[spec[0]])
		if t == nil || t.Floats == nil || len(t.Dims) < 2 || gr.Inputs[t.Name] {
			continue
		}
		axis := spec[1]
		switch {
		case axis == -2:
			axis = len(t.Dims) - 1
		case axis < 0:
			axis = 1
			if n.Ints["transB"] != 0 {
				axis = 0
			}
		}
		key := fmt.Sprintf("%s@%d", t.Name, axis)
		if _, ok := made[key]; !ok {
			q, scale := quantizeAxis(t.Floats, t.Dims, axis)
			qn, sn, zn, out := t.Name+"_int8", t.Name+"_scale", t.Name+"_zero", t.Name+"_dq"
			channels := t.Dims[axis]
			newInits = append(newInits,
				graphedit.TensorBytes(qn, graphedit.TypeInt8, t.Dims, int8Raw(q)),
				graphedit.TensorBytes(sn, graphedit.TypeFloat, []int64{channels}, graphedit.Float32Raw(scale)),
				graphedit.TensorBytes(zn, graphedit.TypeInt8, []int64{channels}, make([]byte, channels)))
			dqNodes = append(dqNodes, dequantizeNode(qn, sn, zn, out, t.Name+"_dequantize", int64(axis)))
			made[key] = out
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.Floats))
			st.Int8Bytes += int64(len(q) + 4*len(scale))
		}
		n.Inputs[spec[0]] = made[key]
		quantized[t.Name] = true
	}
	newInits = append(newInits, quantizeGathers(gr, Format{Bits: 8}, st, quantized)...)
	// DequantizeLinear first: the node list stays topologically sorted.
	return gr.Encode(quantized, dqNodes, newInits), nil
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

func dequantizeNode(q, scale, zero, out, name string, axis int64) []byte {
	n := graphedit.NewNode("DequantizeLinear", []string{q, scale, zero}, out, graphedit.IntAttr("axis", axis))
	n.Fields = append(n.Fields, protowire.AppendString(protowire.AppendTag(nil, graphedit.NodeName, protowire.BytesType), name))
	return n.Encode()
}

func int8Raw(q []int8) []byte {
	b := make([]byte, len(q))
	for i, v := range q {
		b[i] = byte(v)
	}
	return b
}
