package xasr

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/internal/onnx"
)

// fakeEncoder is the declaration of a zipformer2 streaming encoder laid
// out as icefall's export writes it (batch axis -1), with 2 stacks of
// 1 and 2 layers.
func fakeEncoder() (ins, outs []ort.InputOutputInfo, meta map[string]string) {
	tensor := func(name string, typ ort.TensorElementDataType, dims ...int64) ort.InputOutputInfo {
		return ort.InputOutputInfo{Name: name, OrtValueType: ort.ONNXTypeTensor, DataType: typ, Dimensions: dims}
	}
	ins = append(ins, tensor("x", onnx.Float, -1, 45, 80))
	outs = append(outs, tensor("encoder_out", onnx.Float, -1, 8, 32))
	stacks := []struct{ layers, left, dim int64 }{{1, 64, 24}, {2, 32, 48}}
	layer := 0
	for _, s := range stacks {
		for range s.layers {
			for _, c := range []ort.InputOutputInfo{
				tensor(fmt.Sprintf("cached_key_%d", layer), onnx.Float, s.left, -1, 16),
				tensor(fmt.Sprintf("cached_nonlin_attn_%d", layer), onnx.Float, 1, -1, s.left, s.dim*3/4),
				tensor(fmt.Sprintf("cached_val1_%d", layer), onnx.Float, s.left, -1, 12),
				tensor(fmt.Sprintf("cached_val2_%d", layer), onnx.Float, s.left, -1, 12),
				tensor(fmt.Sprintf("cached_conv1_%d", layer), onnx.Float, -1, s.dim, 7),
				tensor(fmt.Sprintf("cached_conv2_%d", layer), onnx.Float, -1, s.dim, 7),
			} {
				ins = append(ins, c)
				c.Name = "new_" + c.Name
				outs = append(outs, c)
			}
			layer++
		}
	}
	for _, c := range []ort.InputOutputInfo{tensor("embed_states", onnx.Float, -1, 128, 3, 19), tensor("processed_lens", onnx.Int64, -1)} {
		ins = append(ins, c)
		c.Name = "new_" + c.Name
		outs = append(outs, c)
	}
	meta = map[string]string{
		"model_type": "zipformer2", "T": "45", "decode_chunk_len": "32",
		"num_encoder_layers": "1,2", "encoder_dims": "24,48", "left_context_len": "64,32",
	}
	return ins, outs, meta
}

