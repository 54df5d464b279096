package assets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testContent(n int) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(int64(n))).Read(b)
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func testModel(url string, data []byte, withHash bool) Model {
	f := File{Path: "sub/model.bin", Sources: []string{url + "/files/model.bin"}}
	if withHash {
		f.Size, f.SHA256 = int64(len(data)), sum(data)
	}
	return Model{Name: "test-model", Files: []File{f}}
}

// serve serves data with Range support, counting requests.
func serve(t *testing.T, data []byte, count *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if count != nil {
			count.Add(1)
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func testPuller(t *testing.T, srv *httptest.Server) *Puller {
	return &Puller{Dir: t.TempDir(), Client: srv.Client(), NPMRegistry: srv.URL,
		Backoff: 10 * time.Millisecond, StallTimeout: 2 * time.Second}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pullAndCheck pulls m, which must succeed and leave want in the cache.
func pullAndCheck(t *testing.T, p *Puller, m Model, want []byte) {
	t.Helper()
	require.NoError(t, p.Pull(testCtx(t), m))
	checkFile(t, p, m, want)
}

func checkFile(t *testing.T, p *Puller, m Model, want []byte) {
	t.Helper()
	path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(got, want), "file content differs: %d bytes, want %d", len(got), len(want))
	_, err = os.Stat(path + ".part")
	require.ErrorIs(t, err, os.ErrNotExist, ".part left behind")
}

func TestCacheDir(t *testing.T) {
	t.Setenv("VOICE_MODELS", "/x/models")
	d, _ := CacheDir()
	assert.Equal(t, "/x/models", d, "VOICE_MODELS")
	t.Setenv("VOICE_MODELS", "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	d, _ = CacheDir()
	assert.Equal(t, "/xdg/voice-agent/models", d, "XDG_DATA_HOME")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	d, _ = CacheDir()
	assert.Equal(t, "/home/u/.local/share/voice-agent/models", d, "HOME")
	assert.Equal(t, "/c/m", Path("/c", Model{Name: "m"}), "Path")
}

func TestPullProgress(t *testing.T) {
	data := testContent(1 << 20)
	var n atomic.Int32
	srv := serve(t, data, &n)
	p := testPuller(t, srv)
	var mu sync.Mutex
	var seen []Progress
	p.Progress = func(pr Progress) {
		mu.Lock()
		seen = append(seen, pr)
		mu.Unlock()
	}
	m := testModel(srv.URL, data, true)
	pullAndCheck(t, p, m, data)
	require.GreaterOrEqual(t, len(seen), 2, "progress reports")
	for i, pr := range seen {
		require.Equal(t, m.Name, pr.Model, "report %d: %+v", i, pr)
		require.Equal(t, "sub/model.bin", pr.File, "report %d: %+v", i, pr)
		require.Equal(t, int64(len(data)), pr.Total, "report %d: %+v", i, pr)
		if i > 0 {
			require.GreaterOrEqual(t, pr.Done, seen[i-1].Done, "Done went back: %d then %d", seen[i-1].Done, pr.Done)
		}
	}
	last := seen[len(seen)-1]
	require.Equal(t, last.Total, last.Done, "last report %+v", last)
	st, err := p.Verify(m)
	require.NoError(t, err, "Verify")
	require.Len(t, st, 1, "Verify")
	require.True(t, st[0].Verified, "Verify: %+v", st)
	require.True(t, st[0].Present, "Verify: %+v", st)
	require.Equal(t, int64(len(data)), st[0].Size, "Verify: %+v", st)
	// A second pull finds the file verified and makes no request.
	before := n.Load()
	require.NoError(t, p.Pull(testCtx(t), m))
	require.Equal(t, before, n.Load(), "second pull made requests")
}

// version is a file as a source serves it, with its validators.
type version struct {
	data    []byte
	etag    string
	modTime time.Time
}

func (v version) setHeaders(h http.Header) {
	if v.etag != "" {
		h.Set("ETag", v.etag)
	}
	if !v.modTime.IsZero() {
		h.Set("Last-Modified", v.modTime.UTC().Format(http.TimeFormat))
	}
}

// A pull cut halfway resumes, asking for the rest of the file it began
// (Range with If-Range), only where the first response gave a validator
// that If-Range can carry; a file changed upstream meanwhile is fetched
// whole, never spliced onto the first one's bytes, and its checksum is
// the one the lock file records.
func TestPullResume(t *testing.T) {
	a := testContent(200_000)
	b := bytes.Clone(a)
	b[50_000] ^= 0xff // before the cut: a splice would keep a's byte there
	modTime := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		first, then version // served before the cut, and after it
		ignoreIf    bool    // the source honours Range but not If-Range
		want        []byte
		wantRange   []string // requests' Range headers
		wantIfRange []string
	}{
		{"strong ETag, unchanged", version{a, `"a"`, time.Time{}}, version{a, `"a"`, time.Time{}}, false,
			a, []string{"", "bytes=100000-"}, []string{"", `"a"`}},
		{"Last-Modified, unchanged", version{a, "", modTime}, version{a, "", modTime}, false,
			a, []string{"", "bytes=100000-"}, []string{"", modTime.Format(http.TimeFormat)}},
		{"changed upstream: If-Range fails, the whole new file comes", version{a, `"a"`, time.Time{}}, version{b, `"b"`, time.Time{}}, false,
			b, []string{"", "bytes=100000-"}, []string{"", `"a"`}},
		{"changed upstream, If-Range ignored: the new ETag tells", version{a, `"a"`, time.Time{}}, version{b, `"b"`, time.Time{}}, true,
			b, []string{"", "bytes=100000-", ""}, []string{"", `"a"`, ""}},
		{"no validator: start over", version{a, "", time.Time{}}, version{b, "", time.Time{}}, false,
			b, []string{"", ""}, []string{"", ""}},
		{"weak ETag only: start over", version{a, `W/"a"`, time.Time{}}, version{b, `W/"b"`, time.Time{}}, false,
			b, []string{"", ""}, []string{"", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var ranges, ifRanges []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				ranges, ifRanges = append(ranges, r.Header.Get("Range")), append(ifRanges, r.Header.Get("If-Range"))
				first := len(ranges) == 1
				mu.Unlock()
				if first {
					tc.first.setHeaders(w.Header())
					w.Header().Set("Content-Length", strconv.Itoa(len(tc.first.data)))
					w.WriteHeader(http.StatusOK)
					w.Write(tc.first.data[:len(tc.first.data)/2])
					w.(http.Flusher).Flush()
					conn, _, err := w.(http.Hijacker).Hijack()
					if assert.NoError(t, err) {
						conn.Close()
					}
					return
				}
				if tc.ignoreIf {
					r.Header.Del("If-Range")
				}
				tc.then.setHeaders(w.Header())
				http.ServeContent(w, r, "model.bin", tc.then.modTime, bytes.NewReader(tc.then.data))
			}))
			defer srv.Close()
			p := testPuller(t, srv)
			m := testModel(srv.URL, nil, false) // trusted on first use
			pullAndCheck(t, p, m, tc.want)
			entries, err := p.readLock()
			require.NoError(t, err)
			assert.Equal(t, sum(tc.want), entries[lockKey(m, m.Files[0])].SHA256, "the lock file records what was pulled")
			_, err = os.Stat(filepath.Join(Path(p.Dir, m), "sub", "model.bin.part.meta"))
			assert.ErrorIs(t, err, os.ErrNotExist, "validator left behind")
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.wantRange, ranges, "requests' Range headers")
			assert.Equal(t, tc.wantIfRange, ifRanges, "requests' If-Range headers")
		})
	}
}

