package audio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --- helpers that build WAV files byte by byte, so malformed ones can be
// described precisely.

var le = binary.LittleEndian

// chunk encodes a RIFF chunk with its true size and pad byte.
func chunk(id string, body []byte) []byte {
	return chunkSized(id, uint32(len(body)), body, true)
}

// chunkSized encodes a chunk whose header claims size, whatever the body.
func chunkSized(id string, size uint32, body []byte, pad bool) []byte {
	b := append([]byte(id), le.AppendUint32(nil, size)...)
	b = append(b, body...)
	if pad && len(body)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

func riff(chunks ...[]byte) []byte {
	var body []byte
	for _, c := range chunks {
		body = append(body, c...)
	}
	b := append([]byte("RIFF"), le.AppendUint32(nil, uint32(4+len(body)))...)
	b = append(b, "WAVE"...)
	return append(b, body...)
}

func fmtChunk(tag, channels, rate, blockAlign, bits int) []byte {
	b := le.AppendUint16(nil, uint16(tag))
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*blockAlign))
	b = le.AppendUint16(b, uint16(blockAlign))
	b = le.AppendUint16(b, uint16(bits))
	return chunk("fmt ", b)
}

func fmtPCM(channels, rate, bits int) []byte {
	return fmtChunk(wavTagPCM, channels, rate, channels*bits/8, bits)
}

func fmtExtensible(channels, rate, bits, validBits int, subTag uint16, tail []byte) []byte {
	b := le.AppendUint16(nil, wavTagExtensible)
	b = le.AppendUint16(b, uint16(channels))
	b = le.AppendUint32(b, uint32(rate))
	b = le.AppendUint32(b, uint32(rate*channels*bits/8))
	b = le.AppendUint16(b, uint16(channels*bits/8))
	b = le.AppendUint16(b, uint16(bits))
	b = le.AppendUint16(b, 22)
	b = le.AppendUint16(b, uint16(validBits))
	b = le.AppendUint32(b, 0x3) // front left | front right
	b = le.AppendUint16(b, subTag)
	return chunk("fmt ", append(b, tail...))
}

func pcm16Bytes(vals ...int16) []byte {
	var b []byte
	for _, v := range vals {
		b = le.AppendUint16(b, uint16(v))
	}
	return b
}

func encode(t testing.TB, f Format, samples []float32, enc Encoding) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, EncodeWAV(&buf, f, samples, enc))
	return buf.Bytes()
}

func randomSamples(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = rng.Float32()*2 - 1
	}
	if n >= 2 {
		s[0], s[1] = -1, 1 // the extremes must survive too (1 clips by one step)
	}
	return s
}

// --- round trips

