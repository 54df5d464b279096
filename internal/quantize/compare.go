package quantize

import (
	"fmt"
	"math"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
)

// Agreement is how closely one output of a quantized model follows the
// original's on the same input.
type Agreement struct {
	Output string `json:"output"`
	// Cosine is the cosine similarity of the two outputs, flattened (1:
	// the same direction); MaxAbsDiff their largest elementwise difference.
	Cosine     float64 `json:"cosine"`
	MaxAbsDiff float64 `json:"max_abs_diff"`
	// Agree is, for a float output, the share of rows (the last axis
	// being the row) whose largest element is at the same index: for
	// logits, the share of greedy choices that agree. For an integer
	// output (ids a graph sampled), the share of equal elements.
	Agree float64 `json:"agreement"`
	// Integer marks an integer output, whose cosine means little.
	Integer bool `json:"integer,omitempty"`
}

// Compare runs the original model and the quantized one on the same input,
// made from the original's declaration (symbolic axes of size 1; floats a
// fixed smooth pattern in [-0.5, 0.5]; integers 1, a valid id, length and
// mask value for the models here; booleans false), and reports each
// output's agreement.
func Compare(original, quantized string, opts onnx.Options) ([]Agreement, error) {
	if err := onnx.Init(opts.Library); err != nil {
		return nil, err
	}
	ins, outs, err := onnx.Declaration(original)
	if err != nil {
		return nil, err
	}
	inputs, err := patternInputs(ins)
	defer destroy(inputs)
	if err != nil {
		return nil, err
	}
	var compared []onnx.Tensor
	for _, o := range outs {
		switch o.DataType {
		case onnx.Float, onnx.Int64, onnx.Int32:
			compared = append(compared, onnx.Tensor{Name: o.Name, Type: o.DataType})
		}
	}
	if len(compared) == 0 {
		return nil, fmt.Errorf("%s: no float or integer output to compare", original)
	}
	want, err := runOnce(original, ins, compared, inputs, opts)
	if err != nil {
		return nil, err
	}
	got, err := runOnce(quantized, ins, compared, inputs, opts)
	if err != nil {
		return nil, err
	}
	agreements := make([]Agreement, len(compared))
	for i, o := range compared {
		if len(want[i].data) != len(got[i].data) {
			return nil, fmt.Errorf("output %q: %d values from the original, %d from the quantized model", o.Name, len(want[i].data), len(got[i].data))
		}
		agreements[i] = agree(o.Name, want[i], got[i])
	}
	return agreements, nil
}

type output struct {
	data    []float32
	row     int  // the last axis' size
	integer bool // ids, compared for equality
}

func runOnce(path string, ins []ort.InputOutputInfo, outs []onnx.Tensor, inputs []ort.Value, opts onnx.Options) ([]output, error) {
	want := make([]onnx.Tensor, len(ins))
	for i, in := range ins {
		want[i] = onnx.Tensor{Name: in.Name, Type: in.DataType}
	}
	s, err := onnx.Open(path, want, outs, opts, "")
	if err != nil {
		return nil, err
	}
	defer s.Destroy()
	values := make([]ort.Value, len(outs))
	if err := s.Run(inputs, values); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer destroy(values)
	res := make([]output, len(outs))
	for i, v := range values {
		var o output
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			o.data = append(o.data, t.GetData()...)
		case *ort.Tensor[int64]:
			o.data, o.integer = asFloats(t.GetData()), true
		case *ort.Tensor[int32]:
			o.data, o.integer = asFloats(t.GetData()), true
		default:
			return nil, fmt.Errorf("%s: output %q has an unexpected type", path, outs[i].Name)
		}
		o.row = 1
		if shape := v.GetShape(); len(shape) > 0 {
			o.row = int(max(shape[len(shape)-1], 1))
		}
		res[i] = o
	}
	return res, nil
}

func patternInputs(ins []ort.InputOutputInfo) ([]ort.Value, error) {
	values := make([]ort.Value, 0, len(ins))
	for _, in := range ins {
		dims := make([]int64, len(in.Dimensions))
		for i, d := range in.Dimensions {
			dims[i] = max(d, 1)
		}
		shape := ort.NewShape(dims...)
		n := int(shape.FlattenedSize())
		var v ort.Value
		var err error
		switch in.DataType {
		case onnx.Float:
			data := make([]float32, n)
			for i := range data {
				data[i] = float32(0.5 * math.Sin(float64(i)*0.37))
			}
			v, err = ort.NewTensor(shape, data)
		case onnx.Int64:
			v, err = ort.NewTensor(shape, filled(n, int64(1)))
		case onnx.Int32:
			v, err = ort.NewTensor(shape, filled(n, int32(1)))
		case ort.TensorElementDataTypeBool:
			v, err = ort.NewTensor(shape, make([]bool, n))
		default:
			err = fmt.Errorf("input %q is %s, which Compare does not make", in.Name, in.DataType)
		}
		if err != nil {
			return values, err
		}
		values = append(values, v)
	}
	return values, nil
}

func asFloats[T int32 | int64](v []T) []float32 {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return f
}

func filled[T int32 | int64](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func destroy(values []ort.Value) {
	for _, v := range values {
		if v != nil {
			_ = v.Destroy()
		}
	}
}

func agree(name string, want, got output) Agreement {
	a := Agreement{Output: name, Integer: want.integer}
	var dot, ww, gg float64
	for i, w := range want.data {
		g := got.data[i]
		dot += float64(w) * float64(g)
		ww += float64(w) * float64(w)
		gg += float64(g) * float64(g)
		a.MaxAbsDiff = max(a.MaxAbsDiff, math.Abs(float64(w-g)))
	}
	switch {
	case ww == 0 && gg == 0:
		a.Cosine = 1
	case ww > 0 && gg > 0:
		a.Cosine = dot / math.Sqrt(ww*gg)
	}
	if want.integer {
		same := 0
		for i, w := range want.data {
			if got.data[i] == w {
				same++
			}
		}
		a.Agree = float64(same) / float64(max(len(want.data), 1))
		return a
	}
	rows, same := 0, 0
	for at := 0; at+want.row <= len(want.data); at += want.row {
		rows++
		if argmax(want.data[at:at+want.row]) == argmax(got.data[at:at+want.row]) {
			same++
		}
	}
	if rows > 0 {
		a.Agree = float64(same) / float64(rows)
	}
	return a
}

// argmax is the index of v's largest element (the first, if tied).
func argmax(v []float32) int { return slices.Index(v, slices.Max(v)) }