// endless answers with a chunked body that does not end (as far as a
// pull that keeps to the expected size can tell: it stops at 256 MiB, so
// that a pull that does not cannot fill the disk), and counts requests.
func endless(count *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		chunk := testContent(32 << 10)
		for sent := 0; sent < 256<<20 && r.Context().Err() == nil; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// A source that sends more than the file holds (the manifest's size, or
// the lock file's) is cut off there and refused, without a retry; one
// that announces more, or more than any file of unknown size may have, is
// refused before its body is read.
func TestPullRefusesMoreThanExpected(t *testing.T) {
	const size = 100_000
	for _, tc := range []struct {
		name    string
		length  int64  // the Content-Length announced; 0 for an endless chunked body
		sizeIn  string // "manifest" or "lock" (file); "" for nowhere
		wantErr string
	}{
		{"endless body, size in the manifest", 0, "manifest", "sent more than the 100000 bytes expected"},
		{"endless body, size in the lock file", 0, "lock", "sent more than the 100000 bytes expected"},
		{"announced larger than the manifest's size", size + 1, "manifest", "announced a size of 100001 bytes, more than the 100000 bytes expected"},
		{"announced larger than any file of unknown size", 9 << 30, "", "announced a size of 9663676416 bytes, more than the 8.0 GiB allowed a file of unknown size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			handler := endless(&n)
			if tc.length > 0 {
				handler = func(w http.ResponseWriter, r *http.Request) {
					n.Add(1)
					w.Header().Set("Content-Length", strconv.FormatInt(tc.length, 10))
					w.WriteHeader(http.StatusOK)
					w.Write(testContent(size)) // then the connection ends short
				}
			}
			srv := httptest.NewServer(handler)
			defer srv.Close()
			p := testPuller(t, srv)
			m := testModel(srv.URL, nil, false)
			switch tc.sizeIn {
			case "manifest":
				m.Files[0].Size = size
			case "lock":
				require.NoError(t, p.record(testCtx(t), lockKey(m, m.Files[0]), lockEntry{SHA256: sum(nil), Size: size}))
			}
			path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
			var largest int64 // the .part's size at each progress report
			p.Progress = func(Progress) {
				if fi, err := os.Stat(path + ".part"); err == nil {
					largest = max(largest, fi.Size())
				}
			}
			start := time.Now()
			err := p.Pull(testCtx(t), m)
			require.Error(t, err)
			assert.Less(t, time.Since(start), 2*time.Second, "took")
			assert.LessOrEqual(t, largest, int64(size), "the .part grew past the size")
			for _, want := range []string{tc.wantErr, srv.URL + "/files/model.bin", "model test-model file sub/model.bin", "refusing this source"} {
				assert.ErrorContains(t, err, want)
			}
			assert.Equal(t, int32(1), n.Load(), "requests: a source that sends too much is not tried again")
			for _, f := range []string{path, path + ".part", path + ".part.meta"} {
				_, err := os.Stat(f)
				assert.ErrorIs(t, err, os.ErrNotExist, "%s is left", f)
			}
		})
	}
}

