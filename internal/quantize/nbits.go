package quantize

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// DefaultBlock is how many weights share a scale unless Format.Block says
// otherwise: 32, what ONNX Runtime's own block quantizer defaults to.
const DefaultBlock = 32

// Format is how NBits stores weights.
type Format struct {
	// Bits per weight: 8 or 4.
	Bits int
	// Block is how many weights of a column (of an embedding's row) share
	// one scale: a power of two from 16, as MatMulNBits and
	// GatherBlockQuantized require, to 256, the largest ONNX Runtime's
	// 4-bit kernels take; 0 means DefaultBlock. At 4 bits a
	// block of 64 stores 4.5 bits a weight instead of 5, and ONNX
	// Runtime's packed copy for int8 compute shrinks more: X-ASR's
	// full-size encoder takes 19 MiB less (docs/performance.md).
	Block int
}

func (f Format) block() int { return cmp.Or(f.Block, DefaultBlock) }

func (f Format) validate() error {
	if f.Bits != 8 && f.Bits != 4 {
		return fmt.Errorf("quantize: %d bits: 8 or 4", f.Bits)
	}
	if b := f.block(); b < 16 || b > 256 || b&(b-1) != 0 {
		return fmt.Errorf("quantize: blocks of %d weights: 16, 32, 64, 128 or 256", b)
	}
	return nil
}

// NBits returns the model with each MatMul by a constant 2-D weight
// replaced by ONNX Runtime's MatMulNBits (domain com.microsoft), the
// weight stored in f.Bits (4 or 8), symmetric, one fp32 scale per block of
// f.Block weights of a column, and each embedding table gathered by
// GatherBlockQuantized in the same format (quantizeGathers). Unlike Int8's
// DequantizeLinear, both operators compute from the packed weights, so
// the fp32 weights never exist in memory, and no run pays for turning them
// back. Other operators (Conv, Gemm) are left as they are; Int8 quantizes
// them.
func NBits(model []byte, f Format) ([]byte, Stats, error) {
	if err := f.validate(); err != nil {
		return nil, Stats{}, err
	}
	return rewriteGraph(model, func(g []byte, st *Stats) ([]byte, error) { return nbitsGraph(g, f, st) })
}

func nbitsGraph(g []byte, f Format, st *Stats) ([]byte, error) {
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
		t := gr.weight(n.inputs[1])
		if t == nil || t.floats == nil || len(t.dims) != 2 || gr.inputs[t.name] {
			continue
		}
		k, cols := int(t.dims[0]), int(t.dims[1])
		names, ok := packed[t.name]
		if !ok {
			q, scales := packColumns(t.floats, k, cols, f)
			names = [2]string{t.name + "_q" + strconv.Itoa(f.Bits), t.name + "_scales"}
			blocks := (k + f.block() - 1) / f.block()
			newInits = append(newInits,
				tensorBytes(names[0], typeUint8, []int64{int64(cols), int64(blocks), int64(f.block() * f.Bits / 8)}, q),
				tensorBytes(names[1], typeFloat, []int64{int64(cols * blocks)}, float32Raw(scales)))
			packed[t.name] = names
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.floats))
			st.Int8Bytes += int64(len(q) + 4*len(scales))
		}
		n.opType, n.domain = "MatMulNBits", msDomain
		n.inputs = []string{n.inputs[0], names[0], names[1]}
		n.extra = [][]byte{intAttr("K", int64(k)), intAttr("N", int64(cols)), intAttr("bits", int64(f.Bits)), intAttr("block_size", int64(f.block())), intAttr("accuracy_level", 4)}
		replaced[t.name] = true
		st.microsoft = true
	}
	newInits = append(newInits, quantizeGathers(gr, f, st, replaced)...)
	return gr.encode(replaced, nil, newInits), nil
}

// levels is the largest magnitude of a symmetric bits-bit value, and zero
// the stored value of 0 (values are stored unsigned).
func levels(bits int) (levels, zero int) {
	if bits == 8 {
		return 127, 128
	}
	return 7, 8
}

