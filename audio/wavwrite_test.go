//go:build unix

package audio

import (
	"bytes"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What --out may point at besides a plain path: the writers must write
// through links and special files, never replace them.

// wavWriters are the two ways to write a WAV file. Only WriteWAV knows the
// length before the header goes out.
var wavWriters = []struct {
	name     string
	write    func(path string, samples []float32) error
	streamed bool
}{
	{"WriteWAV", func(path string, samples []float32) error { return WriteWAV(path, Mono16k, samples, PCM16) }, false},
	{"WAVWriter", writeStreamed, true},
}

func writeStreamed(path string, samples []float32) error {
	w, err := NewWAVWriter(path, Mono16k, PCM16)
	if err != nil {
		return err
	}
	// Two calls, as a caller streaming audio makes many.
	half := len(samples) / 2
	err = w.Write(samples[:half])
	if err == nil {
		err = w.Write(samples[half:])
	}
	// After a failed Write, Close returns that same error.
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// unknownSizes is want (a PCM16 mono WAV) as a streaming writer sends it:
// both size fields say "unknown length" because they cannot be patched.
func unknownSizes(want []byte) []byte {
	out := append([]byte(nil), want...)
	le.PutUint32(out[4:], math.MaxUint32)  // RIFF size
	le.PutUint32(out[40:], math.MaxUint32) // data size
	return out
}

func TestWAVWriteFIFO(t *testing.T) {
	// More than a pipe buffer (64 KiB) holds, so writer and reader take turns.
	in := randomSamples(rand.New(rand.NewPCG(7, 8)), 48000)
	want := encode(t, Mono16k, in, PCM16)
	for _, w := range wavWriters {
		t.Run(w.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.wav")
			require.NoError(t, syscall.Mkfifo(path, 0o600))
			// The test holds its own write end until the writer is done:
			// without a writer the read would end at once, and the reader
			// sees EOF only once both are closed. A writer that never
			// opens the FIFO thus shows up as an empty read, not a hang.
			r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			require.NoError(t, err)
			defer r.Close()
			hold, err := os.OpenFile(path, os.O_WRONLY, 0)
			require.NoError(t, err)
			got := make(chan []byte)
			go func() {
				b, _ := io.ReadAll(r)
				got <- b
			}()

			err = w.write(path, in)
			require.NoError(t, hold.Close())
			require.NoError(t, err)
			b := <-got
			if w.streamed {
				want = unknownSizes(want)
			} // else WriteWAV knows the length, so the header is exact
			require.Equal(t, len(want), len(b), "bytes read")
			assert.Equal(t, want[:44], b[:44], "header")
			assert.True(t, bytes.Equal(want, b), "samples")
			requireType(t, path, fs.ModeNamedPipe)
		})
	}
}

func TestWAVWriteSymlink(t *testing.T) {
	in := []float32{0.5, -0.25}
	tests := []struct {
		name   string
		links  map[string]string // link name -> link text ($DIR: the directory)
		path   string            // what is written to
		target string            // the file that must end up holding the WAV
	}{
		{"relative", map[string]string{"out.wav": "sub/real.wav"}, "out.wav", "sub/real.wav"},
		{"absolute", map[string]string{"out.wav": "$DIR/sub/real.wav"}, "out.wav", "sub/real.wav"},
		{"chain", map[string]string{"out.wav": "mid.wav", "mid.wav": "sub/real.wav"}, "out.wav", "sub/real.wav"},
		{"through linked dir", map[string]string{"out.wav": "lsub/real.wav", "lsub": "sub"}, "out.wav", "sub/real.wav"},
		{"dangling", map[string]string{"out.wav": "sub/new.wav"}, "out.wav", "sub/new.wav"},
		{"dangling chain", map[string]string{"out.wav": "mid.wav", "mid.wav": "sub/new.wav"}, "out.wav", "sub/new.wav"},
	}
	for _, w := range wavWriters {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "real.wav"), []byte("old"), 0o644))
				for name, text := range tt.links {
					require.NoError(t, os.Symlink(strings.ReplaceAll(text, "$DIR", dir), filepath.Join(dir, name)))
				}

				require.NoError(t, w.write(filepath.Join(dir, tt.path), in))

				for name, text := range tt.links {
					got, err := os.Readlink(filepath.Join(dir, name))
					require.NoError(t, err, "%s must still be a link", name)
					assert.Equal(t, strings.ReplaceAll(text, "$DIR", dir), got)
				}
				_, samples, err := ReadWAV(filepath.Join(dir, tt.target))
				require.NoError(t, err)
				assert.Equal(t, in, samples)
				assertNoTemp(t, dir)
				assertNoTemp(t, filepath.Join(dir, "sub"))
			})
		}
	}
}