func TestDiscoverEncoder(t *testing.T) {
	ins, outs, meta := fakeEncoder()
	spec, err := discoverEncoder("enc.onnx", ins, outs, meta)
	require.NoError(t, err)
	assert.Equal(t, 45, spec.window)
	assert.Equal(t, 32, spec.shift)
	assert.Equal(t, 3, spec.layers)
	assert.Equal(t, int64(32), spec.outDim)
	assert.Equal(t, int64(16), spec.lensStep)
	// No "feature" in the metadata: Kaldi fbank over 20-7600 Hz, what
	// Gilgamesh-J/X-ASR X-ASR-zh-en/zipformer/onnx_pretrained-streaming.py:410-417 computes.
	assert.Equal(t, fbank.Options{LowFreq: 20, HighFreq: -400}, spec.features)
	require.Len(t, spec.caches, 3*6+2)
	for _, c := range spec.caches {
		assert.True(t, c.fedBack, c.name)
	}
	byName := map[string]cacheSpec{}
	for _, c := range spec.caches {
		byName[c.name] = c
	}
	assert.Equal(t, cacheSpec{name: "cached_key_2", typ: onnx.Float, shape: []int64{32, 1, 16}, batchAxis: 1, fedBack: true}, byName["cached_key_2"])
	assert.Equal(t, []int64{1, 1, 64, 18}, byName["cached_nonlin_attn_0"].shape)

	// As X-ASR's own export declares them: new caches with symbolic sizes
	// where the caches fix them.
	loose := modify(outs, "new_cached_key_2", func(i *ort.InputOutputInfo) { i.Dimensions = ort.NewShape(-1, -1, 16) })
	spec, err = discoverEncoder("enc.onnx", ins, loose, meta)
	require.NoError(t, err)
	assert.Len(t, spec.caches, 3*6+2)
	assert.Equal(t, 0, byName["cached_conv2_1"].batchAxis)
	assert.Equal(t, []int64{1, 128, 3, 19}, byName["embed_states"].shape)
	assert.Equal(t, cacheSpec{name: "processed_lens", typ: onnx.Int64, shape: []int64{1}, batchAxis: 0, fedBack: true}, byName["processed_lens"])

	// Without T in the metadata, x's static time axis is the window.
	m := maps.Clone(meta)
	delete(m, "T")
	spec, err = discoverEncoder("enc.onnx", ins, outs, m)
	require.NoError(t, err)
	assert.Equal(t, 45, spec.window)

	// An export with Whisper features (X-ASR-zh-en/zipformer/export-onnx-streaming.py:508-509
	// writes feature=whisper; k2-fsa/sherpa-onnx
	// sherpa-onnx/csrc/online-zipformer2-transducer-model.cc:127-131 then
	// computes Whisper features) is refused, not fed fbank.
	m = maps.Clone(meta)
	m["feature"] = "whisper"
	_, err = discoverEncoder("enc.onnx", ins, outs, m)
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	assert.ErrorContains(t, err, `metadata feature is "whisper"`)

	// Without the per-stack metadata nothing is cross-checked.
	spec, err = discoverEncoder("enc.onnx", ins, outs, map[string]string{"T": "45", "decode_chunk_len": "32"})
	require.NoError(t, err)
	assert.Equal(t, 3, spec.layers)

	// A batch-1 export (no symbolic axis) is used as declared.
	fixedIns := slices.Clone(ins)
	fixedIns[1].Dimensions = ort.NewShape(64, 1, 16)
	fixedOuts := slices.Clone(outs)
	fixedOuts[1].Dimensions = ort.NewShape(64, 1, 16)
	spec, err = discoverEncoder("enc.onnx", fixedIns, fixedOuts, meta)
	require.NoError(t, err)
	assert.Equal(t, -1, spec.caches[0].batchAxis)
	assert.Equal(t, []int64{64, 1, 16}, spec.caches[0].shape)

	// No new_processed_lens: the recognizer advances it.
	spec, err = discoverEncoder("enc.onnx", ins, without(outs, "new_processed_lens"), meta)
	require.NoError(t, err)
	assert.False(t, spec.caches[len(spec.caches)-1].fedBack)
}

func without(infos []ort.InputOutputInfo, name string) []ort.InputOutputInfo {
	return slices.DeleteFunc(slices.Clone(infos), func(i ort.InputOutputInfo) bool { return i.Name == name })
}

func modify(infos []ort.InputOutputInfo, name string, f func(*ort.InputOutputInfo)) []ort.InputOutputInfo {
	out := slices.Clone(infos)
	for i := range out {
		if out[i].Name == name {
			out[i].Dimensions = slices.Clone(out[i].Dimensions)
			f(&out[i])
		}
	}
	return out
}

