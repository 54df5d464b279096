package audio

// What the WAV reader (wavread.go) and writer (wavwrite.go) share: the
// format tags, the block size, and the error type.

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
