package memstat

import (
	"bytes"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// HeapAtPeak keeps the Go heap's profile (pprof's heap profile, which
// says which code allocated what is live) as it stood at the peak of live
// objects: at the end of a conversation the transients that made the
// peak are gone. Both the profile and the live heap it follows are as of
// the last garbage collection, so they roughly agree (the profile may
// lag by a collection, and is sampled), and no collection is forced.
type HeapAtPeak struct{ peak atPeak[[]byte] }

// liveHeap is the heap's live objects as of the last collection.
const liveHeap = "/gc/heap/live:bytes"

// FollowHeap starts looking at the live heap every interval.
func FollowHeap(interval time.Duration) *HeapAtPeak {
	sample := []metrics.Sample{{Name: liveHeap}}
	h := &HeapAtPeak{}
	h.peak.follow(interval, func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}, func() ([]byte, bool) {
		var b bytes.Buffer
		err := pprof.Lookup("heap").WriteTo(&b, 0)
		return b.Bytes(), err == nil
	})
	return h
}

// Stop ends the looking and returns the profile taken at the peak
// (gzipped protocol buffers, as go tool pprof reads), and the live heap
// then in bytes.
func (h *HeapAtPeak) Stop() ([]byte, int64) { return h.peak.stop() }
