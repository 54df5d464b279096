package assets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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

func TestPullResumesAfterCut(t *testing.T) {
	data := testContent(200_000)
	half := len(data) / 2
	var mu sync.Mutex
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		if first {
			w.Header().Set("Content-Length", "200000")
			w.WriteHeader(http.StatusOK)
			w.Write(data[:half])
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if !assert.NoError(t, err) {
				return
			}
			conn.Close()
			return
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	pullAndCheck(t, p, m, data)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"", "bytes=100000-"}, ranges, "requests' Range headers")
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

// A source that keeps failing is retried, each retry reported, and the
// failed pull leaves no empty partial file and no lock file behind.
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
	err := filepath.WalkDir(p.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil {
			assert.True(t, d.IsDir(), "left behind: %s", path)
		}
		return err
	})
	require.NoError(t, err)
}