func TestWAVRoundTrip(t *testing.T) {
	tolerance := map[Encoding]float64{
		PCM16:   1.0 / (1 << 15),
		PCM24:   1.0 / (1 << 23),
		PCM32:   1e-7,
		Float32: 0,
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, enc := range []Encoding{PCM16, PCM24, PCM32, Float32} {
		for _, channels := range []int{1, 2, 3, 6} {
			for _, rate := range []int{16000, 44100, 48000} {
				f := Format{Rate: rate, Channels: channels}
				t.Run(enc.String()+"/"+f.String(), func(t *testing.T) {
					// An odd frame count makes odd-sized 24-bit data chunks.
					in := randomSamples(rng, 333*channels)
					gotF, got, err := DecodeWAV(bytes.NewReader(encode(t, f, in, enc)), "mem.wav")
					require.NoError(t, err)
					assert.Equal(t, f, gotF)
					require.Len(t, got, len(in))
					for i := range in {
						require.InDelta(t, in[i], got[i], tolerance[enc], "sample %d", i)
					}
				})
			}
		}
	}
}

func TestWAVRoundTripFiles(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, enc := range []Encoding{PCM16, PCM24, PCM32, Float32} {
		t.Run(enc.String(), func(t *testing.T) {
			f := Format{Rate: 48000, Channels: 2}
			in := randomSamples(rng, 2*5001)
			want := encode(t, f, in, enc)

			whole := filepath.Join(dir, enc.String()+"-whole.wav")
			require.NoError(t, WriteWAV(whole, f, in, enc))
			b, err := os.ReadFile(whole)
			require.NoError(t, err)
			assert.Equal(t, want, b, "WriteWAV must match EncodeWAV byte for byte")

			// Streaming in uneven chunks must produce the same file once
			// Close has patched the header.
			streamed := filepath.Join(dir, enc.String()+"-streamed.wav")
			w, err := NewWAVWriter(streamed, f, enc)
			require.NoError(t, err)
			for rest := in; len(rest) > 0; {
				n := min(len(rest), 2*(1+rng.IntN(3000)))
				require.NoError(t, w.Write(rest[:n]))
				rest = rest[n:]
			}
			assert.EqualValues(t, 5001, w.Frames())
			require.NoError(t, w.Close())
			b, err = os.ReadFile(streamed)
			require.NoError(t, err)
			assert.Equal(t, want, b, "WAVWriter must match EncodeWAV byte for byte")

			gotF, got, err := ReadWAV(streamed)
			require.NoError(t, err)
			assert.Equal(t, f, gotF)
			assert.Len(t, got, len(in))
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 8, "no temporary files may be left behind")
}

func TestWAVEncodeQuantisation(t *testing.T) {
	const step = 1.0 / (1 << 15)
	in := []float32{
		1.5, -1.5, 1, -1, 0.5,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		0.4 * step, 0.6 * step, -0.6 * step, 0,
	}
	want := []float32{
		1 - step, -1, 1 - step, -1, 0.5,
		0, 1 - step, -1,
		0, step, -step, 0,
	}
	_, got, err := DecodeWAV(bytes.NewReader(encode(t, Mono16k, in, PCM16)), "q.wav")
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// --- inputs that must decode

func TestDecodeWAVValid(t *testing.T) {
	stereo := pcm16Bytes(16384, -16384, 8192, -8192, 0, 32767)
	stereoWant := []float32{0.5, -0.5, 0.25, -0.25, 0, 32767.0 / 32768}

	float64Body := le.AppendUint64(nil, math.Float64bits(0.75))
	float64Body = le.AppendUint64(float64Body, math.Float64bits(-2)) // over-range clamps

	pcm24in32 := le.AppendUint32(nil, uint32(0x40000000)) // 0.5, left-justified 24 in 32

	extFloat := le.AppendUint32(nil, math.Float32bits(0.125))

	var wildFloats []byte
	for _, v := range []float32{float32(math.NaN()), 1.5, float32(math.Inf(-1)), -0.25} {
		wildFloats = le.AppendUint32(wildFloats, math.Float32bits(v))
	}

	tests := []struct {
		name   string
		file   []byte
		format Format
		want   []float32
	}{
		{
			name:   "48 kHz stereo stays 48 kHz stereo interleaved",
			file:   riff(fmtPCM(2, 48000, 16), chunk("data", stereo)),
			format: Format{Rate: 48000, Channels: 2},
			want:   stereoWant,
		},
		{
			name: "odd-sized unknown chunk before data",
			file: riff(fmtPCM(1, 16000, 16),
				chunk("LIST", []byte("INFOISFT\x03\x00\x00\x00ab\x00")), // 15 bytes + pad
				chunk("data", pcm16Bytes(16384))),
			format: Mono16k,
			want:   []float32{0.5},
		},
		{
			// Some writers leave the pad byte out: the next chunk's name
			// starts where it would be.
			name: "odd-sized unknown chunk without its pad byte",
			file: riff(fmtPCM(1, 16000, 16),
				chunkSized("LIST", 3, []byte("abc"), false),
				chunk("data", pcm16Bytes(16384))),
			format: Mono16k,
			want:   []float32{0.5},
		},
		{
			name:   "chunks before fmt and after data",
			file:   riff(chunk("JUNK", make([]byte, 28)), fmtPCM(1, 16000, 16), chunk("data", pcm16Bytes(-32768)), chunk("id3 ", []byte{1, 2, 3})),
			format: Mono16k,
			want:   []float32{-1},
		},
		{
			name:   "extensible PCM 24-bit valid in 32-bit container",
			file:   riff(fmtExtensible(1, 16000, 32, 24, wavTagPCM, wavGUIDTail[:]), chunk("data", pcm24in32)),
			format: Mono16k,
			want:   []float32{0.5},
		},
		{
			name:   "extensible float",
			file:   riff(fmtExtensible(1, 22050, 32, 32, wavTagFloat, wavGUIDTail[:]), chunk("fact", le.AppendUint32(nil, 1)), chunk("data", extFloat)),
			format: Format{Rate: 22050, Channels: 1},
			want:   []float32{0.125},
		},
		{
			name:   "extensible 16-bit stereo",
			file:   riff(fmtExtensible(2, 48000, 16, 16, wavTagPCM, wavGUIDTail[:]), chunk("data", stereo)),
			format: Format{Rate: 48000, Channels: 2},
			want:   stereoWant,
		},
		{
			name:   "float32 NaN and over-range are bounded",
			file:   riff(fmtChunk(wavTagFloat, 1, 16000, 4, 32), chunk("data", wildFloats)),
			format: Mono16k,
			want:   []float32{0, 1, -1, -0.25},
		},
		{
			name:   "float64",
			file:   riff(fmtChunk(wavTagFloat, 1, 8000, 8, 64), chunk("data", float64Body)),
			format: Format{Rate: 8000, Channels: 1},
			want:   []float32{0.75, -1},
		},
		{
			name:   "24-bit PCM negative",
			file:   riff(fmtPCM(1, 16000, 24), chunk("data", []byte{0x00, 0x00, 0xC0})),
			format: Mono16k,
			want:   []float32{-0.5},
		},
		{
			name:   "fmt chunk with extra bytes",
			file:   riff(chunk("fmt ", append(fmtPCM(1, 16000, 16)[8:], 0, 0, 9, 9, 9)), chunk("data", pcm16Bytes(8192))),
			format: Mono16k,
			want:   []float32{0.25},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Once with a sized reader and once through a reader that
			// hides its size and returns a byte at a time.
			for _, r := range []io.Reader{bytes.NewReader(tt.file), iotest.OneByteReader(bytes.NewReader(tt.file))} {
				f, got, err := DecodeWAV(r, "ok.wav")
				require.NoError(t, err)
				assert.Equal(t, tt.format, f)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

// --- inputs that must be rejected

func TestDecodeWAVInvalid(t *testing.T) {
	valid := riff(fmtPCM(1, 16000, 16), chunk("data", pcm16Bytes(1, 2, 3, 4)))
	tests := []struct {
		name string
		file []byte
		want string
		kind error
	}{
		{"zero-length file", nil, "empty file", ErrMalformedWAV},
		{"truncated header", []byte("RIFF\x00\x00"), "not a WAV file (only 6 bytes)", ErrMalformedWAV},
		{"truncated file", valid[:30], "truncated fmt chunk: header says 16 bytes, file has 10", ErrMalformedWAV},
		{
			"truncated data chunk",
			riff(fmtPCM(1, 16000, 16), chunkSized("data", 32000, make([]byte, 1200), false)),
			"truncated data chunk: header says 32000 bytes, file has 1200",
			ErrMalformedWAV,
		},
		{
			"truncated unknown chunk",
			riff(fmtPCM(1, 16000, 16), chunkSized("LIST", 100, make([]byte, 10), false)),
			`truncated "LIST" chunk: header says 100 bytes, file has 10`,
			ErrMalformedWAV,
		},
		{"zero-length data", riff(fmtPCM(1, 16000, 16), chunk("data", nil)), "zero-length audio", ErrMalformedWAV},
		{
			"a chunk header that names no chunk",
			riff(fmtPCM(1, 16000, 16), []byte{0x01, 0x00, 0x01, 0x00, 2, 0, 0, 0, 0, 0}, chunk("data", pcm16Bytes(1))),
			"damaged: the chunk header at byte 36 names no chunk (01 00 01 00)",
			ErrMalformedWAV,
		},
		{"not RIFF", append([]byte("RIFX"), valid[4:]...), `unsupported container "RIFX"`, ErrUnsupportedWAV},
		{"garbage", bytes.Repeat([]byte("x"), 64), "not a WAV file (missing RIFF header)", ErrMalformedWAV},
		{"MP3 with an ID3 tag", append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), valid...), "not a WAV file but MP3 audio; convert it, e.g. sox IN OUT.wav or ffmpeg -i IN -ar 16000 -ac 1 OUT.wav", ErrUnsupportedWAV},
		{"MP3 frame", append([]byte{0xFF, 0xFB, 0x90, 0x64}, valid...), "not a WAV file but MP3 audio", ErrUnsupportedWAV},
		{"AAC in ADTS is not MP3", append([]byte{0xFF, 0xF1, 0x50, 0x80}, valid...), "not a WAV file (missing RIFF header)", ErrMalformedWAV},
		{"Ogg", append([]byte("OggS\x00\x02"), valid...), "not a WAV file but Ogg audio", ErrUnsupportedWAV},
		{"FLAC", append([]byte("fLaC\x00\x00\x00\x22"), valid...), "not a WAV file but FLAC audio", ErrUnsupportedWAV},
		{"M4A", append([]byte("\x00\x00\x00\x20ftypM4A "), valid...), "not a WAV file but MP4 audio (M4A)", ErrUnsupportedWAV},
		{"not WAVE", append(append([]byte{}, valid[:8]...), append([]byte("AVI "), valid[12:]...)...), `not a WAV file (RIFF type "AVI "`, ErrMalformedWAV},
		{"8-bit PCM", riff(fmtPCM(1, 8000, 8), chunk("data", []byte{128, 129})), "unsupported format: 8-bit PCM (convert to 16-bit PCM)", ErrUnsupportedWAV},
		{"12-bit PCM", riff(fmtChunk(wavTagPCM, 1, 8000, 2, 12), chunk("data", []byte{0, 0})), "unsupported format: 12-bit PCM", ErrUnsupportedWAV},
		{"16-bit float", riff(fmtChunk(wavTagFloat, 1, 8000, 2, 16), chunk("data", []byte{0, 0})), "unsupported format: 16-bit float", ErrUnsupportedWAV},
		{"A-law", riff(fmtChunk(6, 1, 8000, 1, 8), chunk("data", []byte{0, 0})), "unsupported format: A-law (convert to 16-bit PCM)", ErrUnsupportedWAV},
		{"unknown tag", riff(fmtChunk(0x1234, 1, 8000, 2, 16), chunk("data", []byte{0, 0})), "unsupported format: format tag 0x1234", ErrUnsupportedWAV},
		{
			"extensible with foreign GUID",
			riff(fmtExtensible(1, 16000, 16, 16, wavTagPCM, bytes.Repeat([]byte{7}, 14)), chunk("data", []byte{0, 0})),
			"unsupported format: extensible sub-format",
			ErrUnsupportedWAV,
		},
		{
			"extensible fmt too short",
			riff(chunk("fmt ", fmtExtensible(1, 16000, 16, 16, wavTagPCM, wavGUIDTail[:])[8:8+24]), chunk("data", []byte{0, 0})),
			"extensible fmt chunk too short (24 bytes, need 40)",
			ErrMalformedWAV,
		},
		{"zero channels", riff(fmtChunk(wavTagPCM, 0, 16000, 2, 16), chunk("data", []byte{0, 0})), "invalid channel count 0", ErrMalformedWAV},
		{"too many channels", riff(fmtChunk(wavTagPCM, 1000, 16000, 2000, 16), chunk("data", []byte{0, 0})), "invalid channel count 1000", ErrMalformedWAV},
		{"zero rate", riff(fmtChunk(wavTagPCM, 1, 0, 2, 16), chunk("data", []byte{0, 0})), "invalid sample rate 0", ErrMalformedWAV},
		{"block align mismatch", riff(fmtChunk(wavTagPCM, 2, 16000, 2, 16), chunk("data", []byte{0, 0})), "block align mismatch: header says 2, 2 channels of 16-bit samples need 4", ErrMalformedWAV},
		{"partial frame in data", riff(fmtPCM(2, 16000, 16), chunk("data", []byte{0, 0, 0, 0, 0, 0})), "data chunk size 6 is not a whole number of 4-byte sample frames", ErrMalformedWAV},
		{"no data chunk", riff(fmtPCM(1, 16000, 16), chunk("LIST", []byte("abc"))), "no data chunk", ErrMalformedWAV},
		{"no chunks", riff(), "no fmt or data chunk", ErrMalformedWAV},
		{"data before fmt", riff(chunk("data", pcm16Bytes(1)), fmtPCM(1, 16000, 16)), "data chunk before fmt chunk", ErrMalformedWAV},
		{"duplicate fmt", riff(fmtPCM(1, 16000, 16), fmtPCM(1, 16000, 16), chunk("data", pcm16Bytes(1))), "duplicate fmt chunk", ErrMalformedWAV},
		{"fmt too short", riff(chunk("fmt ", make([]byte, 14)), chunk("data", pcm16Bytes(1))), "fmt chunk too short (14 bytes, need at least 16)", ErrMalformedWAV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T, name string, err error) {
				t.Helper()
				require.Error(t, err)
				assert.Contains(t, err.Error(), "audio: read "+name+": "+tt.want)
				assert.ErrorIs(t, err, tt.kind)
			}
			_, samples, err := DecodeWAV(bytes.NewReader(tt.file), "x.wav")
			check(t, "x.wav", err)
			assert.Nil(t, samples)

			_, _, err = DecodeWAV(iotest.OneByteReader(bytes.NewReader(tt.file)), "x.wav")
			check(t, "x.wav", err)

			path := filepath.Join(t.TempDir(), "bad.wav")
			require.NoError(t, os.WriteFile(path, tt.file, 0o644))
			_, _, err = ReadWAV(path)
			check(t, path, err)
		})
	}
}

func TestDecodeWAVHugeClaimedSize(t *testing.T) {
	// A header claiming 4 GiB of data is a stream's (see streamedSize):
	// the data is what arrives, and nothing is allocated for the claim.
	file := riff(fmtChunk(wavTagFloat, 32, 768000, 256, 64), chunkSized("data", 0xFFFFFF00, make([]byte, 512), false))
	for _, r := range []io.Reader{bytes.NewReader(file), iotest.OneByteReader(bytes.NewReader(file))} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f, samples, err := DecodeWAV(r, "huge.wav")
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Equal(t, Format{Rate: 768000, Channels: 32}, f)
		assert.Len(t, samples, 64, "two frames of 32 channels")
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20))
	}
	// Below a stream's placeholder, a size the file does not hold is a
	// file cut short.
	cut := riff(fmtPCM(1, 16000, 16), chunkSized("data", streamedSize-2, make([]byte, 512), false))
	_, _, err := DecodeWAV(bytes.NewReader(cut), "cut.wav")
	require.ErrorContains(t, err, "truncated data chunk: header says 2147479550 bytes, file has 512")
}

// A WAV written to a pipe (sox -t wav -, arecord, ffmpeg) has a
// placeholder for its sizes, the largest they may be: it is read to its
// end, from a pipe or a file, a frame cut short at the end dropped (bug:
// 0xFFFFFFFF was "not a whole number of 2-byte sample frames", sox's
// 0x7FFFF000 "18h38m29s of audio is more than the 1h0m0s taken").
func TestStreamedWAVIsReadToItsEnd(t *testing.T) {
	pcm := make([]float32, 16000)
	for i := range pcm {
		pcm[i] = float32(math.Sin(float64(i)*0.05)) / 2
	}
	for _, tc := range []struct {
		name   string
		size   uint32
		trail  []byte
		frames int
	}{
		{"0xFFFFFFFF", 0xFFFFFFFF, nil, 16000},
		{"sox's 0x7FFFF000", 0x7FFFF000, nil, 16000},
		{"a frame cut short", 0xFFFFFFFF, []byte{1}, 16000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := streamedWAV(t, pcm, tc.size, tc.trail)
			path := filepath.Join(t.TempDir(), "streamed.wav")
			require.NoError(t, os.WriteFile(path, file, 0o644))
			got, err := ReadWAVMono16k(context.Background(), path)
			require.NoError(t, err)
			require.Len(t, got, tc.frames)
			assert.InDelta(t, pcm[100], got[100], 1e-4)
			_, samples, err := DecodeWAV(iotest.HalfReader(bytes.NewReader(file)), "pipe.wav")
			require.NoError(t, err)
			assert.Len(t, samples, tc.frames)
		})
	}
}

