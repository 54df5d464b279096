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
	inputs, err := onnx.ProbeInputs(ins)
	defer onnx.DestroyValues(inputs)
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
		if len(want[i].Data) != len(got[i].Data) {
			return nil, fmt.Errorf("output %q: %d values from the original, %d from the quantized model", o.Name, len(want[i].Data), len(got[i].Data))
		}
		agreements[i] = agree(o.Name, want[i], got[i])
	}
	return agreements, nil
}

func runOnce(path string, ins []ort.InputOutputInfo, outs []onnx.Tensor, inputs []ort.Value, opts onnx.Options) ([]onnx.Output, error) {
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
	defer onnx.DestroyValues(values)
	if err := s.Run(inputs, values); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names := make([]string, len(outs))
	for i, o := range outs {
		names[i] = o.Name
	}
	res, err := onnx.ReadOutputs(values, names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

func agree(name string, want, got onnx.Output) Agreement {
	a := Agreement{Output: name, Integer: want.Integer}
	var dot, ww, gg float64
	for i, w := range want.Data {
		g := got.Data[i]
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
	if want.Integer {
		same := 0
		for i, w := range want.Data {
			if got.Data[i] == w {
				same++
			}
		}
		a.Agree = float64(same) / float64(max(len(want.Data), 1))
		return a
	}
	rows, same := 0, 0
	for at := 0; at+want.Row <= len(want.Data); at += want.Row {
		rows++
		if argmax(want.Data[at:at+want.Row]) == argmax(got.Data[at:at+want.Row]) {
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
