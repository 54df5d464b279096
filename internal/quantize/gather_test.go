package quantize

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voiceassistant/voice/internal/onnx"
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
	msg := func(b []byte, num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
	}
	str := func(b []byte, num protowire.Number, s string) []byte { return msg(b, num, []byte(s)) }
	varint := func(b []byte, num protowire.Number, v int64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), uint64(v))
	}
	valueInfo := func(name string, typ int64, dims ...int64) []byte {
		var shape []byte
		for _, d := range dims {
			shape = msg(shape, 1, varint(nil, 1, d))
		}
		tensorType := msg(varint(nil, 1, typ), 2, shape)
		return msg(str(nil, 1, name), 2, msg(nil, 1, tensorType))
	}
	var node []byte
	node = str(node, nodeInput, "W")
	node = str(node, nodeInput, "ids")
	node = str(node, nodeOutput, "y")
	node = str(node, nodeOpType, "Gather")
	var g []byte
	g = msg(g, graphNode, node)
	g = str(g, 2, "gather")
	g = msg(g, graphInit, tensorBytes("W", typeFloat, []int64{rows, cols}, float32Raw(w)))
	g = msg(g, graphInput, valueInfo("ids", 7, 4))
	g = msg(g, 12, valueInfo("y", typeFloat, 4, cols))
	var m []byte
	m = varint(m, 1, 8) // ir_version
	m = msg(m, modelOpset, varint(nil, opsetVer, 17))
	return msg(m, modelGraph, g)
}
