package assets

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// maxUnknownSize caps a file whose size neither the manifest nor the lock
// file gives (8 GiB, several times the largest model file the manifest
// lists), so that a source that never stops sending cannot fill the disk.
// A larger file needs its size in the manifest.
const maxUnknownSize = 8 << 30

// fetch makes one request for u, appending to part from its size, which
// it holds to size (or maxUnknownSize where size is 0).
func (p *Puller) fetch(ctx context.Context, m Model, f File, u, part string, size int64) error {
	t := &transfer{p: p, m: m, f: f, u: u, shown: Redacted(u), part: part, size: size, limit: size}
	if t.limit <= 0 {
		t.limit = maxUnknownSize
	}
	if err := t.open(); err != nil {
		return err
	}
	defer t.out.Close()
	if size > 0 && t.off == size {
		return nil // complete already; the caller verifies it
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := p.stall()
	timer := time.AfterFunc(stall, func() { cancel(errStall) })
	defer timer.Stop()

	resp, err := t.request(ctx, stall)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := t.accept(resp); err != nil {
		return err
	}
	return t.receive(ctx, resp, timer, stall)
}

// transfer is one attempt of fetch: what it asks u for, and where the
// bytes go.
type transfer struct {
	p       *Puller
	m       Model
	f       File
	u, part string
	// shown is u as messages give it, without its password.
	shown string
	// limit is size, or maxUnknownSize where size is 0.
	size, limit int64
	out         *os.File
	// off is where the response's bytes go in out; meta, what is known
	// of what out holds before off.
	off  int64
	meta partMeta
}

// open opens part to append to. A partial file is resumed only on the
// condition that the source still serves the file it came from
// (If-Range): one without a validator to say so starts over, rather than
// splice two versions.
func (t *transfer) open() error {
	out, err := os.OpenFile(t.part, os.O_RDWR|os.O_CREATE, 0o666) // less the umask
	if err != nil {
		return permanentError{err}
	}
	off, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		out.Close()
		return permanentError{err}
	}
	t.meta = readMeta(t.part)
	if off > t.limit || (off > 0 && t.meta.Validator == "") {
		if err := out.Truncate(0); err != nil {
			out.Close()
			return permanentError{err}
		}
		off, _ = out.Seek(0, io.SeekStart)
	}
	t.out, t.off = out, off
	return nil
}

// request asks for u from off on, if the source is still what part holds.
func (t *transfer) request(ctx context.Context, stall time.Duration) (*http.Response, error) {
	var handshakeFailed atomic.Bool
	trace := &httptrace.ClientTrace{TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
		handshakeFailed.Store(err != nil)
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, t.u, nil)
	if err != nil {
		// Not err: its URL would show the password.
		return nil, permanentError{fmt.Errorf("%s: no request can be made for it", t.shown)}
	}
	if silentHost(req.URL.Host) {
		return nil, permanentError{fmt.Errorf("%s: %s sent no response to an earlier request of this pull", t.shown, req.URL.Host)}
	}
	if t.off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(t.off, 10)+"-")
		req.Header.Set("If-Range", t.meta.Validator)
	}
	resp, err := t.p.client().Do(req)
	if err != nil {
		if context.Cause(ctx) == errStall {
			// A server that takes the connection and never answers is
			// not asked again: each attempt would cost the whole wait.
			silentHosts.Store(req.URL.Host, time.Now())
			return nil, permanentError{fmt.Errorf("%s: the server took the connection but sent no response in %v", t.shown, stall)}
		}
		if why := t.p.notTLS(err, handshakeFailed.Load()); why != "" {
			return nil, permanentError{fmt.Errorf("%s: %s", t.shown, why)}
		}
		return nil, fmt.Errorf("%s: %w", t.shown, err)
	}
	return resp, nil
}

// accept takes resp's status, and where its bytes go, or says why it
// cannot (permanentError where asking again would not help); a response
// that makes part's bytes useless empties part.
func (t *transfer) accept(resp *http.Response) error {
	u, m, f, off := t.shown, t.m, t.f, t.off
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			t.out.Truncate(0)
			return fmt.Errorf("%s: range response starts at %q, wanted %d; restarting", u, resp.Header.Get("Content-Range"), off)
		}
		// A server that honours Range but not If-Range still tells
		// by its validator that the file changed; one that keeps the
		// validator of a file whose content changed, by its length.
		if v := validator(resp.Header); v != "" && v != t.meta.Validator {
			t.out.Truncate(0)
			return fmt.Errorf("%s: the file changed (validator %s, was %s); restarting", u, v, t.meta.Validator)
		}
		if was := cmp.Or(t.size, t.meta.Total); total >= 0 && was > 0 && total != was {
			t.out.Truncate(0)
			return fmt.Errorf("%s: the file changed (%d bytes, was %d, under the same validator %s); restarting", u, total, was, t.meta.Validator)
		}
	case resp.StatusCode == http.StatusOK:
		if err := t.restart(partMeta{Validator: validator(resp.Header), Total: max(resp.ContentLength, 0)}); err != nil {
			return permanentError{err}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		t.out.Truncate(0)
		return fmt.Errorf("%s: %s for range from %d; restarting", u, resp.Status, off)
	case resp.StatusCode == http.StatusNotFound:
		return permanentError{fmt.Errorf("%s: not found (404) for model %s file %s", u, m.Name, f.Path)}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("%s: %s", u, resp.Status)
	default:
		return permanentError{fmt.Errorf("%s: %s for model %s file %s", u, resp.Status, m.Name, f.Path)}
	}
	if resp.ContentLength >= 0 && t.off+resp.ContentLength > t.limit {
		t.out.Truncate(0)
		return tooMuch(u, m, f, t.size, fmt.Sprintf("announced a size of %d bytes,", t.off+resp.ContentLength))
	}
	return nil
}

