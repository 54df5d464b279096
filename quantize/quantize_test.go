package quantize

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/turn/smartturn"
)

// The tiny Smart Turn model, quantized: a quarter of its weights' size,
// it still opens with the session's signature checks and gives nearly
// the fp32 model's probabilities; quantizing again changes nothing.
func TestInt8SmartTurn(t *testing.T) {
	testenv.ONNXRuntime(t)
	src := "../turn/smartturn/testdata/smart_turn_tiny.onnx"
	model, err := os.ReadFile(src)
	require.NoError(t, err)
	q, st, err := Int8(model)
	require.NoError(t, err)
	assert.Positive(t, st.Weights)
	assert.Less(t, st.Int8Bytes, st.FP32Bytes/3, "int8 and a scale per channel")
	path := filepath.Join(t.TempDir(), "int8.onnx")
	require.NoError(t, os.WriteFile(path, q, 0o644))

	fp32, err := smartturn.New(src, onnx.Options{})
	require.NoError(t, err)
	defer fp32.Close()
	int8, err := smartturn.New(path, onnx.Options{})
	require.NoError(t, err)
	defer int8.Close()
	speech, err := audio.ReadWAVMono16k(context.Background(), "../test/testdata/demo.wav")
	require.NoError(t, err)
	ctx := context.Background()
	for _, seconds := range []int{1, 3, 8} {
		pcm := speech[:min(len(speech), seconds*16000)]
		want, err := fp32.Predict(ctx, pcm)
		require.NoError(t, err)
		got, err := int8.Predict(ctx, pcm)
		require.NoError(t, err)
		assert.InDelta(t, want, got, 0.02, "%d s", seconds)
	}

	again, st2, err := Int8(q)
	require.NoError(t, err)
	assert.Zero(t, st2.Weights, "nothing left to quantize")
	assert.Equal(t, q, again)
}

// The per-channel scale maps each channel's largest magnitude to 127, and
// rounds half to even, as numpy does.
func TestQuantizeAxis(t *testing.T) {
	w := []float32{
		1, -0.5, 0.25, // channel 0 of axis 0
		0, 0, 0, // an all-zero channel gets scale 1
	}
	q, scale := quantizeAxis(w, []int64{2, 3}, 0)
	assert.Equal(t, []float32{1.0 / 127, 1}, scale)
	assert.Equal(t, []int8{127, -64, 32, 0, 0, 0}, q) // -63.5 rounds to -64, 31.75 to 32
	q, scale = quantizeAxis(w, []int64{2, 3}, 1)
	assert.Equal(t, []float32{1.0 / 127, 0.5 / 127, 0.25 / 127}, scale)
	assert.Equal(t, []int8{127, -127, 127, 0, 0, 0}, q)
}

func TestNotAModel(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("not a protobuf \xff\xff"), {0x08, 0x01}} {
		_, _, err := Int8(b)
		assert.ErrorIs(t, err, graphedit.ErrNotONNX, "%q", b)
	}
}

// FuzzInt8: any bytes are refused with an error or give a model that
// reads back, with nothing left to quantize.
func FuzzInt8(f *testing.F) {
	model, err := os.ReadFile("../turn/smartturn/testdata/smart_turn_tiny.onnx")
	require.NoError(f, err)
	f.Add(model)
	f.Add([]byte{0x3a, 0x02, 0x0a, 0x00}) // a graph with one empty node
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := Int8(data)
		if err != nil {
			return
		}
		again, st, err := Int8(out)
		require.NoError(t, err)
		assert.Zero(t, st.Weights)
		assert.Equal(t, out, again)
	})
}

// packColumns lays a [k, cols] weight out as MatMulNBits reads it: column by
// column, blocks of 32 along k, two weights a byte (the first in the low
// nibble), zero point 8, and the last block padded with zeros.
func TestPackColumns4(t *testing.T) {
	const k, cols = 40, 2 // two blocks a column, the second padded
	w := make([]float32, k*cols)
	w[0*cols+0] = 7   // column 0, block 0: its largest: 7 steps of scale 1
	w[1*cols+0] = -3  // -> 8-3 = 5
	w[33*cols+1] = -2 // column 1, block 1: scale 2/7, -7 steps
	q, scales := packColumns(w, k, cols, Format{Bits: 4})
	require.Len(t, q, cols*2*DefaultBlock/2)
	require.Len(t, scales, cols*2)
	assert.InDelta(t, 1.0, scales[0], 1e-6)
	assert.Equal(t, float32(1), scales[1], "an all-zero block gets scale 1")
	assert.Equal(t, byte(15|5<<4), q[0], "7+8 low, -3+8 high")
	assert.Equal(t, byte(8|8<<4), q[1], "zeros")
	assert.InDelta(t, 2.0/7, scales[3], 1e-6)
	col1block1 := (1*2 + 1) * DefaultBlock / 2
	assert.Equal(t, byte(8|1<<4), q[col1block1], "k=32 is zero, k=33 is -7 steps")
	assert.Equal(t, byte(8|8<<4), q[col1block1+DefaultBlock/2-1], "the padding")
}

