package assets

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
