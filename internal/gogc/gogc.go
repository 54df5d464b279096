// Package gogc makes the Go collector run when the heap has grown by
// Percent since the last collection, instead of Go's default of 100, unless
// the user set GOGC. Import it for its side effect, from main packages.
//
// ONNX Runtime's outputs come back as Go slices (onnxruntime_go copies
// each into Go memory): the recognizer's caches every chunk, the
// synthesizer's frames and codec state, a prefill's KV cache. Most of it
// is garbage at once, and with the default the heap grows to twice what
// is live before it is collected: in a replayed conversation the whole
// assistant's Go heap reached 203 MB for 81-97 MB live, and its peak
// resident memory was 1,024-1,039 MiB against 922-944 MiB with Percent
// (int4 stand-ins, two runs each; docs/performance.md). The garbage holds
// no pointers, so a collection costs little: the synthesizer alone was no
// slower.
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
