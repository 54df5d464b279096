package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/quantize"
)

// MachineLimits is what this machine does at best on one thread, measured
// in the run whose graphs are reported against it: no runtime streams
// weights faster than ReadGBs, nor multiplies faster than ONNX Runtime's
// own matrix-vector product of a transformer's size.
type MachineLimits struct {
	// ReadGBs is a streaming read of 256 MiB, GB a second.
	ReadGBs float64 `json:"read_gb_s"`
	// GMACs is ONNX Runtime's rate, G multiply-adds a second, for a
	// [1, 768] x [768, 3072] product (a MOSS feed-forward projection on
	// one row, as a decode step runs it) by weight format: "fp32"
	// (MatMul), "int8" and "int4" (MatMulNBits, blocks of 32, int8
	// compute, as models quantize writes them); "fp32 x128" and so on
	// are the same on 128 rows (a prefill's).
	GMACs map[string]float64 `json:"gmac_s"`
}

// measureLimits measures the machine's limits with ONNX Runtime from opts
// (its library), on one thread.
func measureLimits(opts onnx.Options) (MachineLimits, error) {
	l := MachineLimits{ReadGBs: readBandwidth(), GMACs: map[string]float64{}}
	const k, n = 768, 3072
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(math.Sin(float64(i))) / 16
	}
	dir, err := os.MkdirTemp("", "voice-limits-")
	if err != nil {
		return l, err
	}
	defer os.RemoveAll(dir)
	fp32 := graphedit.MatMulModel(w, k, n, 1)
	for _, f := range []struct {
		name string
		bits int
	}{{"fp32", 0}, {"int8", 8}, {"int4", 4}} {
		model := fp32
		if f.bits > 0 {
			if model, _, err = quantize.NBits(fp32, quantize.Format{Bits: f.bits}); err != nil {
				return l, err
			}
		}
		for _, rows := range []int{1, GemmRows} {
			rate, err := matMulRate(filepath.Join(dir, f.name+".onnx"), model, rows, k, n, opts)
			if err != nil {
				return l, fmt.Errorf("%s matrix product rate: %w", f.name, err)
			}
			l.GMACs[RateKey(f.name, rows)] = rate
		}
	}
	return l, nil
}

// GemmRows is the rows of the batched product measureLimits times.
const GemmRows = 128

// RateKey names the rate of weight format f on rows rows in
// MachineLimits.GMACs.
func RateKey(f string, rows int) string {
	if rows == 1 {
		return f
	}
	return fmt.Sprintf("%s x%d", f, rows)
}

// readBandwidth is the best of five streaming reads of 256 MiB on one
// thread, GB a second.
func readBandwidth() float64 {
	buf := make([]uint64, 256<<20/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	best := time.Duration(math.MaxInt64)
	var sum uint64
	for range 5 {
		start := time.Now()
		var a, b, c, d uint64
		for i := 0; i+4 <= len(buf); i += 4 {
			v := buf[i : i+4 : i+4]
			a, b, c, d = a+v[0], b+v[1], c+v[2], d+v[3]
		}
		best = min(best, time.Since(start))
		sum += a ^ b ^ c ^ d
	}
	runtime.KeepAlive(sum)
	return float64(len(buf)*8) / best.Seconds() / 1e9
}

// matMulRate writes model to path and times its runs on rows rows, on one
// thread: the best of five rounds of 200 multiply-adds by row and weight
// (a warm-up round first), G multiply-adds a second.
func matMulRate(path string, model []byte, rows, k, n int, opts onnx.Options) (float64, error) {
	if err := os.WriteFile(path, model, 0o600); err != nil {
		return 0, err
	}
	opts.IntraThreads, opts.Profile = 1, ""
	s, err := onnx.Open(path, []onnx.Tensor{{Name: "x", Type: onnx.Float}}, []onnx.Tensor{{Name: "y", Type: onnx.Float}}, opts, "")
	if err != nil {
		return 0, err
	}
	defer s.Destroy()
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = float32(math.Cos(float64(i)))
	}
	xt, err := ort.NewTensor(ort.NewShape(int64(rows), int64(k)), x)
	if err != nil {
		return 0, err
	}
	defer xt.Destroy()
	yt, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(rows), int64(n)))
	if err != nil {
		return 0, err
	}
	defer yt.Destroy()
	runs := max(1, 200/rows)
	best := time.Duration(math.MaxInt64)
	for round := range 6 {
		start := time.Now()
		for range runs {
			if err := s.Run([]ort.Value{xt}, []ort.Value{yt}); err != nil {
				return 0, err
			}
		}
		if round > 0 { // the first round warms up
			best = min(best, time.Since(start))
		}
	}
	return float64(rows*k*n*runs) / best.Seconds() / 1e9, nil
}
