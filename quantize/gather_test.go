package quantize

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/onnxproto"
	"github.com/voiceassistant/voice/internal/testenv"
)

// An embedding table quantized for GatherBlockQuantized gives back every
// row it gathers within half a quantization step of each value, at 8 and
// at 4 bits, whichever row (ONNX Runtime packs the 4-bit zero points
// across rows, which a row-by-row layout got wrong from the second row on).
func TestGatherBlockQuantizedRows(t *testing.T) {
	testenv.ONNXRuntime(t)
	table := []float32{
		0.7, -0.3, 0.1, 0, 0.5, 0.2, -0.6, 0.3,
		1, 2, 3, 4, -1, -2, -3, -4,
		0, 0, 0, 0, 0, 0, 0, 0,
	}
	model := gatherModel(table, 3, 8)
	for bits, levels := range map[int]float32{8: 127, 4: 7} {
		q, st, err := Bits(model, Format{Bits: bits})
		require.NoError(t, err)
		require.Equal(t, 1, st.Weights, "the table")
		path := filepath.Join(t.TempDir(), "gather.onnx")
		require.NoError(t, os.WriteFile(path, q, 0o644))
		s, err := onnx.Open(path, []onnx.Tensor{{Name: "ids", Type: onnx.Int64}}, []onnx.Tensor{{Name: "y", Type: onnx.Float}}, onnx.Options{}, "")
		require.NoError(t, err)
		ids, err := ort.NewTensor(ort.NewShape(4), []int64{2, 1, 0, 1})
		require.NoError(t, err)
		out := []ort.Value{nil}
		require.NoError(t, s.Run([]ort.Value{ids}, out))
		got := out[0].(*ort.Tensor[float32]).GetData()
		for i, row := range []int{2, 1, 0, 1} {
			want := table[row*8 : row*8+8]
			var m float32
			for _, v := range want {
				m = max(m, float32(math.Abs(float64(v))))
			}
			for j, w := range want {
				assert.InDelta(t, w, got[i*8+j], float64(m/levels/2)+1e-6, "%d bits, row %d, column %d", bits, row, j)
			}
		}
		ids.Destroy()
		out[0].Destroy()
		s.Destroy()
	}
}

// gatherModel is a model whose output y is Gather(W, ids) for the table W
// [rows, cols].
func gatherModel(w []float32, rows, cols int64) []byte {
	return testModel(
		[][]string{{"Gather", "W", "ids", "y"}},
		map[string]initializer{"W": {[]int64{rows, cols}, w}},
		[]valueInfo{{"ids", 7, []int64{4}}}, []valueInfo{{"y", graphedit.TypeFloat, []int64{4, cols}}})
}

// initializer is a test model's fp32 constant, valueInfo one of its inputs
// or outputs.
type (
	initializer struct {
		dims []int64
		w    []float32
	}
	valueInfo struct {
		name string
		typ  int64
		dims []int64
	}
)

// testModel is an opset 17 model of nodes, each written as its operator,
// its inputs and its one output.
func testModel(nodes [][]string, inits map[string]initializer, inputs, outputs []valueInfo) []byte {
	var ns []*graphedit.Node
	for _, n := range nodes {
		ns = append(ns, graphedit.NewNode(n[0], n[1:len(n)-1], n[len(n)-1]))
	}
	return testModelOf(ns, inits, inputs, outputs)
}

// testModelOf is testModel of nodes with attributes.
func testModelOf(nodes []*graphedit.Node, inits map[string]initializer, inputs, outputs []valueInfo) []byte {
	msg := func(b []byte, num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
	str := func(b []byte, num protowire.Number, s string) []byte { return msg(b, num, []byte(s)) }
	varint := func(b []byte, num protowire.Number, v int64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), uint64(v))
	}
	info := func(v valueInfo) []byte {
		var shape []byte
		for _, d := range v.dims {
			shape = msg(shape, 1, varint(nil, 1, d))
		}
		tensorType := msg(varint(nil, 1, v.typ), 2, shape)
		return msg(str(nil, 1, v.name), 2, msg(nil, 1, tensorType))
	}
	var g []byte
	for _, n := range nodes {
		g = msg(g, 1, n.Encode()) // node
	}
	g = str(g, 2, "test")
	for _, name := range slices.Sorted(maps.Keys(inits)) {
		g = msg(g, onnxproto.GraphInitializer, graphedit.TensorBytes(name, graphedit.TypeFloat, inits[name].dims, graphedit.Float32Raw(inits[name].w)))
	}
	for _, v := range inputs {
		g = msg(g, onnxproto.GraphInput, info(v))
	}
	for _, v := range outputs {
		g = msg(g, onnxproto.GraphOutput, info(v))
	}
	var m []byte
	m = varint(m, 1, 8)               // ir_version
	m = msg(m, 8, varint(nil, 2, 17)) // opset_import: version
	return msg(m, onnxproto.ModelGraph, g)
}

