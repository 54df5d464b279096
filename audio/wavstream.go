package audio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// WAVStream reads a recording in the processing format (16 kHz mono) as
// it is consumed, so a session of any length needs only a block of it in
// memory. It is a CaptureSource read front to back.
type WAVStream struct {
	ctx     context.Context
	name    string
	data    *dataReader
	conv    *Converter
	length  int64
	known   bool // length is known: from the header, or the stream's end read
	pos     int64
	pending []float32 // converted, not yet read
	flushed bool
	err     error // sticky: a stream that failed once stays failed
	close   func() error
}

// OpenWAVMono16k opens the WAV file at path (any format within the input
// limits) for reading in the processing format. Reading honours ctx
// whatever the file is: a FIFO with no writer, or one that never writes,
// stops waiting when ctx ends, and then every read fails with ctx's error.
func OpenWAVMono16k(ctx context.Context, path string) (*WAVStream, error) {
	f, err := openInput(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("audio: read %s: %w", path, ctx.Err())
		}
		return nil, fmt.Errorf("audio: read WAV: %w", err)
	}
	// Pipes and terminals are in the runtime poller, so a past deadline
	// wakes a read blocked on them; regular files never block for long
	// and are checked between blocks instead.
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	s, err := newWAVStream(ctx, ctxReader{ctx, f}, path, size)
	if err != nil {
		stop()
		f.Close()
		return nil, err
	}
	s.close = func() error {
		stop()
		return f.Close()
	}
	return s, nil
}

func newWAVStream(ctx context.Context, r io.Reader, name string, size int64) (*WAVStream, error) {
	d := &wavDecoder{r: r, name: name, size: size}
	f, dataSize, err := d.readHeader()
	if err != nil {
		return nil, interrupted(ctx, name, err)
	}
	if f.format.Rate < MinInputRate || f.format.Rate > MaxInputRate {
		return nil, d.fail(ErrInputLimits, "sample rate %d Hz is outside what speech is recorded at (%d to %d Hz); resample it, e.g. sox IN.wav -r 16000 OUT.wav",
			f.format.Rate, MinInputRate, MaxInputRate)
	}
	// A stream's length is not in its header: it is taken as the most
	// taken until its end is read.
	frames, known := dataSize/int64(f.blockAlign), dataSize >= 0
	if !known {
		frames = f.format.Samples(MaxInputDuration)
	}
	if length := f.format.Duration(frames); length > MaxInputDuration {
		return nil, d.fail(ErrInputLimits, "%v of audio is more than the %v taken at once; %s",
			overLimit(length), MaxInputDuration, splitIt)
	}
	conv, err := NewConverter(f.format, Mono16k)
	if err != nil {
		return nil, d.fail(nil, "%v", err)
	}
	data := newDataReader(d, f, dataSize)
	data.limit = frames * int64(f.blockAlign)
	data.tooLong = func() error {
		return d.fail(ErrInputLimits, "the streamed audio goes on past the %v taken at once; %s", MaxInputDuration, splitIt)
	}
	return &WAVStream{
		ctx:    ctx,
		name:   name,
		data:   data,
		conv:   conv,
		length: ResampledFrames(frames, int64(f.format.Rate), ProcessingRate),
		known:  known,
		close:  func() error { return nil },
	}, nil
}

// splitIt is the way out of a recording over MaxInputDuration.
var splitIt = fmt.Sprintf("split it, e.g. sox IN.wav OUT.wav trim 0 %d : newfile : restart", int(MaxInputDuration.Seconds()))

// overLimit shows length, over MaxInputDuration, to the second, or
// exactly where that would show the limit itself (3600.001 s is not
// "1h0m0s of audio is more than the 1h0m0s taken").
func overLimit(length time.Duration) time.Duration {
	if rounded := length.Round(time.Second); rounded > MaxInputDuration {
		return rounded
	}
	return length
}

// Len is the recording's length in 16 kHz samples, known from the header;
// a stream's (a WAV written to a pipe, whose header gives no length) is
// the most taken (MaxInputDuration) until its end is read, then its own.
func (s *WAVStream) Len() int64 { return s.length }

// Read fills out with the samples from pos on, which must be where the
// last read ended; past the end it fills silence. Audio cut short of what
// the header declares is an error, never a shorter recording.
func (s *WAVStream) Read(pos int64, out []float32) error {
	if s.err != nil {
		return s.err
	}
	if pos != s.pos {
		return fmt.Errorf("audio: read %s: at sample %d, not %d: the stream is read front to back", s.name, pos, s.pos)
	}
	n := 0
	for n < len(out) && s.pos < s.length {
		if len(s.pending) == 0 {
			if err := s.decode(); err != nil {
				s.err = interrupted(s.ctx, s.name, err)
				return s.err
			}
		}
		k := copy(out[n:min(int64(len(out)), int64(n)+s.length-s.pos)], s.pending)
		s.pending = s.pending[k:]
		n += k
		s.pos += int64(k)
	}
	clear(out[n:])
	return nil
}

// decode converts the next block, or the converter's tail after the last.
func (s *WAVStream) decode() error {
	block, err := s.data.next()
	switch {
	case err == nil:
		s.pending = s.conv.Process(block)
	case err != io.EOF:
		return err
	case !s.flushed:
		s.flushed = true
		s.pending = s.conv.Flush()
		if !s.known {
			s.length, s.known = s.pos+int64(len(s.pending)), true
		}
	default:
		// The length comes from the same formula the resampler ends on,
		// so this is a bug, not bad input; failing beats looping.
		return fmt.Errorf("audio: read %s: converted audio ended at sample %d of %d", s.name, s.pos, s.length)
	}
	return nil
}

// Close releases the file.
func (s *WAVStream) Close() error { return s.close() }

// ReadWAVMono16k reads a whole WAV file of any format in the processing
// format (16 kHz mono), as commands that need all of a recording at once
// take it. It converts block by block, so memory holds little more than
// the result, and honours ctx as OpenWAVMono16k does.
func ReadWAVMono16k(ctx context.Context, path string) ([]float32, error) {
	s, err := OpenWAVMono16k(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return readAll(s)
}

// DecodeWAVMono16k is ReadWAVMono16k for a stream; name labels errors.
func DecodeWAVMono16k(r io.Reader, name string) ([]float32, error) {
	s, err := newWAVStream(context.Background(), r, name, readerLen(r))
	if err != nil {
		return nil, err
	}
	return readAll(s)
}

func readAll(s *WAVStream) ([]float32, error) {
	if s.known {
		pcm := make([]float32, s.Len())
		if err := s.Read(0, pcm); err != nil {
			return nil, err
		}
		return pcm, nil
	}
	// A stream grows what it holds as its audio comes, up to its end.
	var pcm []float32
	block := make([]float32, wavBlockBytes)
	for pos := int64(0); pos < s.Len(); pos += int64(len(block)) {
		if err := s.Read(pos, block); err != nil {
			return nil, err
		}
		pcm = append(pcm, block[:min(int64(len(block)), s.Len()-pos)]...)
	}
	return pcm, nil
}

// ctxReader stops reading once ctx ends, between the blocks of a file
// that never blocks.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// interrupted reports a read that failed because ctx ended as just that,
// not as a damaged file.
func interrupted(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return fmt.Errorf("audio: read %s: %w", name, ctx.Err())
	}
	return err
}
