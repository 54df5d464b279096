package onnx

import (
	"fmt"
	"math"

	ort "github.com/yalue/onnxruntime_go"
)

// ProbeInputs makes an input for each of ins from its declaration alone:
// symbolic axes of size 1, a scalar as a tensor of one element (which
// onnxruntime_go needs, and the models here take); floats a fixed smooth pattern in [-0.5, 0.5];
// integers 1, a valid id, length and mask value for the models here;
// booleans false. The same declaration always gives the same input, so
// two runs of one model, or of a model and its derivative, can be
// compared. The caller destroys the values (DestroyValues), also on error.
func ProbeInputs(ins []ort.InputOutputInfo) ([]ort.Value, error) {
	values := make([]ort.Value, 0, len(ins))
	for _, in := range ins {
		dims := []int64{1}
		if len(in.Dimensions) > 0 {
			dims = make([]int64, len(in.Dimensions))
			for i, d := range in.Dimensions {
				dims[i] = max(d, 1)
			}
		}
		shape := ort.NewShape(dims...)
		n := int(shape.FlattenedSize())
		var v ort.Value
		var err error
		switch in.DataType {
		case Float:
			data := make([]float32, n)
			for i := range data {
				data[i] = float32(0.5 * math.Sin(float64(i)*0.37))
			}
			v, err = ort.NewTensor(shape, data)
		case Int64:
			v, err = ort.NewTensor(shape, filled(n, int64(1)))
		case Int32:
			v, err = ort.NewTensor(shape, filled(n, int32(1)))
		case ort.TensorElementDataTypeBool:
			v, err = ort.NewTensor(shape, make([]bool, n))
		default:
			err = fmt.Errorf("input %q is %s, for which no probe is made", in.Name, in.DataType)
		}
		if err != nil {
			return values, err
		}
		values = append(values, v)
	}
	return values, nil
}

func filled[T int32 | int64](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// DestroyValues destroys the values a run was given or gave back.
func DestroyValues(values []ort.Value) {
	for _, v := range values {
		if v != nil {
			_ = v.Destroy()
		}
	}
}

// Output is one output of a run, its elements as float32.
type Output struct {
	Name    string
	Data    []float32
	Row     int  // the last axis' size
	Integer bool // ids or lengths, compared for equality
}

// ReadOutputs copies the outputs of a run (float, int64 or int32 tensors)
// out of the values, which stay the caller's to destroy.
func ReadOutputs(values []ort.Value, names []string) ([]Output, error) {
	res := make([]Output, len(values))
	for i, v := range values {
		o := Output{Name: names[i]}
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			o.Data = append(o.Data, t.GetData()...)
		case *ort.Tensor[int64]:
			o.Data, o.Integer = asFloats(t.GetData()), true
		case *ort.Tensor[int32]:
			o.Data, o.Integer = asFloats(t.GetData()), true
		default:
			return nil, fmt.Errorf("output %q is not a float, int64 or int32 tensor", names[i])
		}
		o.Row = 1
		if shape := v.GetShape(); len(shape) > 0 {
			o.Row = int(max(shape[len(shape)-1], 1))
		}
		res[i] = o
	}
	return res, nil
}

func asFloats[T int32 | int64](v []T) []float32 {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	return f
}

// copyTolerance is how far a derived copy's float output may stray from
// the original's, relative to the output's largest magnitude (or 1): the
// copy runs the same kernels on the same packed weights, so its outputs
// are the original's to rounding (bit for bit on every model here,
// TestMappedCopyAgrees), and a misplaced weight gives garbage or NaN.
const copyTolerance = 1e-4

// sameOutputs says how got differs from want beyond copyTolerance, or nil.
// An integer output must be equal, and a non-finite value where the
// original has a finite one is never accepted.
func sameOutputs(want, got []Output) error {
	for i, w := range want {
		g := got[i]
		if len(w.Data) != len(g.Data) {
			return fmt.Errorf("output %q has %d values, the original's %d", w.Name, len(g.Data), len(w.Data))
		}
		scale := 1.0
		for _, x := range w.Data {
			if !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
				scale = max(scale, math.Abs(float64(x)))
			}
		}
		var worst float64
		for j, x := range w.Data {
			y := g.Data[j]
			switch wx, gy := float64(x), float64(y); {
			case finite(wx) != finite(gy):
				return fmt.Errorf("output %q element %d is %g, the original's %g", w.Name, j, gy, wx)
			case !finite(wx):
				if wx != gy && !(math.IsNaN(wx) && math.IsNaN(gy)) {
					return fmt.Errorf("output %q element %d is %g, the original's %g", w.Name, j, gy, wx)
				}
			case w.Integer && wx != gy:
				return fmt.Errorf("output %q element %d is %g, the original's %g", w.Name, j, gy, wx)
			default:
				worst = max(worst, math.Abs(wx-gy))
			}
		}
		if worst > copyTolerance*scale {
			return fmt.Errorf("output %q differs from the original's by up to %.3g (tolerance %.3g)", w.Name, worst, copyTolerance*scale)
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