// streamedWAV is pcm as 16 kHz 16-bit mono in a WAV whose RIFF size is a
// stream's placeholder and whose data chunk's is size, trail after it.
func streamedWAV(t *testing.T, pcm []float32, size uint32, trail []byte) []byte {
	body := encode(t, Mono16k, pcm, PCM16)[44:] // past the canonical header
	header := append([]byte("RIFF\xff\xff\xff\xffWAVE"), fmtPCM(1, 16000, 16)...)
	return append(header, chunkSized("data", size, append(bytes.Clone(body), trail...), false)...)
}

// A streamed WAV's length is known once its end is read: the replay's
// input shortens to it, and every read after is silence.
func TestStreamedWAVLengthIsKnownAtItsEnd(t *testing.T) {
	body := make([]byte, 2*1600) // 0.1 s at 16 kHz
	file := append(append([]byte("RIFF\xff\xff\xff\xffWAVE"), fmtPCM(1, 16000, 16)...), chunkSized("data", 0xFFFFFFFF, body, false)...)
	s, err := newWAVStream(context.Background(), iotest.HalfReader(bytes.NewReader(file)), "pipe.wav", -1)
	require.NoError(t, err)
	assert.Equal(t, Mono16k.Samples(MaxInputDuration), s.Len(), "the most taken, until the end is read")
	out := make([]float32, 1000)
	require.NoError(t, s.Read(0, out))
	require.NoError(t, s.Read(1000, out))
	assert.Equal(t, int64(1600), s.Len())

	// One that goes on past the hour is refused as it passes it.
	long := append(append([]byte("RIFF\xff\xff\xff\xffWAVE"), fmtPCM(1, 16000, 16)...), chunkSized("data", 0xFFFFFFFF, nil, false)...)
	s, err = newWAVStream(context.Background(), io.MultiReader(bytes.NewReader(long), zeros{}), "endless.wav", -1)
	require.NoError(t, err)
	_, err = readAll(s)
	require.ErrorIs(t, err, ErrInputLimits)
	assert.ErrorContains(t, err, "endless.wav: the streamed audio goes on past the 1h0m0s taken at once; split it")
}