func TestPullServerIgnoresRange(t *testing.T) {
	data := testContent(50_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(data) // 200 with the whole file, whatever the Range
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	dir := filepath.Join(Path(p.Dir, m), "sub")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "model.bin.part"), []byte("garbage from elsewhere"), 0o644)
	pullAndCheck(t, p, m, data)
}

func TestPullSHA256Mismatch(t *testing.T) {
	data := testContent(10_000)
	srv := serve(t, data, nil)
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	want := sum([]byte("something else"))
	m.Files[0].SHA256 = want
	err := p.Pull(testCtx(t), m)
	require.Error(t, err)
	for _, s := range []string{"sha256", want, sum(data), "sub/model.bin", "pull again"} {
		assert.ErrorContains(t, err, s)
	}
	path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
	for _, f := range []string{path, path + ".part"} {
		_, err := os.Stat(f)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s exists after mismatch", f)
	}
}

func TestPullSizeMismatch(t *testing.T) {
	data := testContent(10_000)
	srv := serve(t, data, nil)
	for _, size := range []int64{9_000, 11_000} {
		p := testPuller(t, srv)
		m := testModel(srv.URL, data, true)
		m.Files[0].Size = size
		err := p.Pull(testCtx(t), m)
		require.ErrorContains(t, err, "size", "size %d", size)
		require.ErrorContains(t, err, "10000", "size %d", size)
		path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
		_, err = os.Stat(path)
		assert.ErrorIs(t, err, os.ErrNotExist, "size %d: file installed", size)
	}
}

func TestPull404NoRetry(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	p := &Puller{Dir: t.TempDir(), Client: srv.Client()} // default 4 retries, 1s backoff
	m := testModel(srv.URL, []byte("x"), true)
	start := time.Now()
	err := p.Pull(testCtx(t), m)
	require.Error(t, err)
	assert.LessOrEqual(t, time.Since(start), 900*time.Millisecond, "took")
	assert.Equal(t, int32(1), n.Load(), "requests")
	for _, s := range []string{"404", srv.URL + "/files/model.bin", "test-model"} {
		assert.ErrorContains(t, err, s)
	}
}

func TestPullStall(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	p := &Puller{Dir: t.TempDir(), Client: srv.Client(), StallTimeout: 200 * time.Millisecond, Retries: 1, Backoff: 10 * time.Millisecond}
	m := testModel(srv.URL, nil, false)
	start := time.Now()
	err := p.Pull(testCtx(t), m)
	el := time.Since(start)
	require.ErrorContains(t, err, "stall")
	assert.LessOrEqual(t, el, 2*time.Second, "took")
	assert.Equal(t, int32(2), n.Load(), "requests, want 2 (1 retry)")
}

