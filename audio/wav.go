package audio

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// WAV format tags (the wFormatTag field, and the first two bytes of an
// extensible sub-format GUID).
const (
	wavTagPCM        = 0x0001
	wavTagFloat      = 0x0003
	wavTagExtensible = 0xFFFE
)

// wavGUIDTail is bytes 2..15 of every KSDATAFORMAT_SUBTYPE_* GUID that maps
// onto a plain format tag (xxxx0000-0000-0010-8000-00AA00389B71).
var wavGUIDTail = [14]byte{0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71}

// Limits for the fields we accept. They mirror Format.Validate so a file
// that decodes is a format every stage can process.
const (
	formatMaxChannels = 32
	formatMaxRate     = 768000
)

const (
	// wavBlockBytes bounds the scratch buffers used to convert between
	// bytes and samples, so neither direction ever needs a second copy of
	// the whole file in memory.
	wavBlockBytes = 64 << 10
	// wavUnknownSizePrealloc caps the initial sample allocation when the
	// input size is unknown: a hostile header can claim 4 GiB of data, so
	// beyond this the slice only grows as bytes actually arrive.
	wavUnknownSizePrealloc = 1 << 18
)

// ErrMalformedWAV is matched (errors.Is) by errors for input that is not a
// well-formed WAV file: wrong magic, inconsistent header, truncation.
var ErrMalformedWAV = errors.New("malformed WAV file")

// ErrUnsupportedWAV is matched (errors.Is) by errors for well-formed WAV
// files in an encoding this package does not decode (8-bit, ADPCM, A-law…),
// so callers can tell "convert this file" apart from "this file is broken".
var ErrUnsupportedWAV = errors.New("unsupported WAV format")

// wavError keeps the message readable ("audio: read x.wav: no data chunk")
// while still letting callers classify it with errors.Is.
type wavError struct {
	op, name, msg string
	kind          error // ErrMalformedWAV, ErrUnsupportedWAV or nil
	err           error // underlying I/O error, if any
}

func (e *wavError) Error() string {
	s := "audio: " + e.op + " " + e.name + ": " + e.msg
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	return s
}

func (e *wavError) Unwrap() []error {
	var errs []error
	if e.kind != nil {
		errs = append(errs, e.kind)
	}
	if e.err != nil {
		errs = append(errs, e.err)
	}
	return errs
}

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

// sampleKind identifies a decodable sample layout.
type sampleKind int

const (
	kindPCM16 sampleKind = iota + 1
	kindPCM24
	kindPCM32
	kindFloat32
	kindFloat64
)

// wavFmt is the subset of the fmt chunk decoding needs.
type wavFmt struct {
	format     Format
	kind       sampleKind
	blockAlign int
	sampleSize int
}

// ReadWAV decodes the WAV file at path into interleaved float32 samples in
// [-1, 1]. The file's own rate and channel count are returned unchanged;
// use Convert to bring it to the processing format.
func ReadWAV(path string) (Format, []float32, error) {
	var c collected
	if err := readWAVFile(path, &c); err != nil {
		return Format{}, nil, err
	}
	return c.format, c.samples, nil
}

// Recorded speech given to the assistant (replay, the vad, turn and asr
// commands, VoiceBench samples) must lie within these limits, checked from
// the header before any audio is decoded: below 8 kHz no speech band is
// left to hear, above 384 kHz no recorder writes speech, and an hour in
// the processing format is 230 MB of samples.
const (
	MinInputRate     = 8000
	MaxInputRate     = 384000
	MaxInputDuration = time.Hour
)

// ErrInputLimits is matched (errors.Is) by errors for recordings outside
// the input limits.
var ErrInputLimits = errors.New("recording outside the input limits")

// ReadWAVMono16k reads a WAV file of any format in the processing format
// (16 kHz mono), as every command that takes recorded audio needs it. The
// recording must lie within the input limits; it is converted block by
// block, so memory holds little more than the 16 kHz result.
func ReadWAVMono16k(path string) ([]float32, error) {
	var m mono16k
	if err := readWAVFile(path, &m); err != nil {
		return nil, err
	}
	return m.samples, nil
}

// DecodeWAVMono16k is ReadWAVMono16k for a stream; name labels errors.
func DecodeWAVMono16k(r io.Reader, name string) ([]float32, error) {
	var m mono16k
	if err := decodeWAVTo(r, name, readerLen(r), &m); err != nil {
		return nil, err
	}
	return m.samples, nil
}

