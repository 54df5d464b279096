package audio

// Writing WAV files: sample encodings, the header, and the one-shot and
// streaming writers.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// Encoding is the sample encoding WriteWAV and WAVWriter produce.
type Encoding int

const (
	// PCM16 is the zero value because it is the encoding every tool reads.
	PCM16   Encoding = iota
	PCM24            // 24-bit signed integer, for headroom in debug captures
	PCM32            // 32-bit signed integer
	Float32          // IEEE float, written verbatim (may exceed full scale)
)

func (e Encoding) String() string {
	switch e {
	case PCM16:
		return "PCM16"
	case PCM24:
		return "PCM24"
	case PCM32:
		return "PCM32"
	case Float32:
		return "Float32"
	}
	return fmt.Sprintf("Encoding(%d)", int(e))
}

// bytesPerSample is 0 for an unknown encoding.
func (e Encoding) bytesPerSample() int {
	switch e {
	case PCM16:
		return 2
	case PCM24:
		return 3
	case PCM32, Float32:
		return 4
	}
	return 0
}

// wavHeader builds everything before the data payload. Sizes are passed in
// so the streaming writer can emit a placeholder and patch it in place: the
// header length does not depend on them.
func wavHeader(f Format, enc Encoding, dataBytes, frames uint32) []byte {
	bps := enc.bytesPerSample()
	bits := 8 * bps
	blockAlign := f.Channels * bps
	tag := wavTagPCM
	if enc == Float32 {
		tag = wavTagFloat
	}
	// Plain tags are what most tools read best; more than two channels
	// need the extensible layout to be unambiguous (a channel mask of 0
	// means "no speaker positions assigned").
	extensible := f.Channels > 2
	fmtSize := 16
	switch {
	case extensible:
		fmtSize = 40
	case tag != wavTagPCM:
		fmtSize = 18 // non-PCM formats carry a cbSize field, here 0
	}
	// Non-PCM formats require a fact chunk holding the frame count.
	fact := tag != wavTagPCM

	le := binary.LittleEndian
	h := make([]byte, 0, 80)
	h = append(h, "RIFF"...)
	h = le.AppendUint32(h, 0) // patched below
	h = append(h, "WAVE"...)
	h = append(h, "fmt "...)
	h = le.AppendUint32(h, uint32(fmtSize))
	if extensible {
		h = le.AppendUint16(h, wavTagExtensible)
	} else {
		h = le.AppendUint16(h, uint16(tag))
	}
	h = le.AppendUint16(h, uint16(f.Channels))
	h = le.AppendUint32(h, uint32(f.Rate))
	h = le.AppendUint32(h, uint32(f.Rate*blockAlign))
	h = le.AppendUint16(h, uint16(blockAlign))
	h = le.AppendUint16(h, uint16(bits))
	switch {
	case extensible:
		h = le.AppendUint16(h, 22)
		h = le.AppendUint16(h, uint16(bits))
		h = le.AppendUint32(h, 0)
		h = le.AppendUint16(h, uint16(tag))
		h = append(h, wavGUIDTail[:]...)
	case fmtSize == 18:
		h = le.AppendUint16(h, 0)
	}
	if fact {
		h = append(h, "fact"...)
		h = le.AppendUint32(h, 4)
		h = le.AppendUint32(h, frames)
	}
	h = append(h, "data"...)
	h = le.AppendUint32(h, dataBytes)
	riff := uint64(len(h)-8) + uint64(dataBytes) + uint64(dataBytes&1)
	le.PutUint32(h[4:8], uint32(min(riff, math.MaxUint32)))
	return h
}

// maxWAVData is the largest data payload whose RIFF size (header, data and
// pad byte) still fits the 32-bit size field.
func maxWAVData(f Format, enc Encoding) int64 {
	hdr := int64(len(wavHeader(f, enc, 0, 0)))
	return math.MaxUint32 - (hdr - 8) - 1
}

// checkWrite validates writer arguments; the error has no prefix so each
// entry point can say which operation failed.
func checkWrite(f Format, enc Encoding) error {
	if f.Validate() != nil {
		return fmt.Errorf("invalid format %v", f)
	}
	if enc.bytesPerSample() == 0 {
		return fmt.Errorf("unknown encoding %v", enc)
	}
	return nil
}