// A server that trickles a byte at a time never goes a whole stall
// timeout without sending, and would take weeks over a model: under the
// least rate over a stall timeout is a stall too.
func TestPullTrickleIsAStall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	p := &Puller{Dir: t.TempDir(), Client: srv.Client(), StallTimeout: 200 * time.Millisecond, MinRate: 1000, Retries: -1}
	start := time.Now()
	err := p.Pull(testCtx(t), testModel(srv.URL, nil, false))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "under the 200 needed to go on")
	assert.Less(t, time.Since(start), 5*time.Second, "a trickle at 50 B/s would take 2000 s")
}

// A source that cannot serve costs one attempt, not five: a mirror that
// is not http (said before any file), a redirect to file://, a server
// that takes the connection and never answers (each attempt the whole
// wait: 330 s a file).
func TestPullGivesUpOnWhatCannotServe(t *testing.T) {
	var n atomic.Int32
	silent := silentServer(t, &n)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	}))
	defer redirect.Close()
	for _, tc := range []struct {
		name, mirror string
		srv          *httptest.Server
		want         string
		requests     int32
	}{
		{"ftp mirror", "ftp://mirror.local/models", redirect, `mirror "ftp://mirror.local/models": scheme "ftp" is not supported`, 0},
		{"redirect to a file", "", redirect, "redirected to file:///etc/passwd, which is not http or https", 1},
		{"a server that never answers", "", silent, "sent no response in 200ms", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n.Store(0)
			p := &Puller{Dir: t.TempDir(), Client: tc.srv.Client(), Mirror: tc.mirror, StallTimeout: 200 * time.Millisecond, Backoff: 10 * time.Millisecond}
			err := p.Pull(testCtx(t), testModel(tc.srv.URL, nil, false))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.requests, n.Load(), "requests")
		})
	}
}

// A host that sent no response is not asked again in the same pull: a
// second model from it fails at once instead of after another wait.
func TestSilentHostIsAskedOnce(t *testing.T) {
	var n atomic.Int32
	silent := silentServer(t, &n)
	p := &Puller{Dir: t.TempDir(), Client: silent.Client(), StallTimeout: 200 * time.Millisecond, Backoff: 10 * time.Millisecond}
	require.Error(t, p.Pull(testCtx(t), testModel(silent.URL, nil, false)))
	other := testModel(silent.URL, nil, false)
	other.Name = "other-model"
	err := p.Pull(testCtx(t), other)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sent no response to an earlier request of this pull")
	assert.Equal(t, int32(1), n.Load(), "requests: the second model asked nothing")
}

// silentServer takes each request, counted in n, and never answers it.
// When t ends the process forgets it was silent: a later test's server may
// get its port.
func silentServer(t *testing.T, n *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		silentHosts.Delete(srv.Listener.Addr().String())
	})
	return srv
}

func TestPullRetries5xx(t *testing.T) {
	data := testContent(5_000)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	pullAndCheck(t, p, m, data)
	assert.Equal(t, int32(3), n.Load(), "requests")
}

func TestPullSourcesInOrder(t *testing.T) {
	data := testContent(5_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/gone/") {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	p.NPMRegistry = srv.URL + "/gone"
	m.Files[0].Sources = []string{"npm:pkg@1#x", srv.URL + "/gone/model.bin", srv.URL + "/ok/model.bin"}
	pullAndCheck(t, p, m, data)
}

func TestPullConcurrent(t *testing.T) {
	data := testContent(400_000)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", "400000")
		for i := 0; i < len(data); i += 50_000 { // slow enough to overlap
			w.Write(data[i : i+50_000])
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	m := testModel(srv.URL, data, true)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &Puller{Dir: dir, Client: srv.Client(), Backoff: 10 * time.Millisecond}
			errs[i] = p.Pull(testCtx(t), m)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "puller %d", i)
	}
	checkFile(t, &Puller{Dir: dir}, m, data)
	assert.Equal(t, int32(1), n.Load(), "downloads")
}

