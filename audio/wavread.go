package audio

// Reading WAV files: header parsing and the input limits; the data chunk
// is decoded in wavdata.go, and converted to 16 kHz mono as the file is
// read in wavstream.go.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrMalformedWAV is matched (errors.Is) by errors for input that is not a
// well-formed WAV file: wrong magic, inconsistent header, truncation.
var ErrMalformedWAV = errors.New("malformed WAV file")

// ErrUnsupportedWAV is matched (errors.Is) by errors for well-formed WAV
// files in an encoding this package does not decode (8-bit, ADPCM, A-law…)
// and for audio files of another format (MP3, Ogg, FLAC, MP4), so callers
// can tell "convert this file" apart from "this file is broken".
var ErrUnsupportedWAV = errors.New("unsupported WAV format")

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
	// declares (present: checked against the input's size when known;
	// -1: a stream of unknown length), before any sample; an error stops
	// decoding.
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
	// A hostile header can claim 4 GiB, and a stream's says nothing:
	// unchecked, grow only as bytes arrive.
	n := int64(wavUnknownSizePrealloc)
	if frames >= 0 && present {
		n = frames * int64(f.Channels)
	} else if frames >= 0 {
		n = min(n, frames*int64(f.Channels))
	}
	c.samples = make([]float32, 0, n)
	return nil
}

func (c *collected) write(block []float32) { c.samples = append(c.samples, block...) }

func (c *collected) finish() error { return nil }

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
	f, dataSize, err := d.readHeader()
	if err != nil {
		return err
	}
	return d.readData(f, dataSize, to)
}

// readHeader reads up to the start of the audio: the format and the data
// chunk's size, checked against what the input holds where that is known.
func (d *wavDecoder) readHeader() (*wavFmt, int64, error) {
	if err := d.readRIFF(); err != nil {
		return nil, 0, err
	}
	var format *wavFmt
	for {
		var ch [8]byte
		if _, err := d.readFull(ch[:]); err != nil {
			if !isEOF(err) {
				return nil, 0, d.ioFail(err, "reading chunk header")
			}
			if format == nil {
				return nil, 0, d.fail(ErrMalformedWAV, "no fmt or data chunk")
			}
			return nil, 0, d.fail(ErrMalformedWAV, "no data chunk")
		}
		id := string(ch[0:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:8]))
		if !chunkID(ch[0:4]) {
			return nil, 0, d.fail(ErrMalformedWAV, "damaged: the chunk header at byte %d names no chunk (% x)", d.off-8, ch[0:4])
		}
		switch id {
		case "fmt ":
			if format != nil {
				return nil, 0, d.fail(ErrMalformedWAV, "duplicate fmt chunk")
			}
			f, err := d.readFmt(size)
			if err != nil {
				return nil, 0, err
			}
			format = f
		case "data":
			if format == nil {
				return nil, 0, d.fail(ErrMalformedWAV, "data chunk before fmt chunk")
			}
			// Anything after the data chunk (LIST, id3, cue) is metadata
			// we have no use for, so it is not read at all.
			size = d.streamed(format, size)
			if err := d.checkData(format, size); err != nil {
				return nil, 0, err
			}
			return format, size, nil
		default:
			if err := d.skipChunk(id, size); err != nil {
				return nil, 0, err
			}
		}
	}
}

// readRIFF reads the RIFF header, which must be a WAVE file's.
func (d *wavDecoder) readRIFF() error {
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
		if name := otherFormat(hdr); name != "" {
			return d.fail(ErrUnsupportedWAV, "not a WAV file but %s; convert it, e.g. sox IN OUT.wav or ffmpeg -i IN -ar 16000 -ac 1 OUT.wav", name)
		}
		return d.fail(ErrMalformedWAV, "not a WAV file (missing RIFF header)")
	}
	if string(hdr[8:12]) != "WAVE" {
		return d.fail(ErrMalformedWAV, "not a WAV file (RIFF type %q, want \"WAVE\")", hdr[8:12])
	}
	// The RIFF size field is ignored: writers get it wrong often enough
	// (streamed files, >4 GiB dumps) that the chunk sizes are more
	// trustworthy, and those are checked against what is really there.
	return nil
}

