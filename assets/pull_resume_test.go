package assets

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	longer := append(bytes.Clone(b), testContent(100_000)...)
	shorter := b[:150_000]
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
		// A server that keeps the ETag of a file whose content changed
		// tells by the total its range response gives: the file is
		// fetched again, not spliced.
		{"the same ETag, a longer file", version{a, `"a"`, time.Time{}}, version{longer, `"a"`, time.Time{}}, false,
			longer, []string{"", "bytes=100000-", ""}, []string{"", `"a"`, ""}},
		{"the same ETag, a shorter file", version{a, `"a"`, time.Time{}}, version{shorter, `"a"`, time.Time{}}, false,
			shorter, []string{"", "bytes=100000-", ""}, []string{"", `"a"`, ""}},
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

func TestContentRange(t *testing.T) {
	for _, tc := range []struct {
		h            string
		start, total int64
		ok           bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 100-199/*", 100, -1, true},
		{"bytes 100-199", 0, 0, false},
		{"bytes x-199/200", 0, 0, false},
		{"bytes 100-199/x", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, total, ok := contentRange(tc.h)
		assert.Equal(t, tc.ok, ok, tc.h)
		if tc.ok {
			assert.Equal(t, [2]int64{tc.start, tc.total}, [2]int64{start, total}, tc.h)
		}
	}
}