func TestPullMirror(t *testing.T) {
	data := testContent(5_000)
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	p.Mirror = srv.URL
	m := testModel("https://models.invalid", data, true)
	pullAndCheck(t, p, m, data)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"/files/model.bin"}, paths, "mirror saw")
	q := &Puller{Mirror: "http://m.local:8080/cache/"}
	u, err := q.sourceURL("https://huggingface.co/a/b.onnx?x=1")
	assert.NoError(t, err, "sourceURL")
	assert.Equal(t, "http://m.local:8080/cache/a/b.onnx?x=1", u, "sourceURL")
}

func TestPullLockFile(t *testing.T) {
	data := testContent(20_000)
	var n atomic.Int32
	var serveOther atomic.Bool
	other := testContent(20_001)[:20_000]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		body := data
		if serveOther.Load() {
			body = other
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, false) // no size, no sha256 in the manifest
	st, err := p.Verify(m)
	require.NoError(t, err, "before pull")
	require.False(t, st[0].Present, "before pull: %+v", st)
	require.False(t, st[0].Verified, "before pull: %+v", st)
	require.NotEmpty(t, st[0].Problem, "before pull: %+v", st)
	pullAndCheck(t, p, m, data)
	b, err := os.ReadFile(filepath.Join(p.Dir, "models.lock"))
	require.NoError(t, err)
	var lock map[string]struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	require.NoError(t, json.Unmarshal(b, &lock))
	e := lock["test-model/sub/model.bin"]
	require.Equal(t, sum(data), e.SHA256, "lock file: %s", b)
	require.Equal(t, int64(len(data)), e.Size, "lock file: %s", b)
	st, err = p.Verify(m)
	require.NoError(t, err, "after pull")
	require.True(t, st[0].Verified, "after pull: %+v", st)

	// Tamper with the file: Verify fails against the recorded hash.
	path := filepath.Join(Path(p.Dir, m), "sub", "model.bin")
	tampered := bytes.Clone(data)
	tampered[100] ^= 0xff
	os.WriteFile(path, tampered, 0o644)
	st, err = p.Verify(m)
	require.NoError(t, err, "tampered")
	require.False(t, st[0].Verified, "tampered: %+v", st)
	require.True(t, st[0].Present, "tampered: %+v", st)
	require.Contains(t, st[0].Problem, "sha256", "tampered: %+v", st)

	// Pull repairs it from the source, checked against the lock file.
	pullAndCheck(t, p, m, data)

	// A source that now serves different bytes is rejected.
	os.Remove(path)
	serveOther.Store(true)
	err = p.Pull(testCtx(t), m)
	require.ErrorContains(t, err, sum(data), "changed source")
}

// A file the manifest gives no sha256 for is recorded in the lock file
// only once it reads as its format: an error page, a truncated body or a
// config that does not name the package's files is removed, and nothing
// is recorded for it.
func TestPullRecordsOnlyFilesOfTheirFormat(t *testing.T) {
	onnx, err := os.ReadFile(filepath.Join("..", "turn", "smartturn", "testdata", "smart_turn_tiny.onnx"))
	require.NoError(t, err)
	page := []byte("<!doctype html><html><body>Sign in to continue</body></html>")
	for _, tc := range []struct {
		name, file string
		format     string
		body       []byte
		wantErr    string // "" when the file is recorded
	}{
		{"an ONNX model", "m.onnx", "", onnx, ""},
		{"an error page for an ONNX model", "m.onnx", "", page, "not an ONNX model"},
		{"a truncated ONNX model", "m.onnx", "", onnx[:len(onnx)/2], "not an ONNX model"},
		{"an empty ONNX model", "m.onnx", "", nil, "not an ONNX model: no IR version or no graph"},
		{"an error page for an MNN config", "config.json", FormatMNNLLM, page, "invalid character '<'"},
		{"an MNN config that names a file outside", "config.json", FormatMNNLLM, []byte(`{"llm_weight": "../../w"}`), "llm_weight ../../w is not a file in the model's directory"},
		{"an error page for another file", "tokens.txt", "", page, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := servePackage(t, "/m/", map[string][]byte{tc.file: tc.body})
			p := testPuller(t, srv)
			m := Model{Name: "m", Format: tc.format, Files: []File{{Path: tc.file, Sources: []string{srv.URL + "/m/" + tc.file}}}}
			path := filepath.Join(Path(p.Dir, m), tc.file)
			err := p.Pull(testCtx(t), m)
			entries, lockErr := p.readLock()
			require.NoError(t, lockErr)
			entry, recorded := entries[lockKey(m, m.Files[0])]
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, lockEntry{SHA256: sum(tc.body), Size: int64(len(tc.body))}, entry)
				return
			}
			require.Error(t, err)
			for _, want := range []string{tc.wantErr, "model m file " + tc.file, "not recorded"} {
				assert.ErrorContains(t, err, want)
			}
			assert.False(t, recorded, "recorded: %+v", entry)
			for _, f := range []string{path, path + ".part", path + ".part.meta"} {
				_, err := os.Stat(f)
				assert.ErrorIs(t, err, os.ErrNotExist, "%s is left", f)
			}
		})
	}
}