// skipChunk skips the chunk id of size bytes, and its pad.
func (d *wavDecoder) skipChunk(id string, size int64) error {
	if k, err := d.skip(size); err != nil {
		if isEOF(err) {
			return d.fail(ErrMalformedWAV, "truncated %q chunk: header says %d bytes, file has %d", id, size, k)
		}
		return d.ioFail(err, "skipping %q chunk", id)
	}
	if size&1 == 1 {
		if err := d.skipPad(); err != nil {
			return d.ioFail(err, "skipping %q chunk", id)
		}
	}
	return nil
}

// skipPad skips the byte that word-aligns what follows an odd-sized chunk
// (RIFF's pad, not counted in the chunk's size), unless the writer left it
// out, as some do: then the next chunk's name starts where the pad would
// be. A missing pad at EOF just means there is no data chunk, which the
// next header's read reports.
func (d *wavDecoder) skipPad() error {
	var b [5]byte
	n, err := d.readFull(b[:])
	if err != nil && !isEOF(err) {
		return err
	}
	if n == len(b) && !chunkID(b[1:5]) && chunkID(b[0:4]) {
		d.unread(b[:])
		return nil
	}
	if n > 1 {
		d.unread(b[1:n])
	}
	return nil
}

// unread puts b back in front of what is still to be read.
func (d *wavDecoder) unread(b []byte) {
	d.r = io.MultiReader(bytes.NewReader(bytes.Clone(b)), d.r)
	d.off -= int64(len(b))
}