// The temporary file has to be in the target's directory: the rename
// cannot cross file systems, and a link may point at another one.
func TestWAVWriterTempBesideTarget(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	link := filepath.Join(dir, "out.wav")
	require.NoError(t, os.Symlink(filepath.Join("sub", "real.wav"), link))

	w, err := NewWAVWriter(link, Mono16k, PCM16)
	require.NoError(t, err)
	require.NoError(t, w.Write([]float32{0.5}))
	tmp, err := filepath.Glob(filepath.Join(sub, ".real.wav.tmp-*"))
	require.NoError(t, err)
	assert.Len(t, tmp, 1, "the temporary file lives beside the target")
	assertNoTemp(t, dir)
	require.NoError(t, w.Close())
	assertNoTemp(t, sub)
}

func TestWAVWriteRefusesUnwritable(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		typ  fs.FileMode
		want string
	}{
		{"directory", func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(path, "keep"), nil, 0o644))
		}, fs.ModeDir, "is a directory"},
		{"socket", func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
		}, fs.ModeSocket, "is a socket"},
	}
	for _, w := range wavWriters {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "out.wav")
				tt.make(t, path)
				// A link to it is refused the same way.
				link := filepath.Join(dir, "link.wav")
				require.NoError(t, os.Symlink("out.wav", link))

				for _, p := range []string{path, link} {
					err := w.write(p, []float32{0})
					require.EqualError(t, err, "audio: write "+p+": "+tt.want)
				}
				requireType(t, path, tt.typ)
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				assert.Len(t, entries, 2, "nothing but the target and the link")
				if tt.typ == fs.ModeDir {
					entries, err := os.ReadDir(path)
					require.NoError(t, err)
					require.Len(t, entries, 1)
					assert.Equal(t, "keep", entries[0].Name())
				}
			})
		}
	}
}

// Character devices are written through: /dev/null takes everything,
// /dev/full fails every write, and the error must reach the caller.
func TestWAVWriteCharDevice(t *testing.T) {
	tests := []struct {
		name         string
		major, minor int
		want         error
	}{
		{"null", 1, 3, nil},
		{"full", 1, 7, syscall.ENOSPC},
	}
	for _, w := range wavWriters {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "dev-"+tt.name)
				mknodChar(t, path, tt.major, tt.minor)

				// More than the writers buffer, so a write fails before the
				// final flush.
				err := w.write(path, make([]float32, 3*16000))
				if tt.want == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tt.want)
					assert.EqualError(t, err, "audio: write "+path+": no space left on device")
				}
				requireType(t, path, fs.ModeDevice|fs.ModeCharDevice)
				assertNoTemp(t, filepath.Dir(path))
			})
		}
	}
}

// A write through the temporary file that fails at the rename removes
// the temporary file and leaves what is at the path alone.
func TestWAVWriterFailureKeepsTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.wav")
	w, err := NewWAVWriter(path, Mono16k, PCM16)
	require.NoError(t, err)
	require.NoError(t, w.Write([]float32{0.5}))
	// A directory appearing at path meanwhile cannot be renamed over.
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "keep"), nil, 0o644))

	err = w.Close()
	require.ErrorContains(t, err, "audio: write "+path+": ")
	assert.NotContains(t, err.Error(), ".tmp-", "errors name the path, not the temporary file")
	requireType(t, path, fs.ModeDir)
	assertNoTemp(t, dir)
}

func TestWriteWAVModeFollowsUmask(t *testing.T) {
	// The umask is process-wide; no test in this package runs in parallel.
	defer syscall.Umask(syscall.Umask(0o027))
	path := filepath.Join(t.TempDir(), "out.wav")
	require.NoError(t, WriteWAV(path, Mono16k, []float32{0}, PCM16))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o640), st.Mode().Perm())
}

// mknodChar makes a character device node, which needs root, and Linux
// device numbers (1, 3 is /dev/null; 1, 7 is /dev/full).
func mknodChar(t *testing.T, path string, major, minor int) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("device numbers are Linux's")
	}
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	require.NoError(t, syscall.Mknod(path, syscall.S_IFCHR|0o666, major<<8|minor))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("device nodes cannot be opened here (nodev mount?): %v", err)
	}
	require.NoError(t, f.Close())
}

func requireType(t *testing.T, path string, typ fs.FileMode) {
	t.Helper()
	st, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, typ, st.Mode().Type(), "%s must keep its file type", path)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	tmp, err := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, tmp, "no temporary file may be left in %s", dir)
}