// DecodeWAV decodes a WAV stream. name only labels errors (use the file
// name or another description of the source). If r reports its remaining
// length (bytes.Reader, strings.Reader, bytes.Buffer), a data chunk that
// claims more bytes than exist is rejected before anything is allocated;
// otherwise memory grows only as data actually arrives.
func DecodeWAV(r io.Reader, name string) (Format, []float32, error) {
	var c collected
	if err := decodeWAVTo(r, name, readerLen(r), &c); err != nil {
		return Format{}, nil, err
	}
	return c.format, c.samples, nil
}

func readerLen(r io.Reader) int64 {
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return -1
}

func readWAVFile(path string, to wavTarget) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audio: read WAV: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return decodeWAVTo(f, path, size, to)
}

// wavTarget takes a file's audio as it is decoded.
type wavTarget interface {
	// start gets the format and the sample frames the data chunk
	// declares (present: checked against the input's size when known),
	// before any sample; an error stops decoding.
	start(d *wavDecoder, f Format, frames int64, present bool) error
	// write takes the next block of samples, which it must not keep.
	write(block []float32)
	// finish ends the audio; it is not called after an error.
	finish() error
}

// collected keeps the samples as they are.
type collected struct {
	format  Format
	samples []float32
}

func (c *collected) start(_ *wavDecoder, f Format, frames int64, present bool) error {
	c.format = f
	n := frames * int64(f.Channels)
	if !present {
		// A hostile header can claim 4 GiB: grow only as bytes arrive.
		n = min(n, wavUnknownSizePrealloc)
	}
	c.samples = make([]float32, 0, n)
	return nil
}

func (c *collected) write(block []float32) { c.samples = append(c.samples, block...) }

func (c *collected) finish() error { return nil }

// mono16k converts to the processing format as it goes.
type mono16k struct {
	conv    *Converter
	samples []float32
}

func (m *mono16k) start(d *wavDecoder, f Format, frames int64, _ bool) error {
	if f.Rate < MinInputRate || f.Rate > MaxInputRate {
		return d.fail(ErrInputLimits, "sample rate %d Hz is outside what speech is recorded at (%d to %d Hz); resample it, e.g. sox IN.wav -r 16000 OUT.wav",
			f.Rate, MinInputRate, MaxInputRate)
	}
	if length := f.Duration(frames); length > MaxInputDuration {
		return d.fail(ErrInputLimits, "%v of audio is more than the %v taken at once; split it, e.g. sox IN.wav OUT.wav trim 0 %d : newfile : restart",
			length.Round(time.Second), MaxInputDuration, int(MaxInputDuration.Seconds()))
	}
	conv, err := NewConverter(f, Mono16k)
	if err != nil {
		return d.fail(nil, "%v", err)
	}
	m.conv = conv
	m.samples = make([]float32, 0, Mono16k.Samples(f.Duration(frames))+1)
	return nil
}

func (m *mono16k) write(block []float32) { m.samples = append(m.samples, m.conv.Process(block)...) }

func (m *mono16k) finish() error {
	m.samples = append(m.samples, m.conv.Flush()...)
	return nil
}

// wavDecoder tracks the read offset so truncation errors can say how much
// of a chunk was actually present.
type wavDecoder struct {
	r    io.Reader
	name string
	off  int64 // bytes consumed so far
	size int64 // total input length, or -1 if unknown
}

func (d *wavDecoder) fail(kind error, format string, args ...any) error {
	return &wavError{op: "read", name: d.name, msg: fmt.Sprintf(format, args...), kind: kind}
}

func (d *wavDecoder) ioFail(err error, format string, args ...any) error {
	return &wavError{op: "read", name: d.name, msg: fmt.Sprintf(format, args...), err: err}
}

func (d *wavDecoder) readFull(p []byte) (int, error) {
	n, err := io.ReadFull(d.r, p)
	d.off += int64(n)
	return n, err
}

// skip discards n bytes and reports how many were actually there.
func (d *wavDecoder) skip(n int64) (int64, error) {
	k, err := io.CopyN(io.Discard, d.r, n)
	d.off += k
	return k, err
}

func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

