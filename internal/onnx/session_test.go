package onnx_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/testenv"
)

var sileroIn = []onnx.Tensor{{"input", onnx.Float, []int64{-1, -1}}, {"state", onnx.Float, []int64{2, -1, 128}}, {"sr", onnx.Int64, nil}}
var sileroOut = []onnx.Tensor{{"output", onnx.Float, []int64{-1, 1}}, {"stateN", onnx.Float, nil}}

func TestOpenChecksTheModel(t *testing.T) {
	model := testenv.Model(t, "silero_vad_v5.onnx")
	for _, opts := range []onnx.Options{{}, {IntraThreads: 2, InterThreads: 2}} {
		s, err := onnx.Open(model, sileroIn, sileroOut, opts, "run scripts/setup")
		require.NoError(t, err, "%+v", opts)
		require.NoError(t, s.Destroy())
	}
	assert.Equal(t, "1.30.0", onnx.Version(), "the library scripts/setup installs")

	corrupt := filepath.Join(t.TempDir(), "corrupt.onnx")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a model"), 0o644))

	for _, tc := range []struct {
		name    string
		path    string
		inputs  []onnx.Tensor
		wantErr []string
	}{
		{"missing file", "/nonexistent/vad.onnx", sileroIn, []string{"/nonexistent/vad.onnx", "run scripts/setup"}},
		{"corrupt file", corrupt, sileroIn, []string{"corrupt.onnx", "corrupt or not a model"}},
		{"wrong name", model, []onnx.Tensor{{"audio", onnx.Float, nil}}, []string{`no input "audio"`, "the model declares"}},
		{"wrong type", model, []onnx.Tensor{{"sr", onnx.Float, nil}}, []string{`input "sr" is`, "expected"}},
		{"wrong rank", model, []onnx.Tensor{{"input", onnx.Float, []int64{1, 80, 800}}}, []string{`input "input" has shape`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := onnx.Open(tc.path, tc.inputs, sileroOut, onnx.Options{}, "run scripts/setup")
			require.Error(t, err)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// RunContext runs like Run while its context lives, and a cancelled
// context stops it (ONNX Runtime's terminate flag, checked between nodes)
// with the context's error.
func TestRunContext(t *testing.T) {
	model := testenv.Model(t, "silero_vad_v5.onnx")
	s, err := onnx.Open(model, sileroIn, sileroOut, onnx.Options{}, "run scripts/setup")
	require.NoError(t, err)
	defer s.Destroy()
	run := func(ctx context.Context) ([]float32, error) {
		in, err := ort.NewTensor(ort.NewShape(1, 576), make([]float32, 576))
		require.NoError(t, err)
		state, err := ort.NewTensor(ort.NewShape(2, 1, 128), make([]float32, 256))
		require.NoError(t, err)
		sr, err := ort.NewScalar(int64(16000))
		require.NoError(t, err)
		defer func() { in.Destroy(); state.Destroy(); sr.Destroy() }()
		outs := []ort.Value{nil, nil}
		err = s.RunContext(ctx, []ort.Value{in, state, sr}, outs)
		defer func() {
			for _, o := range outs {
				if o != nil {
					o.Destroy()
				}
			}
		}()
		if err != nil {
			return nil, err
		}
		return append([]float32(nil), outs[0].(*ort.Tensor[float32]).GetData()...), nil
	}
	got, err := run(context.Background())
	require.NoError(t, err)
	require.Len(t, got, 1)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = run(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}
