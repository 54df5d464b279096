package onnx

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ReadProfile sums the node times of the profiles ONNX Runtime wrote for
// the model at path under the Options.Profile prefix (when its sessions
// were destroyed), by operator: where a graph's time goes, computing
// (MatMulNBits, Attention) or moving data (Concat, Slice, Transpose).
func ReadProfile(prefix, model string) (map[string]time.Duration, error) {
	files, err := filepath.Glob(profilePrefix(prefix, model) + "_*.json")
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("onnx: no profile of %s under %s", model, prefix)
	}
	byOp := map[string]time.Duration{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		// Chrome trace events; a node's run is "NAME_kernel_time" with
		// its operator in args.op_name and its duration in microseconds.
		var events []struct {
			Cat  string `json:"cat"`
			Name string `json:"name"`
			Dur  int64  `json:"dur"`
			Args struct {
				OpName string `json:"op_name"`
			} `json:"args"`
		}
		if err := json.Unmarshal(data, &events); err != nil {
			return nil, fmt.Errorf("onnx: profile %s: %w", f, err)
		}
		for _, e := range events {
			if e.Cat == "Node" && strings.HasSuffix(e.Name, "_kernel_time") {
				byOp[e.Args.OpName] += time.Duration(e.Dur) * time.Microsecond
			}
		}
	}
	return byOp, nil
}

// profilePrefix is the prefix of the profile files a session of model
// writes under the Options.Profile prefix: one per model.
func profilePrefix(prefix, model string) string {
	return prefix + "-" + strings.TrimSuffix(filepath.Base(model), filepath.Ext(model))
}
