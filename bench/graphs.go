package bench

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/tts/moss"
)

// graphRuns splits a synthesizer's wall time over its graphs, where it
// says what its graphs ran (MOSS does): each graph's runs since before
// (its warm-up runs at load are not the text's), and what is left of
// elapsed outside them.
func graphRuns(tts pipeline.Synthesizer, before []GraphResult, elapsed time.Duration) ([]GraphResult, float64) {
	r, ok := tts.(interface{ Runs() []moss.GraphRuns })
	if !ok {
		return nil, 0
	}
	var graphs []GraphResult
	inside := 0.0
	for _, g := range r.Runs() {
		gb := GraphResult{Graph: g.Graph, Calls: g.Calls, TotalMS: ms(g.Time), model: g.Model, runs: g.Runs, tensorBytes: float64(g.InBytes + g.OutBytes)}
		for _, b := range before {
			if b.Graph == gb.Graph {
				gb.Calls -= b.Calls
				gb.TotalMS -= b.TotalMS
				gb.tensorBytes -= b.tensorBytes
			}
		}
		if gb.Calls > 0 {
			gb.MSPerCall = gb.TotalMS / float64(gb.Calls)
			gb.tensorBytes /= float64(gb.Calls)
		}
		inside += gb.TotalMS
		graphs = append(graphs, gb)
	}
	return graphs, ms(elapsed) - inside
}

// movingOps are the operators that move data rather than compute: in the
// synthesizer's decode step, the KV cache copied into the present one.
var movingOps = map[string]bool{
	"Concat": true, "Slice": true, "Transpose": true, "Reshape": true, "Gather": true,
	"Cast": true, "Expand": true, "Unsqueeze": true, "Squeeze": true, "Identity": true,
	"Split": true, "ScatterND": true, "Where": true, "Pad": true, "Tile": true,
}

// profileGraphs fills each of graphs' split by operator, and its bound,
// from the profiles ONNX Runtime wrote under prefix in a second run of
// the stage.
func profileGraphs(prefix string, graphs []GraphResult, limits MachineLimits) error {
	for i := range graphs {
		g := &graphs[i]
		p, err := onnx.ReadProfile(prefix, g.model)
		if err != nil {
			return err
		}
		// A session that runs two kinds (the decode step's shared form:
		// a chunk's text at once, frames one a step) is two graphs here,
		// its runs told apart by their products' rows.
		ops, runs := p.Ops, p.Runs
		switch g.runs {
		case moss.OneRowRuns:
			ops = maps.Clone(p.Ops)
			for op, d := range p.BatchedOps {
				ops[op] -= d
			}
			runs = slices.DeleteFunc(slices.Clone(runs), onnx.RunProducts.Batched)
		case moss.BatchedRuns:
			ops = p.BatchedOps
			runs = slices.DeleteFunc(slices.Clone(runs), func(r onnx.RunProducts) bool { return !r.Batched() })
		}
		g.OpsMS = map[string]float64{}
		for op, d := range ops {
			g.OpsMS[op] = ms(d)
			if movingOps[op] {
				g.MovingMS += ms(d)
			} else {
				g.ComputeMS += ms(d)
			}
		}
		if len(runs) == 0 || g.Calls == 0 {
			continue // no call to bound
		}
		w, err := onnx.ReadWeights(g.model)
		if err != nil {
			return err
		}
		// The profiled run speaks the same text after the same warm-up
		// runs at load: its last calls are the ones timed. MatMulNBits
		// computes at its bits' rate, the other products in fp32.
		runs = runs[max(0, len(runs)-g.Calls):]
		var macs, seconds float64
		for _, r := range runs {
			for product, byOp := range map[int]map[string]float64{1: r.One, GemmRows: r.Batch} {
				for op, n := range byOp {
					format := "fp32"
					if op == "MatMulNBits" {
						format = fmt.Sprintf("int%d", w.NBits)
					}
					rate := limits.GMACs[RateKey(format, product)]
					if rate == 0 {
						continue
					}
					n /= float64(len(runs))
					macs += n
					seconds += n / (rate * 1e9)
				}
			}
		}
		bytes := float64(w.Bytes) + g.tensorBytes
		g.MBPerCall, g.MMACsPerCall = bytes/1e6, macs/1e6
		g.BoundMS = 1000 * max(seconds, bytes/(limits.ReadGBs*1e9))
		if g.BoundMS > 0 {
			g.TimesBound = g.MSPerCall / g.BoundMS
		}
	}
	return nil
}