// zeros is an endless stream of silence.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestDecodeWAVReaderError(t *testing.T) {
	boom := errors.New("boom")
	file := encode(t, Mono16k, make([]float32, 100), PCM16)
	r := io.MultiReader(bytes.NewReader(file[:60]), iotest.ErrReader(boom))
	_, _, err := DecodeWAV(r, "net.wav")
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "audio: read net.wav: reading data chunk")
}

func TestReadWAVMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.wav")
	_, _, err := ReadWAV(path)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), path)
}

// --- writing

func TestWriteWAVErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		path    string
		format  Format
		samples []float32
		enc     Encoding
		want    string
	}{
		{"invalid format", filepath.Join(dir, "a.wav"), Format{Rate: 0, Channels: 1}, nil, PCM16, "invalid format"},
		{"unknown encoding", filepath.Join(dir, "b.wav"), Mono16k, nil, Encoding(42), "unknown encoding Encoding(42)"},
		{"partial frame", filepath.Join(dir, "c.wav"), Format{Rate: 16000, Channels: 2}, []float32{0}, PCM16, "not a whole number of 2-channel frames"},
		{"missing directory", filepath.Join(dir, "nope", "d.wav"), Mono16k, []float32{0}, PCM16, "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteWAV(tt.path, tt.format, tt.samples, tt.enc)
			require.ErrorContains(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.path)

			err = EncodeWAV(io.Discard, tt.format, tt.samples, tt.enc)
			if tt.name != "missing directory" {
				require.ErrorContains(t, err, tt.want)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "failed writes must leave nothing behind")
}

func TestWriteWAVReplacesAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.wav")
	require.NoError(t, WriteWAV(path, Mono16k, []float32{0.5}, PCM16))
	require.NoError(t, WriteWAV(path, Mono16k, []float32{0.25, 0.25}, PCM16))
	_, got, err := ReadWAV(path)
	require.NoError(t, err)
	assert.Equal(t, []float32{0.25, 0.25}, got)

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o644), st.Mode().Perm())
}

