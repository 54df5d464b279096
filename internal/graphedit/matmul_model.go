package graphedit

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnxproto"
)

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
		tt := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), TypeFloat)
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
		mm := Node{Inputs: []string{"x", weightName(i / uses)}, OpType: "MatMul", Fields: fields}
		add(graphNode, mm.Encode())
	}
	add(2, []byte("matmul"))
	for j, w := range weights {
		add(graphInit, TensorBytes(weightName(j), TypeFloat, []int64{int64(k), int64(n)}, Float32Raw(w)))
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