// packColumns quantizes w [k, cols] to f.Bits per weight, column by column
// in blocks of f.Block along k (the last block padded with zeros): the
// layout MatMulNBits reads, [cols][blocks][block*bits/8], 4-bit
// weights two a byte (the first in the low nibble), stored unsigned with
// MatMulNBits' default zero point (8 or 128).
func packColumns(w []float32, k, cols int, f Format) ([]byte, []float32) {
	bits, blockSize := f.Bits, f.block()
	top, zero := levels(bits)
	perByte := 8 / bits
	blockBytes := blockSize / perByte
	blocks := (k + blockSize - 1) / blockSize
	q := make([]byte, cols*blocks*blockBytes)
	scales := make([]float32, cols*blocks)
	for c := range cols {
		for b := range blocks {
			var m float32
			for i := b * blockSize; i < min(k, (b+1)*blockSize); i++ {
				m = max(m, float32(math.Abs(float64(w[i*cols+c]))))
			}
			scale := m / float32(top)
			if scale == 0 {
				scale = 1
			}
			scales[c*blocks+b] = scale
			for j := range blockSize {
				v := zero
				if i := b*blockSize + j; i < k {
					v = zero + int(min(float64(top), max(-float64(top), math.RoundToEven(float64(w[i*cols+c]/scale)))))
				}
				at := (c*blocks+b)*blockBytes + j/perByte
				q[at] |= byte(v) << (bits * (j % perByte))
			}
		}
	}
	return q, scales
}

// quantizeGathers replaces each Gather of rows from a constant 2-D table
// (an embedding) with ONNX Runtime's GatherBlockQuantized (domain
// com.microsoft), which gathers the rows from the table stored in bits
// (4 or 8) and dequantizes only them: the fp32 table never exists in
// memory. Each row is quantized in blocks of f.Block, symmetric, stored
// unsigned with the zero point in the middle (8 or 128). It returns the
// new initializers and marks the replaced tables.
func quantizeGathers(gr *graph, f Format, st *Stats, replaced map[string]bool) [][]byte {
	bits := f.Bits
	var newInits [][]byte
	made := map[string][3]string{}
	for _, n := range gr.nodes {
		if n.opType != "Gather" || n.domain != "" || len(n.inputs) != 2 || n.ints["axis"] != 0 {
			continue
		}
		t := gr.weight(n.inputs[0])
		if t == nil || t.floats == nil || len(t.dims) != 2 || gr.inputs[t.name] || (bits == 4 && t.dims[1]%2 != 0) {
			continue
		}
		names, ok := made[t.name]
		if !ok {
			rows, cols := int(t.dims[0]), int(t.dims[1])
			q, scales, zeros := packRows(t.floats, rows, cols, f)
			names = [3]string{t.name + "_q" + strconv.Itoa(bits), t.name + "_scales", t.name + "_zeros"}
			blocks := int64((cols + f.block() - 1) / f.block())
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
		n.extra = [][]byte{intAttr("gather_axis", 0), intAttr("quantize_axis", 1), intAttr("block_size", int64(f.block())), intAttr("bits", int64(bits))}
		replaced[t.name] = true
		st.microsoft = true
	}
	return newInits
}

// packRows quantizes the table w [rows, cols] row by row in blocks of
// f.Block: the layout GatherBlockQuantized reads, with 4-bit values two
// a byte (the first in the low nibble). Every zero point is the middle
// value, so each nibble of zeros holds it: ONNX Runtime indexes 4-bit zero
// points across rows rather than row by row.
func packRows(w []float32, rows, cols int, f Format) (q []byte, scales []float32, zeros []byte) {
	bits, blockSize := f.Bits, f.block()
	top, zero := levels(bits)
	zeroByte := byte(0x88)
	if bits == 8 {
		zeroByte = 0x80
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
			scale := m / float32(top)
			if scale == 0 {
				scale = 1
			}
			scales[r*blocks+b] = scale
			for i := b * blockSize; i < min(cols, (b+1)*blockSize); i++ {
				v := zero + int(min(float64(top), max(-float64(top), math.RoundToEven(float64(row[i]/scale)))))
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

// ExactActivations returns the model with its MatMulNBits computing on
// fp32 activations (accuracy level 0) rather than int8 ones (the 4 that
// NBits sets). At level 4 a product rounds its
// input to 8 bits, so an input that differs in its last bit from
// another's can round to another step: two graphs that agree to fp32
// rounding then differ by a quantization step now and then, which hides
// a real difference of that size. A rewrite is checked on its exact form.
func ExactActivations(model []byte) ([]byte, error) {
	out, _, err := rewriteGraph(model, func(g []byte, _ *Stats) ([]byte, error) {
		gr, err := readGraph(g)
		if err != nil {
			return nil, err
		}
		for _, n := range gr.nodes {
			if n.opType == "MatMulNBits" && n.domain == msDomain {
				if _, ok := n.ints["accuracy_level"]; ok {
					n.fields = withoutAttr(n.fields, "accuracy_level")
				}
			}
		}
		return gr.encode(nil, nil, nil), nil
	})
	return out, err
}
