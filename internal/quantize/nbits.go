package quantize

import (
	"bytes"
	"math"
	"strconv"

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
	return rewriteGraph(model, int4Graph)
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
		st.microsoft = true
	}
	newInits = append(newInits, quantizeGathers(gr, 4, st, replaced)...)
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

// quantizeGathers replaces each Gather of rows from a constant 2-D table
// (an embedding) with ONNX Runtime's GatherBlockQuantized (domain
// com.microsoft), which gathers the rows from the table stored in bits
// (4 or 8) and dequantizes only them: the fp32 table never exists in
// memory. Each row is quantized in blocks of blockSize, symmetric, stored
// unsigned with the zero point in the middle (8 or 128). It returns the
// new initializers and marks the replaced tables.
func quantizeGathers(gr *graph, bits int, st *Stats, replaced map[string]bool) [][]byte {
	var newInits [][]byte
	made := map[string][3]string{}
	for _, n := range gr.nodes {
		if n.opType != "Gather" || n.domain != "" || len(n.inputs) != 2 || n.ints["axis"] != 0 {
			continue
		}
		t := gr.inits[n.inputs[0]]
		if t == nil || t.floats == nil || len(t.dims) != 2 || gr.inputs[t.name] || (bits == 4 && t.dims[1]%2 != 0) {
			continue
		}
		names, ok := made[t.name]
		if !ok {
			rows, cols := int(t.dims[0]), int(t.dims[1])
			q, scales, zeros := packRows(t.floats, rows, cols, bits)
			names = [3]string{t.name + "_q" + strconv.Itoa(bits), t.name + "_scales", t.name + "_zeros"}
			blocks := int64((cols + blockSize - 1) / blockSize)
			newInits = append(newInits,
				tensorBytes(names[0], typeUint8, []int64{int64(rows), int64(len(q) / rows)}, q),
				tensorBytes(names[1], typeFloat, []int64{int64(rows), blocks}, float32Raw(scales)),
				tensorBytes(names[2], typeUint8, []int64{int64(rows), int64(len(zeros) / rows)}, zeros))
			made[t.name] = names
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.floats))
			st.Int8Bytes += int64(len(q) + 4*len(scales) + len(zeros))
		}
		n.opType, n.domain = "GatherBlockQuantized", msDomain
		n.inputs = []string{names[0], n.inputs[1], names[1], names[2]}
		n.fields = withoutAttr(n.fields, "axis")
		n.extra = [][]byte{intAttr("gather_axis", 0), intAttr("quantize_axis", 1), intAttr("block_size", blockSize), intAttr("bits", int64(bits))}
		replaced[t.name] = true
		st.microsoft = true
	}
	return newInits
}

// packRows quantizes the table w [rows, cols] row by row in blocks of
// blockSize: the layout GatherBlockQuantized reads, with 4-bit values two
// a byte (the first in the low nibble). Every zero point is the middle
// value, so each nibble of zeros holds it: ONNX Runtime indexes 4-bit zero
// points across rows rather than row by row.
func packRows(w []float32, rows, cols, bits int) (q []byte, scales []float32, zeros []byte) {
	levels, zero, zeroByte := 7, 8, byte(0x88)
	if bits == 8 {
		levels, zero, zeroByte = 127, 128, 0x80
	}
	blocks := (cols + blockSize - 1) / blockSize
	perByte := 8 / bits
	rowBytes := (cols + perByte - 1) / perByte
	q = make([]byte, rows*rowBytes)
	zeros = bytes.Repeat([]byte{zeroByte}, rows*((blocks+perByte-1)/perByte))
	scales = make([]float32, rows*blocks)
	for r := range rows {
		row := w[r*cols : (r+1)*cols]
		for b := range blocks {
			var m float32
			for _, v := range row[b*blockSize : min(cols, (b+1)*blockSize)] {
				m = max(m, float32(math.Abs(float64(v))))
			}
			scale := m / float32(levels)
			if scale == 0 {
				scale = 1
			}
			scales[r*blocks+b] = scale
			for i := b * blockSize; i < min(cols, (b+1)*blockSize); i++ {
				v := zero + int(min(float64(levels), max(-float64(levels), math.RoundToEven(float64(row[i]/scale)))))
				q[r*rowBytes+i/perByte] |= byte(v) << (bits * (i % perByte))
			}
		}
	}
	return q, scales, zeros
}

// withoutAttr drops the attribute name from a node's fields.
func withoutAttr(fields [][]byte, name string) [][]byte {
	var out [][]byte
	for _, f := range fields {
		num, typ, n := protowire.ConsumeTag(f)
		if num == nodeAttr && typ == protowire.BytesType && n > 0 {
			v, _ := protowire.ConsumeBytes(f[n:])
			var attr string
			_ = eachField(v, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
				if num == attrName && typ == protowire.BytesType {
					attr = string(val)
				}
				return nil
			})
			if attr == name {
				continue
			}
		}
		out = append(out, f)
	}
	return out
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
