package quantize

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/voiceassistant/voice/internal/graphedit"
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
// back. A Gemm that is a MatMul with a bias added becomes one with
// MatMulNBits' bias input, at 8 bits. Other operators (Conv, other
// Gemms) are left as they are; Int8 quantizes them.
func NBits(model []byte, f Format) ([]byte, Stats, error) {
	if err := f.validate(); err != nil {
		return nil, Stats{}, err
	}
	var st Stats
	out, err := graphedit.Rewrite(model, func(g []byte) ([]byte, bool, error) {
		b, err := nbitsGraph(g, f, &st)
		return b, st.microsoft, err
	})
	if err != nil {
		return nil, st, fmt.Errorf("quantize: %w", err)
	}
	return out, st, nil
}

func nbitsGraph(g []byte, f Format, st *Stats) ([]byte, error) {
	gr, err := graphedit.ReadGraph(g)
	if err != nil {
		return nil, err
	}
	replaced := map[string]bool{}
	var newInits [][]byte
	packed := map[string][2]string{} // weight (and how it is read) -> its packed and scales names
	for _, n := range gr.Nodes {
		w, bias, transposed, ok := nbitsWeight(gr, n)
		if !ok {
			continue
		}
		k, cols := int(w.Dims[0]), int(w.Dims[1])
		if transposed {
			k, cols = cols, k
		}
		f := f
		if n.OpType == "Gemm" {
			// A Gemm is a model's last layer, where its outputs come
			// from (X-ASR's joiner picks the tokens, Smart Turn's
			// classifier gives the probability): 8 bits, as Int8 kept
			// it, whatever the rest.
			f.Bits = 8
		}
		key := fmt.Sprintf("%s@%t@%d", w.Name, transposed, f.Bits)
		names, ok := packed[key]
		if !ok {
			floats := w.Floats
			if transposed {
				floats = transpose(floats, cols, k)
			}
			q, scales := packColumns(floats, k, cols, f)
			base := w.Name
			if transposed {
				base += "_t"
			}
			names = [2]string{base + "_q" + strconv.Itoa(f.Bits), base + "_scales"}
			blocks := (k + f.block() - 1) / f.block()
			newInits = append(newInits,
				graphedit.TensorBytes(names[0], graphedit.TypeUint8, []int64{int64(cols), int64(blocks), int64(f.block() * f.Bits / 8)}, q),
				graphedit.TensorBytes(names[1], graphedit.TypeFloat, []int64{int64(cols * blocks)}, graphedit.Float32Raw(scales)))
			packed[key] = names
			st.Weights++
			st.FP32Bytes += int64(4 * len(w.Floats))
			st.Int8Bytes += int64(len(q) + 4*len(scales))
		}
		n.DropAttributes()
		n.OpType, n.Domain = "MatMulNBits", graphedit.MSDomain
		n.Inputs = []string{n.Inputs[0], names[0], names[1]}
		if bias != "" {
			// MatMulNBits' optional inputs: zero_points, g_idx, bias.
			n.Inputs = append(n.Inputs, "", "", bias)
		}
		n.Extra = [][]byte{graphedit.IntAttr("K", int64(k)), graphedit.IntAttr("N", int64(cols)), graphedit.IntAttr("bits", int64(f.Bits)), graphedit.IntAttr("block_size", int64(f.block())), graphedit.IntAttr("accuracy_level", 4)}
		replaced[w.Name] = true
		st.microsoft = true
	}
	newInits = append(newInits, quantizeGathers(gr, f, st, replaced)...)
	return gr.Encode(replaced, nil, newInits), nil
}

