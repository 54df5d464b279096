package onnx

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Profile is what ONNX Runtime's profiles of one model's sessions say.
type Profile struct {
	// Ops is the node time by operator: where a graph's time goes,
	// computing (MatMulNBits, Attention) or moving data (Concat, Slice,
	// Transpose).
	Ops map[string]time.Duration
	// BatchedOps is the part of Ops from batched runs (RunProducts), where
	// a session runs both kinds (a decode step fed a chunk's text at once,
	// then its frames one a step).
	BatchedOps map[string]time.Duration
	// Runs are the runs the profiles cover, in their order, each with its
	// matrix products.
	Runs []RunProducts
}

// RunProducts are one run's matrix products (MatMul, FusedMatMul, Gemm,
// MatMulNBits): their multiply-adds by operator, from the shapes each
// node run was given (an output of shape [..., M, N] from an input [...,
// M, K] is M*N*K of them, times the leading dimensions), on one row (a
// matrix-vector product, M = 1) and on more (a prefill's).
type RunProducts struct {
	One, Batch map[string]float64
}

// Batched says the run had a product of more than one row.
func (r RunProducts) Batched() bool { return len(r.Batch) > 0 }

// matrixProducts are the operators Profile counts multiply-adds of.
var matrixProducts = map[string]bool{"MatMul": true, "FusedMatMul": true, "Gemm": true, "MatMulNBits": true, "MatMulInteger": true}

// ReadProfile reads the profiles ONNX Runtime wrote for the model at path
// under the Options.Profile prefix (when its sessions were destroyed).
func ReadProfile(prefix, model string) (Profile, error) {
	p := Profile{Ops: map[string]time.Duration{}, BatchedOps: map[string]time.Duration{}}
	files, err := filepath.Glob(profilePrefix(prefix, model) + "_*.json")
	if err != nil {
		return p, err
	}
	if len(files) == 0 {
		return p, fmt.Errorf("onnx: no profile of %s under %s", model, prefix)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return p, err
		}
		// Chrome trace events; a node's run is "NAME_kernel_time" with
		// its operator in args.op_name, its duration in microseconds and
		// its tensors' shapes as [{"float": [dims]}, ...]; a session run
		// is "model_run", recorded after its nodes.
		var events []struct {
			Cat  string `json:"cat"`
			Name string `json:"name"`
			Dur  int64  `json:"dur"`
			Args struct {
				OpName string               `json:"op_name"`
				In     []map[string][]int64 `json:"input_type_shape"`
				Out    []map[string][]int64 `json:"output_type_shape"`
			} `json:"args"`
		}
		if err := json.Unmarshal(data, &events); err != nil {
			return p, fmt.Errorf("onnx: profile %s: %w", f, err)
		}
		ops, run := map[string]time.Duration{}, RunProducts{One: map[string]float64{}, Batch: map[string]float64{}}
		for _, e := range events {
			switch {
			case e.Cat == "Session" && e.Name == "model_run":
				if run.Batched() {
					for op, d := range ops {
						p.BatchedOps[op] += d
					}
				}
				p.Runs = append(p.Runs, run)
				ops, run = map[string]time.Duration{}, RunProducts{One: map[string]float64{}, Batch: map[string]float64{}}
			case e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time"):
				d := time.Duration(e.Dur) * time.Microsecond
				p.Ops[e.Args.OpName] += d
				ops[e.Args.OpName] += d
				if matrixProducts[e.Args.OpName] {
					n, rows := macs(e.Args.In, e.Args.Out)
					if rows > 1 {
						run.Batch[e.Args.OpName] += n
					} else {
						run.One[e.Args.OpName] += n
					}
				}
			}
		}
	}
	return p, nil
}

// macs is the multiply-adds of a matrix product with these input and
// output shapes, the output's size times the first input's last
// dimension (K), and its rows (M).
func macs(in, out []map[string][]int64) (n float64, rows int64) {
	dims := func(ts []map[string][]int64) []int64 {
		for _, t := range ts {
			for _, d := range t {
				return d
			}
		}
		return nil
	}
	a, y := dims(in), dims(out)
	if len(a) == 0 || len(y) == 0 {
		return 0, 0
	}
	n = float64(a[len(a)-1])
	for _, d := range y {
		n *= float64(d)
	}
	rows = 1
	if len(y) > 1 {
		rows = y[len(y)-2]
	}
	return n, rows
}

// profilePrefix is the prefix of the profile files a session of model
// writes under the Options.Profile prefix: one per model.
func profilePrefix(prefix, model string) string {
	return prefix + "-" + strings.TrimSuffix(filepath.Base(model), filepath.Ext(model))
}
