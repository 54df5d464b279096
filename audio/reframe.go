package audio

// Reframer cuts a stream of mono frames of any size into frames of exactly
// Size samples (e.g. 10 ms device periods into 512-sample VAD windows),
// keeping the stream positions exact.
type Reframer struct {
	Size   int
	format Format
	buf    []float32
	pos    int64 // stream position of buf[0]
	primed bool
}

// NewReframer returns a reframer producing frames of size samples.
func NewReframer(size int) *Reframer {
	return &Reframer{Size: size, buf: make([]float32, 0, 2*size)}
}

// Push adds a frame and calls emit for every complete output frame. The
// emitted samples are only valid during the call.
func (r *Reframer) Push(in Frame, emit func(Frame)) {
	if !r.primed || in.Pos != r.pos+int64(len(r.buf)) {
		// A gap in the stream (or the first frame) restarts the window at
		// the new position rather than stitching unrelated audio together.
		r.buf = r.buf[:0]
		r.pos = in.Pos
		r.format = in.Format
		r.primed = true
	}
	r.buf = append(r.buf, in.Samples...)
	n := 0
	for len(r.buf)-n >= r.Size {
		emit(Frame{Format: r.format, Pos: r.pos, Samples: r.buf[n : n+r.Size]})
		n += r.Size
		r.pos += int64(r.Size)
	}
	r.buf = append(r.buf[:0], r.buf[n:]...)
}

// Pending is the number of buffered samples not yet emitted.
func (r *Reframer) Pending() int { return len(r.buf) }

// Reset forgets buffered samples.
func (r *Reframer) Reset() { r.buf = r.buf[:0]; r.primed = false }