// restart makes part take a whole file from zero, of which meta is
// known: the server ignored Range, or the file changed since part began
// (If-Range).
func (t *transfer) restart(meta partMeta) error {
	if t.off > 0 {
		if err := t.out.Truncate(0); err != nil {
			return err
		}
		off, err := t.out.Seek(0, io.SeekStart)
		if err != nil {
			return err
		}
		t.off = off
	}
	return writeMeta(t.part, meta)
}

// receive appends resp's body to part, reporting progress, until the
// body ends, it holds more than the file can, or the source sends less
// than stallBytes in a stall (the timer's, which cancels ctx).
func (t *transfer) receive(ctx context.Context, resp *http.Response, timer *time.Timer, stall time.Duration) error {
	u := t.shown
	// sent is where this response says the file ends; the progress total
	// is the manifest's size when known.
	sent := int64(-1)
	if resp.ContentLength >= 0 {
		sent = t.off + resp.ContentLength
	}
	total := t.size
	if total == 0 && sent > 0 {
		total = sent
	}
	done := t.off
	pr := progressReporter{to: t.p.Progress, model: t.m.Name, file: t.f.Path, off: t.off, total: total, start: time.Now()}
	pr.tell(done, true)
	buf := make([]byte, 64<<10)
	// sinceReset is what came since the stall timer was last reset: it is
	// reset only once a window's worth came.
	enough, sinceReset := t.p.stallBytes(), int64(0)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if sinceReset += int64(n); sinceReset >= enough {
				timer.Reset(stall)
				sinceReset = 0
			}
			if done+int64(n) > t.limit {
				t.out.Truncate(0)
				return tooMuch(u, t.m, t.f, t.size, "sent")
			}
			if _, err := t.out.Write(buf[:n]); err != nil {
				return permanentError{err}
			}
			done += int64(n)
			pr.tell(done, false)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if context.Cause(ctx) == errStall && sinceReset > 0 {
				return fmt.Errorf("%s: stalled: %d bytes in %v after %d bytes, under the %d needed to go on", u, sinceReset, stall, done-sinceReset, enough)
			}
			if context.Cause(ctx) == errStall {
				return fmt.Errorf("%s: stalled: no data for %v after %d bytes", u, stall, done)
			}
			return fmt.Errorf("%s: after %d bytes: %w", u, done, rerr)
		}
	}
	pr.tell(done, true)
	if sent >= 0 && done < sent {
		return fmt.Errorf("%s: connection ended after %d of %d bytes", u, done, sent)
	}
	if err := t.out.Sync(); err != nil {
		return permanentError{err}
	}
	return nil
}

// progressReporter tells report of one response's progress, at most
// every 100ms but where forced.
type progressReporter struct {
	to          func(Progress) // nil: none told
	model, file string
	// off is where the response began; the rate is of what came since.
	off, total  int64
	start, last time.Time
}

func (r *progressReporter) tell(done int64, force bool) {
	if r.to == nil {
		return
	}
	now := time.Now()
	if !force && now.Sub(r.last) < 100*time.Millisecond {
		return
	}
	r.last = now
	pr := Progress{Model: r.model, File: r.file, Done: done, Total: r.total}
	if el := now.Sub(r.start).Seconds(); el > 0 {
		pr.Rate = float64(done-r.off) / el
	}
	if pr.Rate > 0 && r.total > done {
		pr.ETA = time.Duration(float64(r.total-done) / pr.Rate * float64(time.Second))
	}
	r.to(pr)
}

// tooMuch is the error for a source that sends, or says it will send (how),
// more than the file holds.
func tooMuch(u string, m Model, f File, size int64, how string) error {
	want := fmt.Sprintf("the %d bytes expected", size)
	if size <= 0 {
		want = "the " + FormatSize(maxUnknownSize) + " allowed a file of unknown size"
	}
	return permanentError{fmt.Errorf("%s: %s more than %s for model %s file %s; refusing this source", u, how, want, m.Name, f.Path)}
}