// encodeSamples writes src into dst (len(src)*bytesPerSample bytes).
// Integer encodings clip to [-1, 1] and round to nearest, with full scale
// at 2^(bits-1) so that decoding and re-encoding is lossless.
func encodeSamples(dst []byte, src []float32, enc Encoding) {
	le := binary.LittleEndian
	switch enc {
	case PCM16:
		for i, v := range src {
			le.PutUint16(dst[2*i:], uint16(int16(quantize(v, 1<<15))))
		}
	case PCM24:
		for i, v := range src {
			q := uint32(int32(quantize(v, 1<<23)))
			dst[3*i], dst[3*i+1], dst[3*i+2] = byte(q), byte(q>>8), byte(q>>16)
		}
	case PCM32:
		for i, v := range src {
			le.PutUint32(dst[4*i:], uint32(int32(quantize(v, 1<<31))))
		}
	case Float32:
		// Float output is written verbatim: it can carry over-range
		// values, and clipping them here would hide level problems.
		for i, v := range src {
			le.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	}
}

// quantize maps v in [-1, 1] to [-scale, scale-1], clipping out-of-range
// values and mapping NaN to silence.
func quantize(v float32, scale float64) int64 {
	if v != v {
		return 0
	}
	q := math.Round(float64(v) * scale)
	return int64(max(-scale, min(scale-1, q)))
}

// EncodeWAV writes a complete WAV stream of interleaved samples in format f.
func EncodeWAV(w io.Writer, f Format, samples []float32, enc Encoding) error {
	if err := encodeWAV(w, f, samples, enc); err != nil {
		return fmt.Errorf("audio: encode WAV: %w", err)
	}
	return nil
}

func encodeWAV(w io.Writer, f Format, samples []float32, enc Encoding) error {
	if err := checkWrite(f, enc); err != nil {
		return err
	}
	if len(samples)%f.Channels != 0 {
		return fmt.Errorf("%d samples is not a whole number of %d-channel frames", len(samples), f.Channels)
	}
	bps := enc.bytesPerSample()
	dataBytes := int64(len(samples)) * int64(bps)
	if dataBytes > maxWAVData(f, enc) {
		return fmt.Errorf("%d bytes of audio exceed the 4 GiB WAV limit", dataBytes)
	}
	frames := len(samples) / f.Channels
	if _, err := w.Write(wavHeader(f, enc, uint32(dataBytes), uint32(frames))); err != nil {
		return err
	}
	buf := make([]byte, min(wavBlockBytes, int(dataBytes)+1))
	per := len(buf) / bps
	for len(samples) > 0 {
		n := min(per, len(samples))
		encodeSamples(buf, samples[:n], enc)
		if _, err := w.Write(buf[:n*bps]); err != nil {
			return err
		}
		samples = samples[n:]
	}
	if dataBytes&1 == 1 {
		if _, err := w.Write([]byte{0}); err != nil {
			return err
		}
	}
	return nil
}

// WriteWAV writes samples to path. A regular file (or a new one) is
// replaced atomically: readers see either the old file or the complete new
// one, never a half-written WAV. A symlink is followed and the file it
// names replaced; a device or FIFO is written through (see NewWAVWriter).
// Unlike WAVWriter, WriteWAV knows the length up front, so even a stream
// gets exact sizes in its header.
func WriteWAV(path string, f Format, samples []float32, enc Encoding) error {
	if err := checkWrite(f, enc); err != nil {
		return &wavError{op: "write", name: path, msg: err.Error()}
	}
	if len(samples)%f.Channels != 0 {
		return &wavError{op: "write", name: path, msg: fmt.Sprintf("%d samples is not a whole number of %d-channel frames", len(samples), f.Channels)}
	}
	out, err := createWAV(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out.file, wavBlockBytes)
	err = encodeWAV(bw, f, samples, enc)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		out.abort()
		return out.fail(err)
	}
	return nil
}

