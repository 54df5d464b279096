package audio

import "sync/atomic"

// Ring is a single-producer single-consumer lock-free ring of float32
// samples. It is what crosses the boundary with a real-time audio callback:
// neither side allocates, locks or blocks.
type Ring struct {
	buf  []float32
	mask uint64
	// read and write are monotonically increasing sample counters; their
	// difference is the fill level. Each is written by one side only.
	read  atomic.Uint64
	write atomic.Uint64
}

// NewRing returns a ring holding at least capacity samples (rounded up to a
// power of two).
func NewRing(capacity int) *Ring {
	n := 1
	for n < capacity {
		n <<= 1
	}
	return &Ring{buf: make([]float32, n), mask: uint64(n - 1)}
}

// Cap is the ring's capacity in samples.
func (r *Ring) Cap() int { return len(r.buf) }

// Len is the number of samples available to read.
func (r *Ring) Len() int { return int(r.write.Load() - r.read.Load()) }

// Free is the number of samples that can be written without overwriting.
func (r *Ring) Free() int { return len(r.buf) - r.Len() }

// Write copies as much of p as fits and returns how many samples it wrote.
// Producer side only.
func (r *Ring) Write(p []float32) int {
	w := r.write.Load()
	n := min(len(p), len(r.buf)-int(w-r.read.Load()))
	for i := 0; i < n; {
		at := int((w + uint64(i)) & r.mask)
		i += copy(r.buf[at:], p[i:n])
	}
	r.write.Store(w + uint64(n))
	return n
}

// Read copies up to len(p) samples out and returns how many it read.
// Consumer side only.
func (r *Ring) Read(p []float32) int {
	rd := r.read.Load()
	n := min(len(p), int(r.write.Load()-rd))
	for i := 0; i < n; {
		at := int((rd + uint64(i)) & r.mask)
		i += copy(p[i:n], r.buf[at:])
	}
	r.read.Store(rd + uint64(n))
	return n
}

// Written is the total number of samples ever written.
func (r *Ring) Written() uint64 { return r.write.Load() }

// Consumed is the total number of samples ever read or skipped.
func (r *Ring) Consumed() uint64 { return r.read.Load() }

// SkipTo discards everything before the absolute write position pos.
// Consumer side only.
func (r *Ring) SkipTo(pos uint64) {
	if rd := r.read.Load(); pos > rd {
		r.read.Store(min(pos, r.write.Load()))
	}
}