// Compare feeds both models the same input and measures how the quantized
// one's outputs follow the original's: int8 stays close on the tiny Smart
// Turn model and on the tiny MOSS prefill (every output, the KV cache
// too), and a model of another signature is refused.
func TestCompare(t *testing.T) {
	src := "../turn/smartturn/testdata/smart_turn_tiny.onnx"
	model, dir := original(t, src)
	for bits, name := range map[int]string{8: "int8.onnx", 4: "int4.onnx"} {
		q, _, err := Bits(model, Format{Bits: bits})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), q, 0o644))
	}
	same, err := Compare(src, src, onnx.Options{})
	require.NoError(t, err)
	require.Len(t, same, 1)
	assert.Equal(t, Agreement{Output: "logits", Cosine: 1, Agree: 1}, same[0])

	int8, err := Compare(src, filepath.Join(dir, "int8.onnx"), onnx.Options{})
	require.NoError(t, err)
	assert.Greater(t, int8[0].Cosine, 0.999)
	assert.Less(t, int8[0].MaxAbsDiff, 0.02)

	moss := "../tts/moss/testdata/tiny/moss_tts_prefill.onnx"
	prefill, err := os.ReadFile(moss)
	require.NoError(t, err)
	q, _, err := Bits(prefill, Format{Bits: 8})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prefill.onnx"), q, 0o644))
	outs, err := Compare(moss, filepath.Join(dir, "prefill.onnx"), onnx.Options{})
	require.NoError(t, err)
	require.Greater(t, len(outs), 2)
	for _, o := range outs {
		assert.Greater(t, o.Cosine, 0.99, o.Output)
		assert.Positive(t, o.MaxAbsDiff, "%s: int8 changes something", o.Output)
	}

	_, err = Compare(src, moss, onnx.Options{})
	require.ErrorContains(t, err, "does not match", "a model of another signature is refused")
}

// At 8 bits a block's weights are stored one a byte with zero point 128.
func TestPackColumns8(t *testing.T) {
	const k, cols = 33, 1 // two blocks, the second padded
	w := make([]float32, k)
	w[0], w[1], w[32] = 127, -64, 0.5
	q, scales := packColumns(w, k, cols, Format{Bits: 8})
	require.Len(t, q, 2*DefaultBlock)
	assert.Equal(t, []float32{1, 0.5 / 127}, scales)
	assert.Equal(t, []byte{255, 64, 128}, q[:3])
	assert.Equal(t, byte(255), q[DefaultBlock], "0.5 is the second block's largest")
	assert.Equal(t, byte(128), q[2*DefaultBlock-1], "the padding")
}

// A block of 64 holds 64 weights of a column under one scale: k = 64 is
// the second block's first weight.
func TestPackColumnsBlock64(t *testing.T) {
	const k = 80 // two blocks, the second padded
	w := make([]float32, k)
	w[0], w[63], w[64] = 7, -7, 1
	q, scales := packColumns(w, k, 1, Format{Bits: 4, Block: 64})
	require.Len(t, q, 2*64/2)
	assert.Equal(t, []float32{1, 1.0 / 7}, scales)
	assert.Equal(t, byte(15|8<<4), q[0], "7 steps, then a zero")
	assert.Equal(t, byte(8|1<<4), q[31], "k=62 is zero, k=63 is -7 steps")
	assert.Equal(t, byte(15|8<<4), q[32], "k=64 is the second block's largest")
}

// Larger blocks store fewer scales, and ONNX Runtime runs what they give:
// the tiny MOSS prefill keeps its outputs at each size (its widths are
// not multiples of the larger blocks, so MatMulNBits pads them), a table
// as wide as the blocks shrinks as they grow, and sizes MatMulNBits
// cannot take are refused.
func TestBlockSizes(t *testing.T) {
	src := "../tts/moss/testdata/tiny/moss_tts_prefill.onnx"
	model, dir := original(t, src)
	for _, block := range []int{16, 32, 64} {
		q, st, err := Bits(model, Format{Bits: 8, Block: block})
		require.NoError(t, err, "block %d", block)
		require.Positive(t, st.Weights)
		path := filepath.Join(dir, fmt.Sprintf("b%d.onnx", block))
		require.NoError(t, os.WriteFile(path, q, 0o644))
		outs, err := Compare(src, path, onnx.Options{})
		require.NoError(t, err, "block %d", block)
		for _, o := range outs {
			assert.Greater(t, o.Cosine, 0.999, "block %d: %s", block, o.Output)
		}
	}

	table := gatherModel(make([]float32, 4*128), 4, 128)
	var size int64 = 4 * 4 * 128
	for _, block := range []int{16, 32, 64, 128} {
		_, st, err := Bits(table, Format{Bits: 4, Block: block})
		require.NoError(t, err, "block %d", block)
		assert.Less(t, st.Int8Bytes, size, "block %d: smaller than the blocks before", block)
		size = st.Int8Bytes
	}

	for _, f := range []Format{{Bits: 4, Block: 48}, {Bits: 4, Block: 8}, {Bits: 4, Block: 512}, {Bits: 2}} {
		_, _, err := Bits(model, f)
		assert.Error(t, err, "%+v", f)
	}
}

