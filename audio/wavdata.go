package audio

// Decoding a WAV file's data chunk a block at a time: known in size, or
// streamed to the input's end.

import (
	"encoding/binary"
	"io"
	"math"
)

// dataReader decodes the data chunk a block at a time.
type dataReader struct {
	d          *wavDecoder
	f          *wavFmt
	size, read int64 // size -1: streamed, to the input's end
	// limit bounds a streamed chunk's bytes, and tooLong says why once
	// it is passed: a WAV declares at most 4 GiB, and a stream read
	// without end would take memory without end.
	limit   int64
	tooLong func() error
	ended   bool // a streamed chunk's end was read
	buf     []byte
	samples []float32
}

func newDataReader(d *wavDecoder, f *wavFmt, size int64) *dataReader {
	block := int64(wavBlockBytes - wavBlockBytes%f.blockAlign)
	if size >= 0 {
		block = min(block, size)
	}
	return &dataReader{d: d, f: f, size: size, buf: make([]byte, block), samples: make([]float32, 0, int(block)/f.sampleSize),
		limit: math.MaxUint32,
		tooLong: func() error {
			return d.fail(ErrMalformedWAV, "streamed data goes on past the 4 GiB a WAV file holds")
		}}
}

// next returns the next block of samples, valid until the next call, or
// io.EOF after the last.
func (r *dataReader) next() ([]float32, error) {
	if r.size < 0 {
		return r.nextStreamed()
	}
	if r.read >= r.size {
		return nil, io.EOF
	}
	want := min(int64(len(r.buf)), r.size-r.read)
	k, err := r.d.readFull(r.buf[:want])
	r.read += int64(k)
	if err != nil {
		// Partial audio is never returned: a cut-off recording would
		// silently skew anything measured on it.
		if isEOF(err) {
			return nil, r.d.fail(ErrMalformedWAV, "truncated data chunk: header says %d bytes, file has %d", r.size, r.read)
		}
		return nil, r.d.ioFail(err, "reading data chunk")
	}
	r.samples = decodeSamples(r.samples[:0], r.buf[:k], r.f.kind)
	return r.samples, nil
}

// nextStreamed is next for a data chunk read to the input's end: a
// frame cut short there is the writer stopped mid-write, and is dropped.
func (r *dataReader) nextStreamed() ([]float32, error) {
	if r.ended {
		return nil, io.EOF
	}
	k, err := r.d.readFull(r.buf)
	switch {
	case isEOF(err):
		r.ended = true
		k -= k % r.f.blockAlign
	case err != nil:
		return nil, r.d.ioFail(err, "reading data chunk")
	}
	if r.read += int64(k); r.read > r.limit {
		return nil, r.tooLong()
	}
	if k == 0 {
		if r.read == 0 {
			return nil, r.d.fail(ErrMalformedWAV, "zero-length audio (the stream ended after its header)")
		}
		return nil, io.EOF
	}
	r.samples = decodeSamples(r.samples[:0], r.buf[:k], r.f.kind)
	return r.samples, nil
}

// decodeSamples appends the samples in b (a whole number of samples of
// kind) to out, scaled to [-1, 1].
func decodeSamples(out []float32, b []byte, kind sampleKind) []float32 {
	le := binary.LittleEndian
	switch kind {
	case kindPCM16:
		for i := 0; i+2 <= len(b); i += 2 {
			out = append(out, float32(int16(le.Uint16(b[i:])))/(1<<15))
		}
	case kindPCM24:
		for i := 0; i+3 <= len(b); i += 3 {
			v := int32(uint32(b[i])<<8|uint32(b[i+1])<<16|uint32(b[i+2])<<24) >> 8
			out = append(out, float32(v)/(1<<23))
		}
	case kindPCM32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, float32(float64(int32(le.Uint32(b[i:])))/(1<<31)))
		}
	case kindFloat32:
		for i := 0; i+4 <= len(b); i += 4 {
			out = append(out, clampUnit(math.Float32frombits(le.Uint32(b[i:]))))
		}
	case kindFloat64:
		for i := 0; i+8 <= len(b); i += 8 {
			out = append(out, clampUnit(float32(math.Float64frombits(le.Uint64(b[i:])))))
		}
	}
	return out
}

// clampUnit bounds float samples: float WAVs may legally exceed full scale,
// but every consumer assumes [-1, 1], and a single NaN would poison every
// filter state it passes through for the rest of the stream.
func clampUnit(v float32) float32 {
	switch {
	case v != v:
		return 0
	case v > 1:
		return 1
	case v < -1:
		return -1
	}
	return v
}
