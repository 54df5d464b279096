//go:build unix

package audio

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// A FIFO given as input, with no writer or one that never writes, waits
// only until ctx ends (bug: `vad f.wav` on a FIFO ignored Ctrl-C and needed
// SIGKILL).
func TestWAVStreamFIFOHonoursContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	header := []byte("RIFF\xff\xff\xff\xffWAVEfmt \x10\x00\x00\x00") // a fmt chunk's header, then nothing
	for _, tc := range []struct {
		name   string
		writer func(t *testing.T, path string) // nil: nobody opens the FIFO
	}{
		{"no writer", nil},
		{"a writer that never writes", func(t *testing.T, path string) {
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			t.Cleanup(func() { w.Close() })
		}},
		{"a writer that stops mid-header", func(t *testing.T, path string) {
			w, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			t.Cleanup(func() { w.Close() })
			_, err = w.Write(header)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.wav")
			require.NoError(t, syscall.Mkfifo(path, 0o600))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				s, err := OpenWAVMono16k(ctx, path)
				if err == nil {
					s.Close()
				}
				done <- err
			}()
			if tc.writer != nil {
				tc.writer(t, path)
			}
			time.Sleep(50 * time.Millisecond) // let the open or read block
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled)
				assert.ErrorContains(t, err, path)
			case <-time.After(5 * time.Second):
				t.Fatal("still blocked 5 s after ctx ended")
			}
		})
	}
}

// A WAV written to a pipe (sox -t wav - | voice-agent vad /dev/stdin) is
// read to its end from the pipe, its length known once there.
func TestStreamedWAVFromAPipe(t *testing.T) {
	pcm := make([]float32, 16000)
	for i := range pcm {
		pcm[i] = float32(i%100) / 200
	}
	file := streamedWAV(t, pcm, 0xFFFFFFFF, []byte{1})
	fifo := filepath.Join(t.TempDir(), "fifo.wav")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	written := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.Write(file)
			w.Close()
		}
		written <- err
	}()
	got, err := ReadWAVMono16k(context.Background(), fifo)
	require.NoError(t, err)
	require.NoError(t, <-written)
	require.Len(t, got, len(pcm))
	assert.InDelta(t, pcm[150], got[150], 1e-4)
}