func TestWAVWriterMisuse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.wav")
	w, err := NewWAVWriter(path, Format{Rate: 48000, Channels: 2}, Float32)
	require.NoError(t, err)
	assert.Equal(t, Format{Rate: 48000, Channels: 2}, w.Format())

	require.ErrorContains(t, w.Write([]float32{1, 2, 3}), "not a whole number of 2-channel frames")
	// A rejected write leaves the writer usable.
	require.NoError(t, w.Write([]float32{0.5, -0.5}))
	_, err = os.Stat(path)
	require.ErrorIs(t, err, fs.ErrNotExist, "nothing appears at path before Close")

	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "second Close is a no-op")
	require.ErrorContains(t, w.Write([]float32{0, 0}), "write after Close")

	f, got, err := ReadWAV(path)
	require.NoError(t, err)
	assert.Equal(t, Format{Rate: 48000, Channels: 2}, f)
	assert.Equal(t, []float32{0.5, -0.5}, got)

	_, err = NewWAVWriter(filepath.Join(dir, "x.wav"), Mono16k, Encoding(-1))
	require.ErrorContains(t, err, "unknown encoding")
}

func TestEncodeWAVWriterError(t *testing.T) {
	boom := errors.New("disk full")
	err := EncodeWAV(errWriter{boom}, Mono16k, []float32{0}, PCM16)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "audio: encode WAV")
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// --- fuzzing

