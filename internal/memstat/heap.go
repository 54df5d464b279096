package memstat

import (
	"bytes"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// HeapAtPeak keeps the Go heap's profile (pprof's heap profile, which
// says which code allocated what is live) as it stood at the peak of live
// objects: at the end of a conversation the transients that made the
// peak are gone. Both the profile and the live heap it follows are as of
// the last garbage collection, so they roughly agree (the profile may
// lag by a collection, and is sampled), and no collection is forced. A new profile is taken whenever the live heap has grown a
// fiftieth past the last one's, so a few hundred at most over a heap's
// growth, each a few milliseconds.
type HeapAtPeak struct {
	mu      sync.Mutex
	best    uint64
	profile []byte
	ticks   ticker
}

// liveHeap is the heap's live objects as of the last collection.
const liveHeap = "/gc/heap/live:bytes"

// FollowHeap starts looking at the live heap every interval.
func FollowHeap(interval time.Duration) *HeapAtPeak {
	h := &HeapAtPeak{}
	h.look()
	h.ticks.start(interval, h.look)
	return h
}

func (h *HeapAtPeak) look() {
	sample := []metrics.Sample{{Name: liveHeap}}
	metrics.Read(sample)
	live := sample[0].Value.Uint64()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.profile != nil && live <= h.best+h.best/50 {
		return
	}
	var b bytes.Buffer
	if pprof.Lookup("heap").WriteTo(&b, 0) == nil {
		h.best, h.profile = live, b.Bytes()
	}
}

// Stop ends the looking and returns the profile taken at the peak
// (gzipped protocol buffers, as go tool pprof reads), and the live heap
// then in bytes.
func (h *HeapAtPeak) Stop() ([]byte, int64) {
	h.ticks.halt()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.profile, int64(h.best)
}