// chunkID tells whether id can name a RIFF chunk: four printable ASCII
// characters (a space pads a short name, as in "fmt ").
func chunkID(id []byte) bool {
	for _, c := range id {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

// otherFormat names the audio format hdr, a file's first bytes, is the
// start of, "" if none known: the formats people have recordings in, which
// a converter makes a WAV file of.
func otherFormat(hdr [12]byte) string {
	switch {
	case string(hdr[:3]) == "ID3",
		// An MPEG audio frame's sync (11 bits set) and a layer other than
		// the reserved 00, which AAC's ADTS header has in its place.
		hdr[0] == 0xFF && hdr[1]&0xE0 == 0xE0 && hdr[1]&0x06 != 0:
		return "MP3 audio"
	case string(hdr[:4]) == "OggS":
		return "Ogg audio (Vorbis or Opus)"
	case string(hdr[:4]) == "fLaC":
		return "FLAC audio"
	case string(hdr[4:8]) == "ftyp":
		return "MP4 audio (M4A)"
	}
	return ""
}

func (d *wavDecoder) readFmt(size int64) (*wavFmt, error) {
	b, err := d.readFmtChunk(size)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	tag := int(le.Uint16(b[0:2]))
	channels := int(le.Uint16(b[2:4]))
	rate := int64(le.Uint32(b[4:8]))
	blockAlign := int(le.Uint16(b[12:14]))
	bits := int(le.Uint16(b[14:16]))

	if tag == wavTagExtensible {
		if tag, err = d.extensibleTag(b, size); err != nil {
			return nil, err
		}
	}
	if channels < 1 || channels > formatMaxChannels {
		return nil, d.fail(ErrMalformedWAV, "invalid channel count %d", channels)
	}
	if rate < 1 || rate > formatMaxRate {
		return nil, d.fail(ErrMalformedWAV, "invalid sample rate %d", rate)
	}
	kind, err := d.kindOf(tag, bits)
	if err != nil {
		return nil, err
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

// readFmtChunk reads the fmt chunk of size bytes, and its pad. Only the
// first 40 bytes (the extensible layout) mean anything to us; a larger
// size is skipped rather than allocated.
func (d *wavDecoder) readFmtChunk(size int64) ([40]byte, error) {
	var b [40]byte
	if size < 16 {
		return b, d.fail(ErrMalformedWAV, "fmt chunk too short (%d bytes, need at least 16)", size)
	}
	n := min(size, int64(len(b)))
	if k, err := d.readFull(b[:n]); err != nil {
		if isEOF(err) {
			return b, d.fail(ErrMalformedWAV, "truncated fmt chunk: header says %d bytes, file has %d", size, k)
		}
		return b, d.ioFail(err, "reading fmt chunk")
	}
	if k, err := d.skip(size - n); err != nil {
		if isEOF(err) {
			return b, d.fail(ErrMalformedWAV, "truncated fmt chunk: header says %d bytes, file has %d", size, n+k)
		}
		return b, d.ioFail(err, "reading fmt chunk")
	}
	if size&1 == 1 {
		if err := d.skipPad(); err != nil {
			return b, d.ioFail(err, "reading fmt chunk")
		}
	}
	return b, nil
}

// extensibleTag is the format tag an extensible fmt chunk b, of size
// bytes, holds in its sub-format GUID.
func (d *wavDecoder) extensibleTag(b [40]byte, size int64) (int, error) {
	if size < 40 {
		return 0, d.fail(ErrMalformedWAV, "extensible fmt chunk too short (%d bytes, need 40)", size)
	}
	if cb := binary.LittleEndian.Uint16(b[16:18]); cb < 22 {
		return 0, d.fail(ErrMalformedWAV, "extensible fmt chunk extension too short (%d bytes, need 22)", cb)
	}
	guid := b[24:40]
	if !bytes.Equal(guid[2:], wavGUIDTail[:]) {
		return 0, d.fail(ErrUnsupportedWAV, "unsupported format: extensible sub-format %X", guid)
	}
	// Samples with fewer valid bits are left-justified in their
	// container, so decoding by container size is exact.
	return int(binary.LittleEndian.Uint16(guid[0:2])), nil
}

// kindOf is how samples of format tag and bits are decoded, or an
// ErrUnsupportedWAV that says what to convert to.
func (d *wavDecoder) kindOf(tag, bits int) (sampleKind, error) {
	switch tag {
	case wavTagPCM:
		switch bits {
		case 16:
			return kindPCM16, nil
		case 24:
			return kindPCM24, nil
		case 32:
			return kindPCM32, nil
		}
		return 0, d.fail(ErrUnsupportedWAV, "unsupported format: %d-bit PCM (convert to 16-bit PCM)", bits)
	case wavTagFloat:
		switch bits {
		case 32:
			return kindFloat32, nil
		case 64:
			return kindFloat64, nil
		}
		return 0, d.fail(ErrUnsupportedWAV, "unsupported format: %d-bit float (convert to 16-bit PCM)", bits)
	}
	return 0, d.fail(ErrUnsupportedWAV, "unsupported format: %s (convert to 16-bit PCM)", wavTagName(tag))
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

// streamedSize is the least data chunk size taken for a stream's
// placeholder: a writer that cannot seek back to its header (sox or
// arecord writing to a pipe, ffmpeg) writes the largest size it may
// (0xFFFFFFFF, sox 0x7FFFF000) and never the real one. No recording
// within the input limits is that large.
const streamedSize = 0x7FFFF000

// streamed is the data chunk's size, given as size: where size is a
// stream's placeholder and more than the input holds, the rest of a file
// of known size, in whole frames, or -1 where the input's size is
// unknown (a pipe): the data is read to the input's end.
func (d *wavDecoder) streamed(f *wavFmt, size int64) int64 {
	switch {
	case size < streamedSize:
		return size
	case d.size < 0:
		return -1
	case size > d.size-d.off:
		left := max(d.size-d.off, 0)
		return left - left%int64(f.blockAlign)
	}
	return size
}

func (d *wavDecoder) checkData(f *wavFmt, size int64) error {
	if size < 0 {
		return nil // streamed: its frames are counted as they come
	}
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
	return nil
}

func (d *wavDecoder) readData(f *wavFmt, size int64, to wavTarget) error {
	frames := int64(-1)
	if size >= 0 {
		frames = size / int64(f.blockAlign)
	}
	if err := to.start(d, f.format, frames, d.size >= 0); err != nil {
		return err
	}

	r := newDataReader(d, f, size)
	for {
		samples, err := r.next()
		if err == io.EOF {
			return to.finish()
		}
		if err != nil {
			return err
		}
		to.write(samples)
	}
}
