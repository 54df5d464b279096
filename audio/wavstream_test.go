package audio

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Streamed a period at a time, a recording is exactly what reading it whole
// gives, and its length is known before the first sample.
func TestWAVStreamMatchesWholeRead(t *testing.T) {
	for _, f := range []Format{Mono16k, {Rate: 8000, Channels: 1}, {Rate: 22050, Channels: 2}, {Rate: 44100, Channels: 1}, {Rate: 48000, Channels: 2}} {
		t.Run(f.String(), func(t *testing.T) {
			samples := make([]float32, f.Channels*int(f.Samples(2300*time.Millisecond)))
			for i := range samples {
				samples[i] = float32(0.5 * math.Sin(float64(i)*0.013))
			}
			path := filepath.Join(t.TempDir(), "in.wav")
			require.NoError(t, WriteWAV(path, f, samples, PCM16))
			whole, err := ReadWAVMono16k(context.Background(), path)
			require.NoError(t, err)

			s, err := OpenWAVMono16k(context.Background(), path)
			require.NoError(t, err)
			defer s.Close()
			require.Equal(t, int64(len(whole)), s.Len())
			var streamed []float32
			block := make([]float32, 160)
			for pos := int64(0); pos < s.Len(); pos += int64(len(block)) {
				require.NoError(t, s.Read(pos, block))
				streamed = append(streamed, block...)
			}
			assert.Equal(t, whole, streamed[:len(whole)], "bit for bit")
			assert.Equal(t, make([]float32, len(streamed)-len(whole)), streamed[len(whole):], "silence past the end")
		})
	}
}

func TestWAVStreamErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.wav")
	require.NoError(t, WriteWAV(path, Mono16k, make([]float32, 16000), PCM16))

	s, err := OpenWAVMono16k(context.Background(), path)
	require.NoError(t, err)
	require.NoError(t, s.Read(0, make([]float32, 100)))
	err = s.Read(50, make([]float32, 100))
	require.ErrorContains(t, err, "at sample 50, not 100: the stream is read front to back")
	require.NoError(t, s.Close())

	// Cut short after the header was read: the stream fails, never ends
	// early as if the recording were shorter.
	s, err = OpenWAVMono16k(context.Background(), path)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, os.Truncate(path, 44+2*8000))
	err = s.Read(0, make([]float32, 16000))
	require.ErrorIs(t, err, ErrMalformedWAV)
	assert.ErrorContains(t, err, "truncated data chunk")
	assert.ErrorIs(t, s.Read(16000, make([]float32, 1)), ErrMalformedWAV, "the failure sticks")

	// Cancelled between blocks of a regular file.
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, WriteWAV(path, Mono16k, make([]float32, 16000*10), PCM16))
	s, err = OpenWAVMono16k(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	cancel()
	require.ErrorIs(t, s.Read(0, make([]float32, 16000*10)), context.Canceled)
}