// nbitsWeight is the constant 2-D fp32 weight of a node MatMulNBits can
// take its place of: a MatMul by it, or a Gemm that is one with a bias
// added (alpha and beta 1, A not transposed; C, if any, a constant [N]).
// transposed says the weight is stored [N, K] (Gemm's transB). A Gemm
// left to Int8 would turn its int8 weight back into fp32 at every run
// (DequantizeLinear): X-ASR's joiner, 10 MB a call, tens of calls a
// second, enough allocation churn to grow the C heap by 100 MiB over a
// conversation (docs/performance.md).
func nbitsWeight(gr *graphedit.Graph, n *graphedit.Node) (w *graphedit.Tensor, bias string, transposed, ok bool) {
	if n.Domain != "" || len(n.Inputs) < 2 {
		return nil, "", false, false
	}
	switch {
	case n.OpType == "MatMul" && len(n.Inputs) == 2:
	case n.OpType == "Gemm" && len(n.Inputs) <= 3 && n.Ints["transA"] == 0 && attrOr(n.Floats, "alpha", 1) == 1:
		transposed = n.Ints["transB"] != 0
		if len(n.Inputs) == 3 && n.Inputs[2] != "" {
			if attrOr(n.Floats, "beta", 1) != 1 {
				return nil, "", false, false
			}
			bias = n.Inputs[2]
		}
	default:
		return nil, "", false, false
	}
	w = gr.Weight(n.Inputs[1])
	if w == nil || w.Floats == nil || len(w.Dims) != 2 || gr.Inputs[w.Name] {
		return nil, "", false, false
	}
	if bias != "" {
		c := gr.Weight(bias)
		cols := w.Dims[1]
		if transposed {
			cols = w.Dims[0]
		}
		if c == nil || c.Floats == nil || gr.Inputs[bias] || len(c.Dims) != 1 || c.Dims[0] != cols {
			return nil, "", false, false
		}
	}
	return w, bias, transposed, true
}

func attrOr(attrs map[string]float32, name string, fallback float32) float32 {
	if v, ok := attrs[name]; ok {
		return v
	}
	return fallback
}

// transpose gives w [rows, cols] as [cols, rows].
func transpose(w []float32, rows, cols int) []float32 {
	t := make([]float32, len(w))
	for r := range rows {
		for c := range cols {
			t[c*rows+r] = w[r*cols+c]
		}
	}
	return t
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
func quantizeGathers(gr *graphedit.Graph, f Format, st *Stats, replaced map[string]bool) [][]byte {
	bits := f.Bits
	var newInits [][]byte
	made := map[string][3]string{}
	for _, n := range gr.Nodes {
		if n.OpType != "Gather" || n.Domain != "" || len(n.Inputs) != 2 || n.Ints["axis"] != 0 {
			continue
		}
		t := gr.Weight(n.Inputs[0])
		if t == nil || t.Floats == nil || len(t.Dims) != 2 || gr.Inputs[t.Name] || (bits == 4 && t.Dims[1]%2 != 0) {
			continue
		}
		names, ok := made[t.Name]
		if !ok {
			rows, cols := int(t.Dims[0]), int(t.Dims[1])
			q, scales, zeros := packRows(t.Floats, rows, cols, f)
			names = [3]string{t.Name + "_q" + strconv.Itoa(bits), t.Name + "_scales", t.Name + "_zeros"}
			blocks := int64((cols + f.block() - 1) / f.block())
			newInits = append(newInits,
				graphedit.TensorBytes(names[0], graphedit.TypeUint8, []int64{int64(rows), int64(len(q) / rows)}, q),
				graphedit.TensorBytes(names[1], graphedit.TypeFloat, []int64{int64(rows), blocks}, graphedit.Float32Raw(scales)),
				graphedit.TensorBytes(names[2], graphedit.TypeUint8, []int64{int64(rows), int64(len(zeros) / rows)}, zeros))
			made[t.Name] = names
			st.Weights++
			st.FP32Bytes += int64(4 * len(t.Floats))
			st.Int8Bytes += int64(len(q) + 4*len(scales) + len(zeros))
		}
		n.OpType, n.Domain = "GatherBlockQuantized", graphedit.MSDomain
		n.Inputs = []string{names[0], n.Inputs[1], names[1], names[2]}
		n.Fields = graphedit.WithoutAttr(n.Fields, "axis")
		n.Extra = [][]byte{graphedit.IntAttr("gather_axis", 0), graphedit.IntAttr("quantize_axis", 1), graphedit.IntAttr("block_size", int64(f.block())), graphedit.IntAttr("bits", int64(bits))}
		replaced[t.Name] = true
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