// original reads a model to be quantized and run, and gives a directory
// for what is made of it.
func original(t *testing.T, path string) (model []byte, dir string) {
	t.Helper()
	testenv.ONNXRuntime(t)
	model, err := os.ReadFile(path)
	require.NoError(t, err)
	return model, t.TempDir()
}

// A Gemm that is a MatMul with a bias added (X-ASR's joiner, Smart Turn's
// classifier) becomes MatMulNBits with its bias input, at 8 bits in a
// 4-bit set as in an 8-bit one, whether its weight
// is stored [K, N] or transposed [N, K], and ONNX Runtime gives what the
// fp32 Gemm gives within the weights' quantization; a Gemm of another
// kind (alpha 0.5) is left to Int8's DequantizeLinear, and still runs.
func TestGemmAsMatMulNBits(t *testing.T) {
	testenv.ONNXRuntime(t)
	const m, k, n = 3, 64, 10
	x := make([]float32, m*k)
	for i := range x {
		x[i] = float32(math.Cos(float64(i) * 0.37))
	}
	w := make([]float32, k*n) // [K, N]
	for i := range w {
		w[i] = float32(math.Sin(float64(i)*0.11)) * 0.1
	}
	wT := make([]float32, n*k) // [N, K]
	for r := range k {
		for c := range n {
			wT[c*k+r] = w[r*n+c]
		}
	}
	bias := make([]float32, n)
	for i := range bias {
		bias[i] = float32(i) - 4.5
	}
	want := make([]float32, m*n)
	for i := range m {
		for c := range n {
			want[i*n+c] = bias[c]
			for j := range k {
				want[i*n+c] += x[i*k+j] * w[j*n+c]
			}
		}
	}
	io := []valueInfo{{"x", graphedit.TypeFloat, []int64{m, k}}}
	out := []valueInfo{{"y", graphedit.TypeFloat, []int64{m, n}}}
	for _, c := range []struct {
		name   string
		node   *graphedit.Node
		weight initializer
		inputs []string // MatMulNBits' inputs; none: left to Int8
	}{
		{"transB with a bias", graphedit.NewNode("Gemm", []string{"x", "W", "C"}, "y", graphedit.IntAttr("transB", 1)), initializer{[]int64{n, k}, wT},
			[]string{"x", "W_t_q8", "W_t_scales", "", "", "C"}},
		{"[K, N] with a bias", graphedit.NewNode("Gemm", []string{"x", "W", "C"}, "y"), initializer{[]int64{k, n}, w},
			[]string{"x", "W_q8", "W_scales", "", "", "C"}},
		{"alpha 0.5", graphedit.NewNode("Gemm", []string{"x", "W", "C"}, "y", graphedit.FloatAttr("alpha", 0.5), graphedit.FloatAttr("beta", 1)), initializer{[]int64{k, n}, w}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			model := testModelOf([]*graphedit.Node{c.node}, map[string]initializer{"W": c.weight, "C": {[]int64{n}, bias}}, io, out)
			q, st, err := Bits(model, Format{Bits: 4})
			require.NoError(t, err)
			require.Equal(t, 1, st.Weights)
			gr := readModelGraph(t, q)
			last := gr.Nodes[len(gr.Nodes)-1]
			if c.inputs == nil {
				require.Len(t, gr.Nodes, 2)
				assert.Equal(t, "DequantizeLinear", gr.Nodes[0].OpType)
				assert.Equal(t, "Gemm", last.OpType)
			} else {
				require.Len(t, gr.Nodes, 1)
				assert.Equal(t, "MatMulNBits", last.OpType)
				assert.Equal(t, c.inputs, last.Inputs)
				assert.Equal(t, int64(8), last.Ints["bits"])
				assert.NotContains(t, last.Ints, "transB", "Gemm's attributes are gone")
			}
			path := filepath.Join(t.TempDir(), "gemm.onnx")
			require.NoError(t, os.WriteFile(path, q, 0o644))
			s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}}, []onnx.Tensor{{Name: "y", Type: onnx.Float}}, onnx.Options{}, "")
			require.NoError(t, err)
			defer s.Destroy()
			in, err := ort.NewTensor(ort.NewShape(m, k), x)
			require.NoError(t, err)
			defer in.Destroy()
			res := []ort.Value{nil}
			require.NoError(t, s.Run([]ort.Value{in}, res))
			defer res[0].Destroy()
			scale := float32(1)
			if c.inputs == nil {
				scale = 0.5
			}
			for i, v := range res[0].(*ort.Tensor[float32]).GetData() {
				c := i % n
				assert.InDelta(t, scale*(want[i]-bias[c])+bias[c], v, 0.01, "y[%d]", i)
			}
		})
	}
}
