package onnx_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/quantize"
)

// ReadWeights counts the bytes a model's matrix products read, as the
// file stores them: a [64, 96] fp32 MatMul weight, the same in 4 bits
// (MatMulNBits: half a byte a weight and an fp32 scale for each 32), and
// a weight three MatMuls read, once.
func TestReadWeights(t *testing.T) {
	const k, n = 64, 96
	model := graphedit.MatMulModel(make([]float32, k*n), k, n, 1)
	int4, _, err := quantize.NBits(model, quantize.Format{Bits: 4})
	require.NoError(t, err)
	const int4Bytes = k*n/2 + 4*k*n/32
	thrice, _, err := quantize.NBits(graphedit.MatMulModel(make([]float32, k*n), k, n, 3), quantize.Format{Bits: 4})
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		model []byte
		want  onnx.Weights
	}{
		{"fp32", model, onnx.Weights{Bytes: 4 * k * n}},
		{"int4", int4, onnx.Weights{Bytes: int4Bytes, NBits: 4}},
		{"read thrice", thrice, onnx.Weights{Bytes: int4Bytes, NBits: 4}},
	} {
		path := filepath.Join(t.TempDir(), tc.name+".onnx")
		require.NoError(t, os.WriteFile(path, tc.model, 0o644))
		got, err := onnx.ReadWeights(path)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.name)
	}
	_, err = onnx.ReadWeights(filepath.Join(t.TempDir(), "missing.onnx"))
	assert.Error(t, err)
}

// A session counts its runs and the bytes of their tensors, and its
// profile the multiply-adds of its matrix products: a [3, 64] x [64, 96]
// product is 3*64*96 of them, of more than one row, and its runs are
// told apart from those of one row.
func TestRunsAndProfile(t *testing.T) {
	testenv.ONNXRuntime(t)
	const rows, k, n, runs, single = 3, 64, 96, 4, 2
	dir := t.TempDir()
	path := filepath.Join(dir, "matmul.onnx")
	require.NoError(t, os.WriteFile(path, graphedit.MatMulModel(make([]float32, k*n), k, n, 1), 0o644))
	prefix := filepath.Join(dir, "profile")
	s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}}, []onnx.Tensor{{Name: "y", Type: onnx.Float}}, onnx.Options{Profile: prefix}, "")
	require.NoError(t, err)
	run := func(rows int64) {
		x, err := ort.NewEmptyTensor[float32](ort.NewShape(rows, k))
		require.NoError(t, err)
		defer x.Destroy()
		y, err := ort.NewEmptyTensor[float32](ort.NewShape(rows, n))
		require.NoError(t, err)
		defer y.Destroy()
		require.NoError(t, s.Run([]ort.Value{x}, []ort.Value{y}))
	}
	for range runs {
		run(rows)
	}
	for range single {
		run(1)
	}
	st := s.Runs()
	assert.Equal(t, runs+single, st.Calls)
	assert.Positive(t, st.Time)
	assert.Equal(t, int64((runs*rows+single)*k*4), st.InBytes)
	assert.Equal(t, int64((runs*rows+single)*n*4), st.OutBytes)
	require.NoError(t, s.Destroy()) // writes the profile
	p, err := onnx.ReadProfile(prefix, path)
	require.NoError(t, err)
	require.Len(t, p.Runs, runs+single)
	for i, r := range p.Runs {
		if i < runs {
			assert.True(t, r.Batched(), i)
			assert.Equal(t, float64(rows*k*n), r.Batch["MatMul"], i)
			assert.Empty(t, r.One, i)
		} else {
			assert.False(t, r.Batched(), i)
			assert.Equal(t, float64(k*n), r.One["MatMul"], i)
		}
	}
	assert.Contains(t, p.Ops, "MatMul")
	assert.Less(t, p.BatchedOps["MatMul"], p.Ops["MatMul"], "the runs of one row are not the batched runs'")
}