func FuzzDecodeWAV(f *testing.F) {
	f.Add(encode(f, Mono16k, []float32{0, 0.5, -0.5}, PCM16))
	f.Add(encode(f, Format{Rate: 48000, Channels: 3}, []float32{0.1, 0.2, 0.3}, PCM24))
	f.Add(encode(f, Format{Rate: 44100, Channels: 2}, []float32{0.1, 0.2}, Float32))
	f.Add(encode(f, Mono16k, []float32{0.1}, PCM32))
	f.Add(riff(fmtExtensible(1, 16000, 32, 24, wavTagPCM, wavGUIDTail[:]), chunk("data", make([]byte, 8))))
	f.Add(riff(fmtChunk(wavTagFloat, 1, 8000, 8, 64), chunk("LIST", []byte{1}), chunk("data", make([]byte, 16))))
	f.Add(riff(fmtPCM(1, 16000, 16), chunkSized("data", 0xFFFFFFFF, nil, false)))
	f.Add(riff(fmtPCM(2, 16000, 16), chunkSized("data", 0xFFFFFFFF, make([]byte, 7), false)))
	f.Add([]byte("RIFF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		format, samples, err := DecodeWAV(bytes.NewReader(b), "fuzz.wav")
		if err != nil {
			require.Nil(t, samples)
			return
		}
		require.NoError(t, format.Validate())
		require.NotEmpty(t, samples)
		require.Zero(t, len(samples)%format.Channels)
		require.LessOrEqual(t, len(samples), len(b)/2, "cannot decode more samples than bytes allow")
		for _, v := range samples {
			require.True(t, v >= -1 && v <= 1, "sample %v out of range", v)
		}
	})
}