// TestPullTwoProcesses pulls the same file from this process and from a
// child (this test binary, re-run as a helper): one download, one file.
func TestPullTwoProcesses(t *testing.T) {
	if os.Getenv("ASSETS_PULL_HELPER_DIR") != "" {
		return
	}
	data := testContent(300_000)
	var n atomic.Int32
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			close(started)
		}
		w.Header().Set("Content-Length", "300000")
		for i := 0; i < len(data); i += 50_000 {
			w.Write(data[i : i+50_000])
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPullHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ASSETS_PULL_HELPER_DIR="+dir, "ASSETS_PULL_HELPER_URL="+srv.URL)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	// Start only once the child is downloading, so this pull waits on
	// the child's lock and then finds the finished file.
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		require.FailNow(t, "helper made no request", "%s", out.String())
	}
	m := testModel(srv.URL, data, true)
	p := &Puller{Dir: dir, Backoff: 10 * time.Millisecond}
	err := p.Pull(testCtx(t), m)
	werr := cmd.Wait()
	require.NoError(t, werr, "helper:\n%s", out.String())
	require.NoError(t, err)
	checkFile(t, p, m, data)
	assert.Equal(t, int32(1), n.Load(), "downloads")
}

func TestPullHelperProcess(t *testing.T) {
	dir := os.Getenv("ASSETS_PULL_HELPER_DIR")
	if dir == "" {
		t.Skip("only run as a helper by TestPullTwoProcesses")
	}
	data := testContent(300_000)
	m := testModel(os.Getenv("ASSETS_PULL_HELPER_URL"), data, true)
	p := &Puller{Dir: dir, Backoff: 10 * time.Millisecond}
	require.NoError(t, p.Pull(testCtx(t), m))
}

// Installed finds a model where the agent loads it from: the cache when
// every file is there, else the model's third_party/ folder, checked
// against the manifest.
func TestInstalledFallsBackToThirdParty(t *testing.T) {
	root, cache := t.TempDir(), t.TempDir()
	t.Chdir(root)
	data := []byte("model bytes")
	m := Model{Name: "m", Local: "models", Files: []File{{Path: "m.onnx", Size: int64(len(data)), SHA256: sum(data)}}}
	p := &Puller{Dir: cache}

	dir, files, err := p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, Path(cache, m), dir, "nowhere: the cache, where pull puts it")
	assert.False(t, files[0].Present)

	local := filepath.Join(root, LocalDir, "models")
	require.NoError(t, os.MkdirAll(local, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(local, "m.onnx"), data, 0o644))
	// The empty folder a failed pull left in the cache is no model.
	require.NoError(t, os.MkdirAll(Path(cache, m), 0o755))
	dir, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, local, dir)
	assert.True(t, files[0].Verified)

	require.NoError(t, os.WriteFile(filepath.Join(local, "m.onnx"), data[:4], 0o644))
	_, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.True(t, files[0].Present)
	assert.False(t, files[0].Verified, "a damaged copy is found, and not verified")

	require.NoError(t, os.MkdirAll(Path(cache, m), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(Path(cache, m), "m.onnx"), data, 0o644))
	dir, files, err = p.Installed(m)
	require.NoError(t, err)
	assert.Equal(t, Path(cache, m), dir, "the cache comes first")
	assert.True(t, files[0].Verified)
}

// closedPort is the URL of a local port nothing listens on: connecting
// to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

