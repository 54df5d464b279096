// Package gogc makes the Go collector run when the heap has grown by
// Percent since the last collection, instead of Go's default of 100, unless
// the user set GOGC. Import it for its side effect, from main packages.
//
// ONNX Runtime's outputs come back as Go slices (onnxruntime_go copies
// each into Go memory), so the synthesizer's decode step turns over its
// whole KV cache, megabytes, every frame. Almost all of it is garbage at
// once, and with the default the heap grows to twice what is live before
// it is collected: the whole assistant's Go heap reached 178 MiB for 80
// MiB live, and the synthesizer alone peaked at 509 MiB of resident memory
// against 442 MiB with Percent (docs/performance.md). The garbage holds no
// pointers, so a collection costs little, and more of them did not slow
// synthesis.
package gogc

import (
	"os"
	"runtime/debug"
)

// Percent is the heap growth, in percent of the live heap, that starts a
// collection.
const Percent = 10

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
}
