package assets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
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