// A weight that torch.onnx.export hands to its other uses through
// Identity nodes (an unrolled loop's steps: MOSS's local frame graph) is
// quantized at every use, its fp32 copy and the Identity nodes dropped;
// an Identity whose output the graph puts out stays, with its weight.
// ONNX Runtime runs such a MatMul by the weight itself: it removes every
// Identity node it can at load (microsoft/onnxruntime
// onnxruntime/core/optimizer/identity_elimination.cc:13-23,
// EliminateIdentity::Apply and SatisfyCondition).
func TestNBitsFollowsIdentity(t *testing.T) {
	testenv.ONNXRuntime(t)
	const k, n = 64, 8
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(math.Sin(float64(i)))
	}
	x := make([]float32, k)
	for i := range x {
		x[i] = float32(math.Cos(float64(i)))
	}
	want := make([]float32, n)
	for c := range n {
		for i := range k {
			want[c] += x[i] * w[i*n+c]
		}
	}
	inits := map[string]initializer{"W": {[]int64{k, n}, w}}
	in := []valueInfo{{"x", graphedit.TypeFloat, []int64{1, k}}}
	out := func(names ...string) []valueInfo {
		var vs []valueInfo
		for _, name := range names {
			vs = append(vs, valueInfo{name, graphedit.TypeFloat, []int64{1, n}})
		}
		return vs
	}
	steps := [][]string{
		{"MatMul", "x", "W", "y0"},
		{"Identity", "W", "W1"},
		{"Identity", "W1", "W2"},
		{"MatMul", "x", "W2", "y1"},
	}
	for _, tc := range []struct {
		name       string
		model      []byte
		outputs    []string
		keepsFP32W bool
	}{
		{"unrolled", testModel(steps, inits, in, out("y0", "y1")), []string{"y0", "y1"}, false},
		{"identity put out", testModel(steps, inits, in, append(out("y0", "y1"), valueInfo{"W1", graphedit.TypeFloat, []int64{k, n}})), []string{"y0", "y1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, st, err := NBits(tc.model, Format{Bits: 8})
			require.NoError(t, err)
			assert.Equal(t, 1, st.Weights, "one weight, packed once")
			gr := readModelGraph(t, q)
			var ops []string
			for _, nd := range gr.Nodes {
				ops = append(ops, nd.OpType)
			}
			assert.Equal(t, tc.keepsFP32W, gr.Weight("W") != nil, "the fp32 weight kept")
			if tc.keepsFP32W {
				assert.Equal(t, []string{"MatMulNBits", "Identity", "MatMulNBits"}, ops, "the Identity nothing reads goes")
			} else {
				assert.Equal(t, []string{"MatMulNBits", "MatMulNBits"}, ops)
			}
			path := filepath.Join(t.TempDir(), "m.onnx")
			require.NoError(t, os.WriteFile(path, q, 0o644))
			var outs []onnx.Tensor
			for _, name := range tc.outputs {
				outs = append(outs, onnx.Tensor{Name: name, Type: onnx.Float})
			}
			s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}}, outs, onnx.Options{}, "")
			require.NoError(t, err)
			defer s.Destroy()
			xt, err := ort.NewTensor(ort.NewShape(1, k), x)
			require.NoError(t, err)
			defer xt.Destroy()
			got := make([]ort.Value, len(outs))
			require.NoError(t, s.Run([]ort.Value{xt}, got))
			y0, y1 := got[0].(*ort.Tensor[float32]).GetData(), got[1].(*ort.Tensor[float32]).GetData()
			assert.Equal(t, y0, y1, "both uses run the same 8-bit weight")
			// int8 weights and, at accuracy level 4, int8 activations.
			assert.InDeltaSlice(t, want, y0, 0.1)
			for _, v := range got {
				v.Destroy()
			}
		})
	}
}

// readModelGraph reads the graph of an encoded model.
func readModelGraph(t *testing.T, model []byte) *graphedit.Graph {
	var gr *graphedit.Graph
	require.NoError(t, onnxproto.EachField(model, func(num protowire.Number, typ protowire.Type, val, _ []byte) error {
		if num != onnxproto.ModelGraph || typ != protowire.BytesType {
			return nil
		}
		var err error
		gr, err = graphedit.ReadGraph(val)
		return err
	}))
	require.NotNil(t, gr)
	return gr
}
