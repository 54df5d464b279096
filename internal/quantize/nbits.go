package quantize

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// blockSize is how many weights of a column share a 4-bit scale: 32, what
// ONNX Runtime's own 4-bit quantizer defaults to.
const blockSize = 32

// Int4 returns the model with each MatMul by a constant 2-D weight
// replaced by ONNX Runtime's MatMulNBits (domain com.microsoft): the
// weight stored as 4 bits, symmetric, one fp32 scale per block of 32
// weights of a column. Unlike Int8's DequantizeLinear, the operator
// computes from the packed weight itself, so the fp32 weight never exists
// in memory. Other operators (Conv, Gemm) are left as they are; quantize
// them with Int8 first or after.
func Int4(model []byte) ([]byte, Stats, error) {
	return rewriteGraph(model, int4Graph, true)
}

func int4Graph(g []byte, st *Stats) ([]byte, error) {
	gr, err := readGraph(g)
	if err != nil {
		return nil, err
	}
	replaced := map[string]bool{}
	var newInits [][]byte
	packed := map[string][2]string{} // weight -> its packed and scales names
	for _, n := range gr.nodes {
		if n.opType != "MatMul" || n.domain != "" || len(n.inputs) != 2 {
			continue
		}
		t := gr.inits[n.inputs[1]]
		if t == nil || t.floats == nil || len(t.dims) != 2 || gr.inputs[t.name] {
			continue
		}
		k, cols := int(t.dims[0]), int(t.dims[1])
		names, ok := packed[t.name]
		if !ok {
			q, scales := packInt4(t.floats, k, cols)
			names = [2]string{t.name + "_q4", t.name + "_scales"}
			blocks := (k + blockSize - 1) / blockSize
			newInits = append(newInits,
				tensorBytes(names[0], typeUint8, []int64{int64(cols), int64(blocks), blockSize / 2}, q),
				tensorBytes(names[1], typeFloat, []int64{int64(cols * blocks)}, float32Raw(scales)))
			packed[t.name] = names
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.floats))
			st.Int8Bytes += int64(len(q) + 4*len(scales))
		}
		n.opType, n.domain = "MatMulNBits", msDomain
		n.inputs = []string{n.inputs[0], names[0], names[1]}
		n.extra = [][]byte{intAttr("K", int64(k)), intAttr("N", int64(cols)), intAttr("bits", 4), intAttr("block_size", blockSize)}
		replaced[t.name] = true
	}
	return gr.encode(replaced, nil, newInits), nil
}

// packInt4 quantizes w [k, cols] to 4 bits per weight, column by column in
// blocks of blockSize along k (the last block padded with zeros): the
// layout MatMulNBits reads, [cols][blocks][blockSize/2] with two weights a
// byte (the first in the low nibble), stored unsigned with zero point 8.
func packInt4(w []float32, k, cols int) ([]byte, []float32) {
	blocks := (k + blockSize - 1) / blockSize
	q := make([]byte, cols*blocks*blockSize/2)
	scales := make([]float32, cols*blocks)
	for c := range cols {
		for b := range blocks {
			var m float32
			for i := b * blockSize; i < min(k, (b+1)*blockSize); i++ {
				m = max(m, float32(math.Abs(float64(w[i*cols+c]))))
			}
			scale := m / 7
			if scale == 0 {
				scale = 1
			}
			scales[c*blocks+b] = scale
			for j := range blockSize {
				v := 8 // zero
				if i := b*blockSize + j; i < k {
					v = 8 + int(min(7, max(-8, math.RoundToEven(float64(w[i*cols+c]/scale)))))
				}
				at := (c*blocks+b)*blockSize/2 + j/2
				q[at] |= byte(v) << (4 * (j % 2))
			}
		}
	}
	return q, scales
}

// intAttr is an AttributeProto of type INT.
func intAttr(name string, v int64) []byte {
	var a []byte
	a = protowire.AppendTag(a, attrName, protowire.BytesType)
	a = protowire.AppendString(a, name)
	a = protowire.AppendTag(a, attrInt, protowire.VarintType)
	a = protowire.AppendVarint(a, uint64(v))
	a = protowire.AppendTag(a, attrType, protowire.VarintType)
	a = protowire.AppendVarint(a, attrTypeInt)
	var b []byte
	b = protowire.AppendTag(b, nodeAttr, protowire.BytesType)
	return protowire.AppendBytes(b, a)
}
