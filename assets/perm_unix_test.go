//go:build unix

package assets

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setUmask sets the process's umask for the test.
func setUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

func requireMode(t *testing.T, want fs.FileMode, paths ...string) {
	t.Helper()
	for _, p := range paths {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, want, fi.Mode(), p)
	}
}

// Every file and folder a pull creates has the mode the umask leaves of
// 0666 (0777): the partial file and its validator, the model's file and
// the lock file alike, so that one user's pull is another's to read.
func TestCacheFilesFollowTheUmask(t *testing.T) {
	data := testContent(100_000)
	for _, tc := range []struct {
		umask     int
		file, dir fs.FileMode
	}{{0o022, 0o644, 0o755}, {0o002, 0o664, 0o775}} {
		t.Run(fmt.Sprintf("umask %03o", tc.umask), func(t *testing.T) {
			setUmask(t, tc.umask)
			var cut atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"a"`)
				if !cut.Swap(true) { // the first response ends halfway
					w.Header().Set("Content-Length", fmt.Sprint(len(data)))
					w.Write(data[:len(data)/2])
					w.(http.Flusher).Flush()
					if conn, _, err := w.(http.Hijacker).Hijack(); assert.NoError(t, err) {
						conn.Close()
					}
					return
				}
				http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
			}))
			defer srv.Close()
			p := testPuller(t, srv)
			p.Retries = -1
			m := testModel(srv.URL, nil, false)
			path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")

			require.Error(t, p.Pull(testCtx(t), m), "the cut pull")
			requireMode(t, tc.file, path+".part", path+".part.meta")
			require.NoError(t, p.Pull(testCtx(t), m), "the resumed pull")
			requireMode(t, tc.file, path, filepath.Join(p.Dir, LockFileName))
			requireMode(t, tc.dir|fs.ModeDir, filepath.Dir(path), Path(p.Dir, m))
		})
	}
}

// A cache that this user cannot write (another user's) reads as any
// other: Verify, Installed and CheckCached need no write and take no lock,
// and leave the cache as it was. Permissions do not stop root, so as root
// the reader is this test binary run as nobody (uid 65534) by setpriv,
// which shows too that a cache root pulled (umask 022) is readable by
// others; as another user, the cache is made read-only instead, which
// shows only the first.
func TestReadingACacheThatCannotBeWritten(t *testing.T) {
	setUmask(t, 0o022)
	data := testContent(10_000)
	srv := serve(t, data, nil)
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, false) // recorded in the lock file
	require.NoError(t, p.Pull(testCtx(t), m))
	// Old enough that a check that could write would stamp it.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(Path(p.Dir, m), "sub", "model.bin"), old, old))
	before := snapshot(t, p.Dir)

	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv to read as another user")
		}
		// nobody must reach the cache and the binary, out of go test's
		// 0700 build folder: t.TempDir's folders are 0700, in a 0700
		// folder of this test's.
		bin := filepath.Join(t.TempDir(), "assets.test")
		copyFile(t, os.Args[0], bin)
		for _, d := range []string{p.Dir, filepath.Dir(bin), filepath.Dir(p.Dir)} {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
			bin, "-test.run=^TestReadCacheHelper$", "-test.count=1", "-test.v")
		cmd.Dir = filepath.Dir(bin)
		cmd.Env = append(os.Environ(), "ASSETS_READER_DIR="+p.Dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "reader:\n%s", out)
		require.Contains(t, string(out), "--- PASS: TestReadCacheHelper", "the reader ran")
	} else {
		require.NoError(t, filepath.WalkDir(p.Dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				err = os.Chmod(path, 0o555)
			}
			return err
		}))
		t.Cleanup(func() { // so that t.TempDir can remove it
			filepath.WalkDir(p.Dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					err = os.Chmod(path, 0o755)
				}
				return err
			})
		})
		readCache(t, p.Dir)
	}
	assert.Equal(t, before, snapshot(t, p.Dir), "the cache after reading")
}

// TestReadCacheHelper is the reader TestReadingACacheThatCannotBeWritten
// runs as another user.
func TestReadCacheHelper(t *testing.T) {
	dir := os.Getenv("ASSETS_READER_DIR")
	if dir == "" {
		t.Skip("only run by TestReadingACacheThatCannotBeWritten")
	}
	require.NotZero(t, os.Geteuid(), "the reader runs as root")
	readCache(t, dir)
}

// readCache reads the cache dir that TestReadingACacheThatCannotBeWritten
// pulled, as a command does.
func readCache(t *testing.T, dir string) {
	m := testModel("https://models.invalid", nil, false) // the sources are not read
	p := &Puller{Dir: dir}
	files, err := p.Verify(m)
	require.NoError(t, err, "Verify")
	require.Len(t, files, 1)
	assert.True(t, files[0].Verified, "Verify: %+v", files[0])
	_, files, err = p.Installed(m)
	require.NoError(t, err, "Installed")
	assert.True(t, files[0].Verified, "Installed: %+v", files[0])
	require.NoError(t, CheckCached(dir, m), "CheckCached")
}

// snapshot is the names and contents of the files under dir.
func snapshot(t *testing.T, dir string) map[string]string {
	files := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	}))
	return files
}

func copyFile(t *testing.T, from, to string) {
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