// wavOutput is an open destination for a WAV file: either a temporary file
// that commit renames over the target, or (tmp false) the target itself,
// a device or FIFO, written through because renaming over it would destroy
// it (replay --out /dev/null run as root once did).
type wavOutput struct {
	path   string // as the caller named it, for errors
	target string // path with symlinks resolved: what commit replaces
	file   *os.File
	tmp    bool
}

// createWAV opens the destination for a WAV file at path. Opening a FIFO
// blocks until a reader opens the other end, as a shell redirection does.
func createWAV(path string) (*wavOutput, error) {
	out := &wavOutput{path: path}
	target, err := resolveLinks(path)
	if err != nil {
		return nil, out.fail(err)
	}
	out.target = target
	st, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A new file, created as below.
	case err != nil:
		return nil, out.fail(err)
	case st.IsDir():
		return nil, out.fail(errors.New("is a directory"))
	case st.Mode()&fs.ModeSocket != 0:
		return nil, out.fail(errors.New("is a socket"))
	case !st.Mode().IsRegular():
		// Devices and FIFOs: no O_CREATE, so a node removed meanwhile is
		// an error rather than a regular file appearing in /dev.
		out.file, err = os.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			return nil, out.fail(err)
		}
		return out, nil
	}
	// The temporary file goes beside the target, not beside a link to
	// it: rename cannot cross file systems.
	out.file, err = createTemp(filepath.Dir(target), filepath.Base(target))
	if err != nil {
		return nil, out.fail(err)
	}
	out.tmp = true
	return out, nil
}

// maxLinks bounds symlink chains, as the kernel's ELOOP does.
const maxLinks = 40