// Recordings given to the assistant are bounded, checked from the header
// before any audio is decoded (bug: a 64 KB file declaring 1 Hz was
// resampled 16,000-fold, for minutes and gigabytes).
func TestReadWAVMono16kInputLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	for _, tc := range []struct {
		rate int
		err  string
	}{
		{1, "sample rate 1 Hz is outside what speech is recorded at (8000 to 384000 Hz); resample it, e.g. sox"},
		{7999, "sample rate 7999 Hz"},
		{8000, ""},
		{384000, ""},
		{384001, "sample rate 384001 Hz"},
	} {
		path := write(fmt.Sprintf("r%d.wav", tc.rate), riff(fmtPCM(1, tc.rate, 16), chunk("data", make([]byte, 64<<10))))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		pcm, err := ReadWAVMono16k(context.Background(), path)
		runtime.ReadMemStats(&after)
		if tc.err == "" {
			require.NoError(t, err, "%d Hz", tc.rate)
			assert.InDelta(t, 32768*16000/float64(tc.rate), len(pcm), 2)
			continue
		}
		require.ErrorIs(t, err, ErrInputLimits)
		assert.ErrorContains(t, err, path)
		assert.ErrorContains(t, err, tc.err)
		assert.Nil(t, pcm)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "refused before decoding")
	}

	// Over an hour, declared by a stream of unknown length: refused before
	// its data arrives.
	hour := riff(fmtPCM(1, 8000, 16), chunkSized("data", uint32(2*8000*3601), nil, false))
	_, err := DecodeWAVMono16k(io.MultiReader(bytes.NewReader(hour)), "long.wav")
	require.ErrorIs(t, err, ErrInputLimits)
	assert.ErrorContains(t, err, "1h0m1s of audio is more than the 1h0m0s taken at once; split it")

	// Past the hour by less than a second: the figure shows by how much
	// (bug: "1h0m0s of audio is more than the 1h0m0s taken").
	for _, tc := range []struct {
		frames uint32
		says   string
	}{
		{16000*3600 + 16, "1h0m0.001s of audio is more than the 1h0m0s taken"},
		{16000*3600 + 1, "1h0m0.0000625s of audio is more than the 1h0m0s taken"},
	} {
		over := riff(fmtPCM(1, 16000, 16), chunkSized("data", 2*tc.frames, nil, false))
		_, err = DecodeWAVMono16k(io.MultiReader(bytes.NewReader(over)), "over.wav")
		require.ErrorIs(t, err, ErrInputLimits)
		assert.ErrorContains(t, err, tc.says)
	}
}

// Converting block by block gives what converting the whole does.
func TestReadWAVMono16kMatchesConvert(t *testing.T) {
	in := Format{Rate: 44100, Channels: 2}
	samples := make([]float32, 2*44100*3) // longer than a decode block
	for i := range samples {
		samples[i] = float32(math.Sin(float64(i) * 0.01))
	}
	path := filepath.Join(t.TempDir(), "in.wav")
	require.NoError(t, WriteWAV(path, in, samples, Float32))
	got, err := ReadWAVMono16k(context.Background(), path)
	require.NoError(t, err)
	want, err := Convert(samples, in, Mono16k)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-6, "sample %d", i)
	}
}