// A source that cannot be connected to (no such host, connection refused)
// is not retried: a pull none of whose sources can be reached ends at
// once (not after the retries' 15 s of back-off per source) with an
// UnreachableError saying why, each reason once, and leaves no folder
// behind. A source that answers is still retried and used.
func TestPullUnreachable(t *testing.T) {
	refused := closedPort(t)
	data := testContent(5_000)
	var busy atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/busy/") {
			busy.Add(1)
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name    string
		sources []string
		mirror  string
		hosts   []string // the UnreachableError's; nil for another error, or none
		retried bool
	}{
		{name: "refused", sources: []string{refused + "/a/model.bin", refused + "/b/model.bin"},
			hosts: []string{strings.TrimPrefix(refused, "http://") + ": connection refused"}},
		{name: "no such host", sources: []string{"http://no-such-host.invalid/model.bin"},
			hosts: []string{"no-such-host.invalid: "}},
		{name: "both", sources: []string{refused + "/model.bin", "http://no-such-host.invalid/model.bin"},
			hosts: []string{strings.TrimPrefix(refused, "http://") + ": connection refused", "no-such-host.invalid: "}},
		{name: "a mirror that refuses", sources: []string{srv.URL + "/model.bin", "https://example.invalid/model.bin"}, mirror: refused,
			hosts: []string{strings.TrimPrefix(refused, "http://") + ": connection refused"}},
		{name: "one source answers, busy: not unreachable", sources: []string{refused + "/model.bin", srv.URL + "/busy/model.bin"},
			retried: true},
		{name: "one source answers with the file", sources: []string{"http://no-such-host.invalid/model.bin", srv.URL + "/ok/model.bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy.Store(0)
			// The default back-off (1 s, doubled): a retry would show.
			p := &Puller{Dir: t.TempDir(), Client: srv.Client(), Mirror: tc.mirror, Retries: 1}
			var retries atomic.Int32
			p.Retrying = func(string, string, int, error, time.Duration) { retries.Add(1) }
			m := testModel(srv.URL, data, true)
			m.Files[0].Sources = tc.sources
			start := time.Now()
			err := p.Pull(testCtx(t), m)
			took := time.Since(start)
			var u *UnreachableError
			switch {
			case tc.hosts != nil:
				require.ErrorAs(t, err, &u)
				require.Len(t, u.Hosts, len(tc.hosts), "%q", u.Hosts)
				for i, want := range tc.hosts {
					assert.True(t, strings.HasPrefix(u.Hosts[i], want), "%q, want %q", u.Hosts[i], want)
				}
				assert.Equal(t, "test-model", u.Model)
				assert.Equal(t, "sub/model.bin", u.File)
				assert.Less(t, took, 900*time.Millisecond, "no retry")
				assert.Zero(t, retries.Load(), "retries")
				assertEmpty(t, p.Dir)
			case tc.retried:
				require.Error(t, err)
				assert.NotErrorAs(t, err, &u)
				assert.Equal(t, int32(2), busy.Load(), "the source that answers is retried")
			default:
				require.NoError(t, err)
				checkFile(t, p, m, data)
			}
		})
	}
}

// assertEmpty checks that dir holds nothing: no file, no folder.
func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "left behind in %s", dir)
}

// A pull that waited for a model folder's lock while a failed pull
// removed the folder makes it again and locks that one, not the folder
// that is gone.
func TestLockModelDirAfterTheFolderWentAway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	unlock, err := lockModelDir(testCtx(t), dir, dir)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		unlock, err := lockModelDir(testCtx(t), dir, dir)
		if err == nil {
			// Held: no one else gets the folder's lock now.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err = lockDir(ctx, dir)
			if err == nil {
				err = errors.New("locked twice")
			} else if errors.Is(err, context.DeadlineExceeded) {
				err = nil
			}
			unlock()
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond) // the other is waiting on the lock
	require.NoError(t, os.Remove(dir))
	unlock()
	require.NoError(t, <-got)
	assert.DirExists(t, dir)
}

// A source that keeps failing is retried, each retry reported, and the
// failed pull leaves no empty partial file, no lock file and no folder
// behind: an empty model folder would read as a model pulled in part.
func TestFailedPullReportsRetriesAndLeavesNoLitter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "try later", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	p := testPuller(t, srv)
	p.Retries = 2
	var retries []int
	p.Retrying = func(model, file string, attempt int, err error, wait time.Duration) {
		assert.Equal(t, "test-model", model)
		assert.Equal(t, "sub/model.bin", file)
		assert.Positive(t, wait)
		retries = append(retries, attempt)
	}
	m := testModel(srv.URL, []byte("x"), true)
	require.Error(t, p.Pull(testCtx(t), m))
	assert.Equal(t, []int{1, 2}, retries)
	assertEmpty(t, p.Dir)
}