// resolveLinks returns the file path names once every symlink is followed,
// so that the rename replaces that file and the link stays a link. A link
// may dangle: then the file it names is to be created.
func resolveLinks(path string) (string, error) {
	target, err := filepath.EvalSymlinks(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return target, err
	}
	// Something along the way is missing; follow the links by hand to
	// the first name that does not exist.
	for range maxLinks {
		dest, err := os.Readlink(path)
		if err != nil {
			// Not a link (it does not exist, or its directory does not,
			// which creating the temporary file reports).
			return path, nil
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

// createTemp is os.CreateTemp with os.Create's mode, 0666 less the umask:
// CreateTemp's 0600 would make the finished WAV private, and a chmod
// afterwards would ignore the umask.
func createTemp(dir, base string) (*os.File, error) {
	// Collisions of 64 random bits mean something else is wrong, e.g. a
	// file system that reports every name as existing.
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name in %s: %w", dir, fs.ErrExist)
}

// fail names the caller's path. The underlying *PathError or *LinkError
// would name the temporary file, which means nothing to the user and is
// gone by the time the error is read.
func (o *wavOutput) fail(err error) error {
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	switch {
	case errors.As(err, &pathErr):
		err = pathErr.Err
	case errors.As(err, &linkErr):
		err = linkErr.Err
	}
	return fmt.Errorf("audio: write %s: %w", o.path, err)
}

// commit closes the file and, for a temporary file, renames it over the
// target. The caller flushes its buffers first.
func (o *wavOutput) commit() error {
	if !o.tmp {
		// Devices and FIFOs have nothing to sync (a FIFO even refuses).
		return o.file.Close()
	}
	// Sync before rename so a crash cannot leave a renamed but empty file.
	if err := o.file.Sync(); err != nil {
		return err
	}
	if err := o.file.Close(); err != nil {
		return err
	}
	return os.Rename(o.file.Name(), o.target)
}

// abort closes the file and removes it if it is the temporary one; errors
// are moot because the caller is already returning a more useful one.
func (o *wavOutput) abort() {
	_ = o.file.Close()
	if o.tmp {
		_ = os.Remove(o.file.Name())
	}
}

// WAVWriter streams samples to a WAV file whose length is not known up
// front (e.g. replay writing playback output as it happens). Samples pass
// through a fixed buffer to the file, so memory does not grow with the
// length. For a regular file the audio goes to a temporary file beside it
// that Close finalises and renames into place, so path never holds a WAV
// with a wrong header. A device or FIFO is written through instead, with
// both header sizes 0xFFFFFFFF ("unknown length", as sox and ffmpeg write
// to pipes) since they cannot be patched.
// A WAVWriter is not safe for concurrent use.
type WAVWriter struct {
	out     *wavOutput
	format  Format
	enc     Encoding
	bw      *bufio.Writer
	scratch []byte
	data    int64 // payload bytes written
	maxData int64
	err     error // sticky: after a failed write the file is unusable
	closed  bool
}

// NewWAVWriter starts a WAV file at path in format f. Opening a FIFO blocks
// until a reader opens the other end, as a shell redirection does.
func NewWAVWriter(path string, f Format, enc Encoding) (*WAVWriter, error) {
	if err := checkWrite(f, enc); err != nil {
		return nil, &wavError{op: "write", name: path, msg: err.Error()}
	}
	out, err := createWAV(path)
	if err != nil {
		return nil, err
	}
	w := &WAVWriter{
		out:     out,
		format:  f,
		enc:     enc,
		bw:      bufio.NewWriterSize(out.file, wavBlockBytes),
		scratch: make([]byte, wavBlockBytes),
		maxData: maxWAVData(f, enc),
	}
	// A temporary file gets placeholder sizes that Close rewrites (the
	// header has the same length whatever the sizes are). A written-
	// through target is treated as unseekable even if it could seek (a
	// block device): /dev/null and ttys accept seeks that mean nothing,
	// so only never seeking is right for all of them.
	size := uint32(math.MaxUint32)
	if out.tmp {
		size = 0
	}
	if _, err := w.bw.Write(wavHeader(f, enc, size, size)); err != nil {
		out.abort()
		return nil, out.fail(err)
	}
	return w, nil
}

// Format is the format the writer was created with.
func (w *WAVWriter) Format() Format { return w.format }

// Frames is the number of sample frames written so far.
func (w *WAVWriter) Frames() int64 {
	return w.data / int64(w.enc.bytesPerSample()*w.format.Channels)
}

// Write appends interleaved samples; len(samples) must be a whole number of
// frames. A rejected call (partial frame, size limit) writes nothing and
// leaves the writer usable; an I/O error makes every later call fail.
func (w *WAVWriter) Write(samples []float32) error {
	switch {
	case w.closed:
		return &wavError{op: "write", name: w.out.path, msg: "write after Close"}
	case w.err != nil:
		return w.err
	case len(samples)%w.format.Channels != 0:
		return &wavError{op: "write", name: w.out.path, msg: fmt.Sprintf("%d samples is not a whole number of %d-channel frames", len(samples), w.format.Channels)}
	}
	bps := w.enc.bytesPerSample()
	if n := int64(len(samples)) * int64(bps); w.data+n > w.maxData {
		return &wavError{op: "write", name: w.out.path, msg: "audio would exceed the 4 GiB WAV limit"}
	}
	per := len(w.scratch) / bps
	for len(samples) > 0 {
		n := min(per, len(samples))
		encodeSamples(w.scratch, samples[:n], w.enc)
		if _, err := w.bw.Write(w.scratch[:n*bps]); err != nil {
			w.err = w.out.fail(err)
			return w.err
		}
		w.data += int64(n * bps)
		samples = samples[n:]
	}
	return nil
}

// Close patches the header sizes, syncs and renames the file into place;
// a written-through target is just flushed and closed. If a write failed
// earlier, Close removes the temporary file and returns that error; path
// is left untouched. Closing twice is a no-op.
func (w *WAVWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err != nil {
		w.out.abort()
		return w.err
	}
	if err := w.finish(); err != nil {
		w.out.abort()
		return w.out.fail(err)
	}
	return nil
}

func (w *WAVWriter) finish() error {
	// With an unknown length the data chunk runs to the end of the
	// stream, where a pad byte would be read as part of a sample.
	if w.out.tmp && w.data&1 == 1 {
		if err := w.bw.WriteByte(0); err != nil {
			return err
		}
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.out.tmp {
		header := wavHeader(w.format, w.enc, uint32(w.data), uint32(w.Frames()))
		if _, err := w.out.file.WriteAt(header, 0); err != nil {
			return err
		}
	}
	return w.out.commit()
}
