package assets

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mirror's credentials (http://user:secret@host/) go with every request,
// and no message shows the password: not a failed request's, a retry's,
// an unreachable mirror's, nor a mirror refused before any download.
func TestPullMirrorCredentials(t *testing.T) {
	data := testContent(5_000)
	var busy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "user" || pass != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="models"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		if busy.CompareAndSwap(true, false) {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		http.ServeContent(w, r, "model.bin", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name, mirror string
		busy         bool
		want         string // in the error; "" for a pull that succeeds
		secret       string // what no message may show
	}{
		{name: "authenticated", mirror: "http://user:secret@" + host + "/", secret: "secret"},
		{name: "authenticated after a retry", mirror: "http://user:secret@" + host + "/", busy: true, secret: "secret"},
		{name: "a wrong password", mirror: "http://user:wrong-pass@" + host + "/", want: "http://user:xxxxx@" + host + "/files/model.bin: 401 Unauthorized", secret: "wrong-pass"},
		{name: "an unreachable mirror", mirror: "http://user:secret@" + strings.TrimPrefix(closedPort(t), "http://"), want: "connection refused", secret: "secret"},
		{name: "a mirror of no download scheme", mirror: "ftp://user:secret@" + host, want: `mirror "ftp://user:xxxxx@` + host + `": scheme "ftp"`, secret: "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy.Store(tc.busy)
			p := testPuller(t, srv)
			p.Mirror = tc.mirror
			var retries []string
			p.Retrying = func(_, _ string, _ int, err error, _ time.Duration) { retries = append(retries, err.Error()) }
			m := testModel("https://models.invalid", data, true)
			err := p.Pull(testCtx(t), m)
			if tc.busy {
				require.Len(t, retries, 1, "retries")
				assert.Contains(t, retries[0], "http://user:xxxxx@"+host+"/files/model.bin: 503")
			}
			for _, msg := range retries {
				assert.NotContains(t, msg, tc.secret, "a retry's message")
			}
			if tc.want == "" {
				require.NoError(t, err)
				checkFile(t, p, m, data)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), tc.secret)
		})
	}
}

// A source's own credentials never go to a mirror; the mirror's replace
// them.
func TestMirrorCredentialsInTheSourceURL(t *testing.T) {
	for _, tc := range []struct{ mirror, src, want string }{
		{"http://user:secret@m.local:8080/cache/", "https://huggingface.co/a/b.onnx", "http://user:secret@m.local:8080/cache/a/b.onnx"},
		{"http://m.local/", "https://owner:token@huggingface.co/a", "http://m.local/a"},
		{"http://other:pw@m.local/", "https://owner:token@huggingface.co/a", "http://other:pw@m.local/a"},
	} {
		u, err := (&Puller{Mirror: tc.mirror}).sourceURL(tc.src)
		require.NoError(t, err)
		assert.Equal(t, tc.want, u)
	}
}

func TestRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:secret@host:8080/p": "http://user:xxxxx@host:8080/p",
		"http://user@host/":              "http://user@host/",
		"https://host/a?b=c":             "https://host/a?b=c",
		"http://user:se%zzt@host/":       "http://xxxxx@host/", // no URL: a bad escape
		"user:secret@host":               "xxxxx@host",         // no URL: no scheme
		"not a url":                      "not a url",
	} {
		assert.Equal(t, want, Redacted(in), in)
	}
}

// An https mirror that is a plain http server is said at once, not
// retried (four tries over 30 s said only "EOF"), whether it answers the
// TLS handshake in plain text or closes the connection; a source's
// closed handshake, which a network that drops connections also gives, is
// retried.
func TestPullHTTPSMirrorOnAPlainServer(t *testing.T) {
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	closer, conns := closingServer(t)
	plainHost := strings.TrimPrefix(plain.URL, "http://")
	for _, tc := range []struct {
		name, mirror, source string
		want                 string
		retries              int
		conns                int32 // to closer
	}{
		{name: "answers in plain text", mirror: "https://" + plainHost + "/models",
			want: "https://" + plainHost + "/models/files/model.bin: the server does not speak TLS (https): it answered the TLS handshake in plain text; " +
				"if the mirror serves plain HTTP, give it as http://" + plainHost + "/models"},
		{name: "closes the connection", mirror: "https://" + closer, conns: 1,
			want: "the server does not speak TLS (https): it closed the connection at the TLS handshake; if the mirror serves plain HTTP, give it as http://" + closer},
		{name: "a source that closes the connection", source: "https://" + closer + "/model.bin", retries: 1, conns: 2, want: "EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conns.Store(0)
			p := &Puller{Dir: t.TempDir(), Mirror: tc.mirror, Retries: 1, Backoff: 10 * time.Millisecond}
			var retries int
			p.Retrying = func(string, string, int, error, time.Duration) { retries++ }
			m := testModel("https://models.invalid", nil, false)
			if tc.source != "" {
				m.Files[0].Sources = []string{tc.source}
			}
			err := p.Pull(testCtx(t), m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.retries, retries, "retries")
			assert.Equal(t, tc.conns, conns.Load(), "connections")
		})
	}
}

// closingServer is the address of a server that reads what comes and
// closes the connection, as some plain servers do with a TLS handshake;
// conns counts its connections.
func closingServer(t *testing.T) (string, *atomic.Int32) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_, _ = c.Read(make([]byte, 4096))
			c.Close()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	return l.Addr().String(), &conns
}

// A pull that waits for another pull of the same model to let go of its
// folder says so (a second `models pull` waited without a word); one that
// need not wait says nothing.
func TestPullSaysItWaits(t *testing.T) {
	data := testContent(5_000)
	srv := serve(t, data, nil)
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	dir := Path(p.Dir, m)
	unlock, err := lockModelDir(testCtx(t), dir, dir, nil)
	require.NoError(t, err)

	waits := make(chan string, 4)
	p.Waiting = func(model, dir string) { waits <- model + " " + dir }
	done := make(chan error)
	go func() { done <- p.Pull(testCtx(t), m) }()
	select {
	case got := <-waits:
		assert.Equal(t, "test-model "+dir, got)
	case err := <-done:
		t.Fatalf("the pull did not wait: %v", err)
	}
	unlock()
	require.NoError(t, <-done)
	checkFile(t, p, m, data)
	assert.Empty(t, waits, "said once")

	require.NoError(t, p.Pull(context.Background(), m))
	assert.Empty(t, waits, "said with nothing to wait for")
}

// A pull stopped while it waits for another says what it waited for
// ("lock: context canceled" said nothing of it).
func TestStoppedPullSaysWhatItWaitedFor(t *testing.T) {
	data := testContent(5_000)
	srv := serve(t, data, nil)
	p := testPuller(t, srv)
	m := testModel(srv.URL, data, true)
	dir := Path(p.Dir, m)
	unlock, err := lockModelDir(testCtx(t), dir, dir, nil)
	require.NoError(t, err)
	defer unlock()
	ctx, cancel := context.WithCancel(testCtx(t))
	p.Waiting = func(string, string) { cancel() }
	err = p.Pull(ctx, m)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "stopped waiting for another process that holds "+dir)
}