func decodeWAVTo(r io.Reader, name string, size int64, to wavTarget) error {
	d := &wavDecoder{r: r, name: name, size: size}

	var hdr [12]byte
	if n, err := d.readFull(hdr[:]); err != nil {
		switch {
		case n == 0 && err == io.EOF:
			return d.fail(ErrMalformedWAV, "empty file")
		case isEOF(err):
			return d.fail(ErrMalformedWAV, "not a WAV file (only %d bytes)", n)
		default:
			return d.ioFail(err, "reading RIFF header")
		}
	}
	switch string(hdr[0:4]) {
	case "RIFF":
	case "RF64", "RIFX":
		return d.fail(ErrUnsupportedWAV, "unsupported container %q (only little-endian RIFF WAV)", hdr[0:4])
	default:
		return d.fail(ErrMalformedWAV, "not a WAV file (missing RIFF header)")
	}
	if string(hdr[8:12]) != "WAVE" {
		return d.fail(ErrMalformedWAV, "not a WAV file (RIFF type %q, want \"WAVE\")", hdr[8:12])
	}
	// The RIFF size field is ignored: writers get it wrong often enough
	// (streamed files, >4 GiB dumps) that the chunk sizes are more
	// trustworthy, and those are checked against what is really there.

	var format *wavFmt
	for {
		var ch [8]byte
		if _, err := d.readFull(ch[:]); err != nil {
			if !isEOF(err) {
				return d.ioFail(err, "reading chunk header")
			}
			if format == nil {
				return d.fail(ErrMalformedWAV, "no fmt or data chunk")
			}
			return d.fail(ErrMalformedWAV, "no data chunk")
		}
		id := string(ch[0:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if format != nil {
				return d.fail(ErrMalformedWAV, "duplicate fmt chunk")
			}
			f, err := d.readFmt(size)
			if err != nil {
				return err
			}
			format = f
		case "data":
			if format == nil {
				return d.fail(ErrMalformedWAV, "data chunk before fmt chunk")
			}
			// Anything after the data chunk (LIST, id3, cue) is metadata
			// we have no use for, so it is not read at all.
			return d.readData(format, size, to)
		default:
			if k, err := d.skip(size); err != nil {
				if isEOF(err) {
					return d.fail(ErrMalformedWAV, "truncated %q chunk: header says %d bytes, file has %d", id, size, k)
				}
				return d.ioFail(err, "skipping %q chunk", id)
			}
			// RIFF chunks are word aligned: an odd-sized chunk is followed
			// by a pad byte that is not counted in its size. A missing pad
			// at EOF just means there is no data chunk, reported above.
			if size&1 == 1 {
				if _, err := d.skip(1); err != nil && !isEOF(err) {
					return d.ioFail(err, "skipping %q chunk", id)
				}
			}
		}
	}
}

func (d *wavDecoder) readFmt(size int64) (*wavFmt, error) {
	if size < 16 {
		return nil, d.fail(ErrMalformedWAV, "fmt chunk too short (%d bytes, need at least 16)", size)
	}
	// Only the first 40 bytes (the extensible layout) mean anything to us;
	// a larger size is skipped rather than allocated.
	var b [40]byte
	n := min(size, int64(len(b)))
	if k, err := d.readFull(b[:n]); err != nil {
		if isEOF(err) {
			return nil, d.fail(ErrMalformedWAV, "truncated fmt chunk: header says %d bytes, file has %d", size, k)
		}
		return nil, d.ioFail(err, "reading fmt chunk")
	}
	if k, err := d.skip(size - n); err != nil {
		if isEOF(err) {
			return nil, d.fail(ErrMalformedWAV, "truncated fmt chunk: header says %d bytes, file has %d", size, n+k)
		}
		return nil, d.ioFail(err, "reading fmt chunk")
	}
	// A missing pad byte at EOF cannot hide a data chunk; the next header
	// read reports what is really wrong.
	if size&1 == 1 {
		if _, err := d.skip(1); err != nil && !isEOF(err) {
			return nil, d.ioFail(err, "reading fmt chunk")
		}
	}

	le := binary.LittleEndian
	tag := int(le.Uint16(b[0:2]))
	channels := int(le.Uint16(b[2:4]))
	rate := int64(le.Uint32(b[4:8]))
	blockAlign := int(le.Uint16(b[12:14]))
	bits := int(le.Uint16(b[14:16]))

	if tag == wavTagExtensible {
		if size < 40 {
			return nil, d.fail(ErrMalformedWAV, "extensible fmt chunk too short (%d bytes, need 40)", size)
		}
		if cb := le.Uint16(b[16:18]); cb < 22 {
			return nil, d.fail(ErrMalformedWAV, "extensible fmt chunk extension too short (%d bytes, need 22)", cb)
		}
		guid := b[24:40]
		if !bytes.Equal(guid[2:], wavGUIDTail[:]) {
			return nil, d.fail(ErrUnsupportedWAV, "unsupported format: extensible sub-format %X", guid)
		}
		// Samples with fewer valid bits are left-justified in their
		// container, so decoding by container size is exact.
		tag = int(le.Uint16(guid[0:2]))
	}

	if channels < 1 || channels > formatMaxChannels {
		return nil, d.fail(ErrMalformedWAV, "invalid channel count %d", channels)
	}
	if rate < 1 || rate > formatMaxRate {
		return nil, d.fail(ErrMalformedWAV, "invalid sample rate %d", rate)
	}

	var kind sampleKind
	switch tag {
	case wavTagPCM:
		switch bits {
		case 16:
			kind = kindPCM16
		case 24:
			kind = kindPCM24
		case 32:
			kind = kindPCM32
		default:
			return nil, d.fail(ErrUnsupportedWAV, "unsupported format: %d-bit PCM (convert to 16-bit PCM)", bits)
		}
	case wavTagFloat:
		switch bits {
		case 32:
			kind = kindFloat32
		case 64:
			kind = kindFloat64
		default:
			return nil, d.fail(ErrUnsupportedWAV, "unsupported format: %d-bit float (convert to 16-bit PCM)", bits)
		}
	default:
		return nil, d.fail(ErrUnsupportedWAV, "unsupported format: %s (convert to 16-bit PCM)", wavTagName(tag))
	}

	sampleSize := bits / 8
	if want := channels * sampleSize; blockAlign != want {
		return nil, d.fail(ErrMalformedWAV, "block align mismatch: header says %d, %d channels of %d-bit samples need %d", blockAlign, channels, bits, want)
	}
	return &wavFmt{
		format:     Format{Rate: int(rate), Channels: channels},
		kind:       kind,
		blockAlign: blockAlign,
		sampleSize: sampleSize,
	}, nil
}

// wavTagName names the compressed formats people actually run into, so the
// error tells them what they have.
func wavTagName(tag int) string {
	switch tag {
	case 0x0002:
		return "Microsoft ADPCM"
	case 0x0006:
		return "A-law"
	case 0x0007:
		return "mu-law"
	case 0x0011:
		return "IMA ADPCM"
	case 0x0031:
		return "GSM 6.10"
	case 0x0050:
		return "MPEG"
	case 0x0055:
		return "MP3"
	}
	return fmt.Sprintf("format tag 0x%04X", tag)
}

func (d *wavDecoder) readData(f *wavFmt, size int64, to wavTarget) error {
	if size == 0 {
		return d.fail(ErrMalformedWAV, "zero-length audio (empty data chunk)")
	}
	if size%int64(f.blockAlign) != 0 {
		return d.fail(ErrMalformedWAV, "data chunk size %d is not a whole number of %d-byte sample frames", size, f.blockAlign)
	}
	if d.size >= 0 {
		if left := d.size - d.off; size > left {
			return d.fail(ErrMalformedWAV, "truncated data chunk: header says %d bytes, file has %d", size, max(left, 0))
		}
	}
	if err := to.start(d, f.format, size/int64(f.blockAlign), d.size >= 0); err != nil {
		return err
	}

	block := wavBlockBytes - wavBlockBytes%f.blockAlign
	buf := make([]byte, min(int64(block), size))
	samples := make([]float32, 0, len(buf)/f.sampleSize)
	for read := int64(0); read < size; {
		want := min(int64(len(buf)), size-read)
		k, err := d.readFull(buf[:want])
		read += int64(k)
		if err != nil {
			// Partial audio is never returned: a cut-off recording would
			// silently skew anything measured on it.
			if isEOF(err) {
				return d.fail(ErrMalformedWAV, "truncated data chunk: header says %d bytes, file has %d", size, read)
			}
			return d.ioFail(err, "reading data chunk")
		}
		samples = decodeSamples(samples[:0], buf[:k], f.kind)
		to.write(samples)
	}
	return to.finish()
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

// WriteWAV writes samples to path atomically: readers see either the old
// file or the complete new one, never a half-written WAV.
func WriteWAV(path string, f Format, samples []float32, enc Encoding) error {
	if err := checkWrite(f, enc); err != nil {
		return &wavError{op: "write", name: path, msg: err.Error()}
	}
	if len(samples)%f.Channels != 0 {
		return &wavError{op: "write", name: path, msg: fmt.Sprintf("%d samples is not a whole number of %d-channel frames", len(samples), f.Channels)}
	}
	w, err := NewWAVWriter(path, f, enc)
	if err != nil {
		return err
	}
	if err := w.Write(samples); err != nil {
		w.abort()
		return err
	}
	return w.Close()
}

// WAVWriter streams samples to a WAV file whose length is not known up
// front (e.g. replay writing playback output as it happens). The audio goes
// to a temporary file in the same directory that Close finalises and
// renames into place, so path never holds a WAV with a wrong header.
// A WAVWriter is not safe for concurrent use.
type WAVWriter struct {
	path    string
	format  Format
	enc     Encoding
	file    *os.File
	bw      *bufio.Writer
	scratch []byte
	data    int64 // payload bytes written
	maxData int64
	err     error // sticky: after a failed write the file is unusable
	closed  bool
}

// NewWAVWriter starts a WAV file at path in format f.
func NewWAVWriter(path string, f Format, enc Encoding) (*WAVWriter, error) {
	if err := checkWrite(f, enc); err != nil {
		return nil, &wavError{op: "write", name: path, msg: err.Error()}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("audio: write %s: %w", path, err)
	}
	w := &WAVWriter{
		path:    path,
		format:  f,
		enc:     enc,
		file:    tmp,
		bw:      bufio.NewWriterSize(tmp, wavBlockBytes),
		scratch: make([]byte, wavBlockBytes),
		maxData: maxWAVData(f, enc),
	}
	// Placeholder sizes; Close rewrites the header, which has the same
	// length whatever the sizes are.
	if _, err := w.bw.Write(wavHeader(f, enc, 0, 0)); err != nil {
		w.abort()
		return nil, w.ioErr(err)
	}
	return w, nil
}

func (w *WAVWriter) ioErr(err error) error {
	return fmt.Errorf("audio: write %s: %w", w.path, err)
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
		return &wavError{op: "write", name: w.path, msg: "write after Close"}
	case w.err != nil:
		return w.err
	case len(samples)%w.format.Channels != 0:
		return &wavError{op: "write", name: w.path, msg: fmt.Sprintf("%d samples is not a whole number of %d-channel frames", len(samples), w.format.Channels)}
	}
	bps := w.enc.bytesPerSample()
	if n := int64(len(samples)) * int64(bps); w.data+n > w.maxData {
		return &wavError{op: "write", name: w.path, msg: "audio would exceed the 4 GiB WAV limit"}
	}
	per := len(w.scratch) / bps
	for len(samples) > 0 {
		n := min(per, len(samples))
		encodeSamples(w.scratch, samples[:n], w.enc)
		if _, err := w.bw.Write(w.scratch[:n*bps]); err != nil {
			w.err = w.ioErr(err)
			return w.err
		}
		w.data += int64(n * bps)
		samples = samples[n:]
	}
	return nil
}

// Close patches the header sizes, syncs and renames the file into place.
// If a write failed earlier, Close removes the temporary file and returns
// that error; path is left untouched. Closing twice is a no-op.
func (w *WAVWriter) Close() error {
	if w.closed {
		return nil
	}
	if w.err != nil {
		w.abort()
		return w.err
	}
	if err := w.finish(); err != nil {
		w.abort()
		return w.ioErr(err)
	}
	w.closed = true
	return nil
}

func (w *WAVWriter) finish() error {
	if w.data&1 == 1 {
		if err := w.bw.WriteByte(0); err != nil {
			return err
		}
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	frames := w.Frames()
	if _, err := w.file.WriteAt(wavHeader(w.format, w.enc, uint32(w.data), uint32(frames)), 0); err != nil {
		return err
	}
	// CreateTemp makes the file private; a WAV is ordinary user data.
	if err := w.file.Chmod(0o644); err != nil {
		return err
	}
	// Sync before rename so a crash cannot leave a renamed but empty file.
	if err := w.file.Sync(); err != nil {
		return err
	}
	if err := w.file.Close(); err != nil {
		return err
	}
	return os.Rename(w.file.Name(), w.path)
}

// abort discards the temporary file; errors are moot because the caller is
// already returning a more useful one.
func (w *WAVWriter) abort() {
	w.closed = true
	_ = w.file.Close()
	_ = os.Remove(w.file.Name())
}
