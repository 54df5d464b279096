package assets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// A pull that waited for a model folder's lock while a failed pull
// removed the folder makes it again and locks that one, not the folder
// that is gone.
func TestLockModelDirAfterTheFolderWentAway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	unlock, err := lockModelDir(testCtx(t), dir, dir, nil)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		unlock, err := lockModelDir(testCtx(t), dir, dir, nil)
		if err == nil {
			// Held: no one else gets the folder's lock now.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_, err = lockDir(ctx, dir, nil)
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