func TestDiscoverEncoderErrors(t *testing.T) {
	ins, outs, meta := fakeEncoder()
	withMeta := func(k, v string) map[string]string {
		m := maps.Clone(meta)
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name      string
		ins, outs []ort.InputOutputInfo
		meta      map[string]string
		want      string
	}{
		{"model type", ins, outs, withMeta("model_type", "zipformer"), `model_type is "zipformer"`},
		{"no x", without(ins, "x"), outs, meta, `no input "x"`},
		{"x rank", modify(ins, "x", func(i *ort.InputOutputInfo) { i.Dimensions = ort.NewShape(-1, 45) }), outs, meta, "input x has shape [-1 45]"},
		{"x features", modify(ins, "x", func(i *ort.InputOutputInfo) { i.Dimensions[2] = 40 }), outs, meta, "40 features per frame"},
		{"T disagrees", ins, outs, withMeta("T", "39"), "metadata T=39 but input x is declared [-1 45 80]"},
		{"T not a number", ins, outs, withMeta("T", "forty"), `metadata T="forty" is not an integer`},
		{"no T", modify(ins, "x", func(i *ort.InputOutputInfo) { i.Dimensions[1] = -1 }), outs, withMeta("T", ""), "cannot tell the window size"},
		{"no shift", ins, outs, withMeta("decode_chunk_len", ""), "no metadata decode_chunk_len"},
		{"shift too big", ins, outs, withMeta("decode_chunk_len", "46"), "decode_chunk_len=46 does not fit the window T=45"},
		{"no encoder_out", ins, without(outs, "encoder_out"), meta, `no output "encoder_out"`},
		{"encoder_out rank", ins, modify(outs, "encoder_out", func(i *ort.InputOutputInfo) { i.Dimensions = ort.NewShape(-1, 32) }), meta, "output encoder_out is"},
		{"missing layer cache", without(ins, "cached_val2_1"), without(outs, "new_cached_val2_1"), meta, "input cached_val2_1 is missing"},
		{"no caches", ins[:1], outs[:1], meta, "not a streaming zipformer2 encoder"},
		{"no embed_states", without(ins, "embed_states"), outs, meta, `no input "embed_states"`},
		{"no processed_lens", without(ins, "processed_lens"), outs, meta, `no input "processed_lens"`},
		{"two symbolic axes", modify(ins, "cached_key_0", func(i *ort.InputOutputInfo) { i.Dimensions[0] = -1 }), outs, meta, "more than one symbolic axis"},
		{"cache not fed back", ins, without(outs, "new_cached_conv1_2"), meta, `input "cached_conv1_2" has no "new_cached_conv1_2" output`},
		{"new cache shape", ins, modify(outs, "new_cached_key_1", func(i *ort.InputOutputInfo) { i.Dimensions[2] = 17 }), meta, "cannot be fed back"},
		{"new cache type", ins, modify(outs, "new_embed_states", func(i *ort.InputOutputInfo) { i.DataType = onnx.Int64 }), meta, "cannot be fed back"},
		{"float16 cache", modify(ins, "cached_key_0", func(i *ort.InputOutputInfo) { i.DataType = ort.TensorElementDataTypeFloat16 }), modify(outs, "new_cached_key_0", func(i *ort.InputOutputInfo) { i.DataType = ort.TensorElementDataTypeFloat16 }), meta, "handles float, int64 and int32 state"},
		{"float processed_lens", modify(ins, "processed_lens", func(i *ort.InputOutputInfo) { i.DataType = onnx.Float }), modify(outs, "new_processed_lens", func(i *ort.InputOutputInfo) { i.DataType = onnx.Float }), meta, "processed_lens is float"},
		{"layer count", ins, outs, withMeta("num_encoder_layers", "2,2"), "adds up to 4 layers, but the inputs have caches for 3"},
		{"layer list", ins, outs, withMeta("num_encoder_layers", "1;2"), "not a comma-separated list"},
		{"left context", ins, outs, withMeta("left_context_len", "64,16"), "left_context_len=64,16 says stack 1 has 16, but cached_key_1 is declared with 32 at axis 0"},
		{"encoder dims", ins, outs, withMeta("encoder_dims", "24,40"), "encoder_dims=24,40 says stack 1 has 40"},
		{"stack count", ins, outs, withMeta("encoder_dims", "24,48,64"), "has 3 stacks, num_encoder_layers has 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := discoverEncoder("enc.onnx", tc.ins, tc.outs, tc.meta)
			require.Error(t, err)
			assert.True(t, errors.Is(err, onnx.ErrModelMismatch), "%v", err)
			assert.Contains(t, err.Error(), "enc.onnx")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestContextSize(t *testing.T) {
	y := func(d int64) []ort.InputOutputInfo {
		return []ort.InputOutputInfo{{Name: "y", OrtValueType: ort.ONNXTypeTensor, DataType: onnx.Int64, Dimensions: ort.NewShape(-1, d)}}
	}
	n, err := contextSize("dec.onnx", y(2), map[string]string{"context_size": "2"})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = contextSize("dec.onnx", y(3), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	n, err = contextSize("dec.onnx", y(-1), map[string]string{"context_size": "2"})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	_, err = contextSize("dec.onnx", y(3), map[string]string{"context_size": "2"})
	require.ErrorIs(t, err, onnx.ErrModelMismatch)
	_, err = contextSize("dec.onnx", y(-1), nil)
	require.ErrorContains(t, err, "no metadata context_size")
	_, err = contextSize("dec.onnx", y(0), nil)
	require.ErrorContains(t, err, "context size 0")
}
