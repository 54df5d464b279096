package assets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Progress reports a file's download.
type Progress struct {
	Model, File string
	Done, Total int64         // bytes; Total 0 when unknown
	Rate        float64       // bytes/s in this attempt
	ETA         time.Duration // 0 when unknown
}

// Puller downloads models into Dir.
type Puller struct {
	Dir    string
	Client *http.Client // nil: http.DefaultClient
	// Mirror, when set (e.g. "http://mirror.local:8080"), replaces the
	// scheme and host of every source URL (a path in it is prefixed).
	Mirror string
	// NPMRegistry serves npm: sources: "" means DefaultNPMRegistry.
	NPMRegistry string
	// Retries per source after the first attempt: 0 means 4, negative none.
	Retries int
	// Backoff is the first retry delay, doubled each time: 0 means 1s.
	Backoff time.Duration
	// StallTimeout: no bytes for this long is an error: 0 means 30s.
	StallTimeout time.Duration
	// MinRate is the least a source must send, in bytes a second over
	// each StallTimeout, or the attempt ends as stalled: 0 means 1 KiB/s.
	// A server that trickles a byte at a time never stalls, and a model
	// at its pace would take weeks.
	MinRate  int64
	Progress func(Progress)
	// Retrying, if set, is told of each failed attempt that will be tried
	// again after wait, so a user watching knows the pull is not stuck.
	Retrying func(model, file string, attempt int, err error, wait time.Duration)
}

// silentHosts holds the hosts that took a connection and sent no response,
// and when: for silentFor their other files are not asked for, so a
// silent server costs a pull one wait, not one a file.
var silentHosts sync.Map

const silentFor = 5 * time.Minute

func silentHost(host string) bool {
	at, ok := silentHosts.Load(host)
	return ok && time.Since(at.(time.Time)) < silentFor
}

func (p *Puller) retries() int {
	switch {
	case p.Retries < 0:
		return 0
	case p.Retries == 0:
		return 4
	}
	return p.Retries
}

func (p *Puller) backoff() time.Duration {
	if p.Backoff > 0 {
		return p.Backoff
	}
	return time.Second
}

func (p *Puller) stall() time.Duration {
	if p.StallTimeout > 0 {
		return p.StallTimeout
	}
	return 30 * time.Second
}

// stallBytes is what a source must send within each stall() to go on.
func (p *Puller) stallBytes() int64 {
	rate := p.MinRate
	if rate <= 0 {
		rate = 1 << 10
	}
	return max(1, int64(float64(rate)*p.stall().Seconds()))
}

// client is p.Client, or http.DefaultClient, that follows redirects only
// to http and https: a redirect to file:// or ftp:// ends the source's
// attempts instead of failing each of them the same way.
func (p *Puller) client() *http.Client {
	c := *http.DefaultClient
	if p.Client != nil {
		c = *p.Client
	}
	follow := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return permanentError{fmt.Errorf("redirected to %s, which is not http or https", req.URL.Redacted())}
		}
		if follow != nil {
			return follow(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// Pull downloads every file of m that is missing or does not verify: for
// an MNN LLM export, its configs first, then the files they name.
func (p *Puller) Pull(ctx context.Context, m Model) error {
	if p.Dir == "" {
		return errors.New("assets: Puller.Dir is empty")
	}
	// A mirror that cannot serve is said once, not at every file's
	// every attempt.
	if p.Mirror != "" {
		if _, err := p.mirrorURL(); err != nil {
			return fmt.Errorf("assets: %w", err)
		}
	}
	if m.Format == FormatMNNLLM {
		if err := p.pullMNNConfigs(ctx, m); err != nil {
			return err
		}
	}
	files, err := m.filesIn(Path(p.Dir, m))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := p.pullFile(ctx, m, f); err != nil {
			return err
		}
	}
	return nil
}

func (p *Puller) pullFile(ctx context.Context, m Model, f File) (err error) {
	dir := Path(p.Dir, m)
	path := filepath.Join(dir, filepath.FromSlash(f.Path))
	unlock, err := lockModelDir(ctx, dir, filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	defer unlock()
	// A folder the pull made and left empty would read as a model pulled
	// in part; it goes, under the lock, before the lock is released.
	defer func() {
		if err != nil {
			removeEmptyDirs(filepath.Dir(path), dir)
		}
	}()

	entries, err := p.readLock()
	if err != nil {
		return err
	}
	e, locked := entries[lockKey(m, f)]
	size, sum, _ := expected(f, e, locked)
	// A file that verifies is done (this is what a second waiter on the
	// lock sees); one that is missing, or does not verify, is fetched again.
	if st, _ := check(path, size, sum); st.Verified {
		// A file the lock holds to its first download is only as good as
		// that download: one not of its kind (a page a mirror sent, which
		// an earlier agent locked) is forgotten and fetched again.
		if f.SHA256 != "" || checkFormat(m, f, path) == nil {
			return nil
		}
		if err := p.updateLock(ctx, func(entries map[string]lockEntry) bool {
			delete(entries, lockKey(m, f))
			return true
		}); err != nil {
			return err
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
		}
		size, sum, _ = expected(f, lockEntry{}, false)
	}

	part := path + ".part"
	if err := p.download(ctx, m, f, part, size); err != nil {
		// What arrived stays for the next pull to resume from; an empty
		// file would only be litter.
		if fi, statErr := os.Stat(part); statErr == nil && fi.Size() == 0 {
			removePart(part)
		}
		return err
	}
	actual, n, err := HashFile(part)
	if err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	if size > 0 && n != size {
		removePart(part)
		return fmt.Errorf("assets: model %s file %s: downloaded size %d, expected %d; the partial file was removed, pull again or check the mirror/source", m.Name, f.Path, n, size)
	}
	if sum != "" && actual != sum {
		removePart(part)
		return fmt.Errorf("assets: model %s file %s: sha256 mismatch: expected %s, got %s; the partial file was removed, pull again or check the mirror/source", m.Name, f.Path, sum, actual)
	}
	// With no sha256 to check, the first download is what the lock file
	// will hold the file to: it must at least be a file of its kind.
	if sum == "" {
		if err := checkFormat(m, f, part); err != nil {
			removePart(part)
			return fmt.Errorf("assets: model %s file %s: %w; the partial file was removed and its checksum not recorded, pull again or check the mirror/source", m.Name, f.Path, err)
		}
	}
	if err := os.Rename(part, path); err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	os.Remove(validatorPath(part))
	if sum == "" {
		if err := p.record(ctx, lockKey(m, f), lockEntry{SHA256: actual, Size: n}); err != nil {
			return err
		}
	}
	return nil
}

// lockModelDir makes sub, a folder in or at a model's folder dir, and
// takes dir's lock. A failed pull removes the folders it leaves empty
// (removeEmptyDirs) while it holds the lock, so a lock taken on a folder
// that was removed meanwhile is let go, and the folder made and locked
// again.
func lockModelDir(ctx context.Context, dir, sub string) (unlock func(), err error) {
	for {
		if err := os.MkdirAll(sub, 0o777); err != nil { // less the umask
			return nil, err
		}
		before, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		unlock, err := lockDir(ctx, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if after, err := os.Stat(dir); err == nil && os.SameFile(before, after) {
			return unlock, nil
		}
		unlock()
	}
}

// removeEmptyDirs removes sub and the folders above it up to dir, which
// holds it, each only if empty.
func removeEmptyDirs(sub, dir string) {
	for d := sub; ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == dir {
			return
		}
	}
}

// removePart removes a partial download and its validator.
func removePart(part string) {
	os.Remove(part)
	os.Remove(validatorPath(part))
}

// permanentError ends the attempts on one source without retrying.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

var errStall = errors.New("stalled")

// sourceURL applies the mirror to a source.
func (p *Puller) sourceURL(src string) (string, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("source %q: scheme %q is not supported for download", src, u.Scheme)
	}
	if p.Mirror == "" {
		return src, nil
	}
	mu, err := p.mirrorURL()
	if err != nil {
		return "", err
	}
	u.Scheme, u.Host = mu.Scheme, mu.Host
	if prefix := strings.TrimSuffix(mu.Path, "/"); prefix != "" {
		u.Path = prefix + u.Path
		u.RawPath = ""
	}
	return u.String(), nil
}

// mirrorURL is the mirror, if it is an http or https URL with a host.
func (p *Puller) mirrorURL() (*url.URL, error) {
	mu, err := url.Parse(p.Mirror)
	if err != nil || mu.Host == "" {
		return nil, fmt.Errorf("mirror %q: not a URL with a host", p.Mirror)
	}
	if mu.Scheme != "http" && mu.Scheme != "https" {
		return nil, fmt.Errorf("mirror %q: scheme %q is not supported for download (http or https)", p.Mirror, mu.Scheme)
	}
	return mu, nil
}

// UnreachableError is the error of a pull that could connect to none of a
// file's sources: no such host, connection refused, no route. No source
// is retried then, since while the network is down no retry mends it.
type UnreachableError struct {
	Model, File string
	// Hosts say, source by source (each host once), why none could be
	// reached: "huggingface.co: no such host".
	Hosts []string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("assets: model %s file %s: cannot connect to %s", e.Model, e.File, strings.Join(e.Hosts, "; "))
}

// unreachable says why err, a request's, never reached the server (or
// the proxy): "no-such-host.invalid: no such host", "127.0.0.1:9:
// connection refused"; or "" when it may have: a request that was sent,
// or whose answer was lost, can go through next time.
func unreachable(err error) string {
	var op *net.OpError
	if !errors.As(err, &op) || (op.Op != "dial" && op.Op != "proxyconnect") {
		return ""
	}
	var dns *net.DNSError
	if errors.As(op, &dns) {
		return dns.Name + ": " + dns.Err
	}
	// A proxy's error holds the dial that failed, with its address.
	for inner := op; errors.As(inner.Err, &inner); {
		op = inner
	}
	why := op.Err
	for inner := errors.Unwrap(why); inner != nil; inner = errors.Unwrap(why) {
		why = inner
	}
	if op.Addr == nil {
		return why.Error()
	}
	return op.Addr.String() + ": " + why.Error()
}

// unreachableHosts is why each source of errs, their errors, could not be
// connected to (each reason once); false if some source could, or might.
func unreachableHosts(errs []error) ([]string, bool) {
	var hosts []string
	for _, err := range errs {
		why := unreachable(err)
		if why == "" {
			return nil, false
		}
		if !slices.Contains(hosts, why) {
			hosts = append(hosts, why)
		}
	}
	return hosts, len(hosts) > 0
}

// download fills part from the sources in order, retrying each with
// backoff, resuming from what part already holds. A source that cannot
// be connected to is not retried; if none can, the error is an
// *UnreachableError.
func (p *Puller) download(ctx context.Context, m Model, f File, part string, size int64) error {
	var errs []error
	for _, src := range f.Sources {
		npm, isNPM, err := parseNPMSource(src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isNPM {
			src = npm.tarballURL(p.npmRegistry())
		}
		u, err := p.sourceURL(src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		delay := p.backoff()
		for attempt := 0; ; attempt++ {
			if isNPM {
				err = p.fetchNPM(ctx, m, f, npm, u, part)
			} else {
				err = p.fetch(ctx, m, f, u, part, size)
			}
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, ctx.Err())
			}
			var perm permanentError
			if errors.As(err, &perm) || unreachable(err) != "" || attempt >= p.retries() {
				break
			}
			if p.Retrying != nil {
				p.Retrying(m.Name, f.Path, attempt+1, err, delay)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, ctx.Err())
			case <-time.After(delay):
			}
			delay *= 2
		}
		errs = append(errs, err)
	}
	if hosts, ok := unreachableHosts(errs); ok {
		return &UnreachableError{Model: m.Name, File: f.Path, Hosts: hosts}
	}
	return fmt.Errorf("assets: model %s file %s: download failed: %w", m.Name, f.Path, errors.Join(errs...))
}

// maxUnknownSize caps a file whose size neither the manifest nor the lock
// file gives (8 GiB, several times the largest model file the manifest
// lists), so that a source that never stops sending cannot fill the disk.
// A larger file needs its size in the manifest.
const maxUnknownSize = 8 << 30

// fetch makes one request for u, appending to part from its size, which
// it holds to size (or maxUnknownSize where size is 0).
func (p *Puller) fetch(ctx context.Context, m Model, f File, u, part string, size int64) error {
	out, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o666) // less the umask
	if err != nil {
		return permanentError{err}
	}
	defer out.Close()
	off, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return permanentError{err}
	}
	limit := size
	if limit <= 0 {
		limit = maxUnknownSize
	}
	// A partial file is resumed only on the condition that the source
	// still serves the file it came from (If-Range): one without a
	// validator to say so starts over, rather than splice two versions.
	valid := readValidator(part)
	if off > limit || (off > 0 && valid == "") {
		if err := out.Truncate(0); err != nil {
			return permanentError{err}
		}
		off, _ = out.Seek(0, io.SeekStart)
	}
	if size > 0 && off == size {
		return nil // complete already; the caller verifies it
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := p.stall()
	timer := time.AfterFunc(stall, func() { cancel(errStall) })
	defer timer.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return permanentError{err}
	}
	if silentHost(req.URL.Host) {
		return permanentError{fmt.Errorf("%s: %s sent no response to an earlier request of this pull", u, req.URL.Host)}
	}
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
		req.Header.Set("If-Range", valid)
	}
	resp, err := p.client().Do(req)
	if err != nil {
		if context.Cause(ctx) == errStall {
			// A server that takes the connection and never answers is
			// not asked again: each attempt would cost the whole wait.
			silentHosts.Store(req.URL.Host, time.Now())
			return permanentError{fmt.Errorf("%s: the server took the connection but sent no response in %v", u, stall)}
		}
		return fmt.Errorf("%s: %w", u, err)
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, ok := contentRangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			out.Truncate(0)
			return fmt.Errorf("%s: range response starts at %q, wanted %d; restarting", u, resp.Header.Get("Content-Range"), off)
		}
		// A server that honours Range but not If-Range still tells
		// by its validator that the file changed.
		if v := validator(resp.Header); v != "" && v != valid {
			out.Truncate(0)
			return fmt.Errorf("%s: the file changed (validator %s, was %s); restarting", u, v, valid)
		}
	case resp.StatusCode == http.StatusOK:
		// The server ignored Range, or the file changed since part
		// began (If-Range): start from zero.
		if off > 0 {
			if err := out.Truncate(0); err != nil {
				return permanentError{err}
			}
			if off, err = out.Seek(0, io.SeekStart); err != nil {
				return permanentError{err}
			}
		}
		if err := writeValidator(part, validator(resp.Header)); err != nil {
			return permanentError{err}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		out.Truncate(0)
		return fmt.Errorf("%s: %s for range from %d; restarting", u, resp.Status, off)
	case resp.StatusCode == http.StatusNotFound:
		return permanentError{fmt.Errorf("%s: not found (404) for model %s file %s", u, m.Name, f.Path)}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout:
		return fmt.Errorf("%s: %s", u, resp.Status)
	default:
		return permanentError{fmt.Errorf("%s: %s for model %s file %s", u, resp.Status, m.Name, f.Path)}
	}
	if resp.ContentLength >= 0 && off+resp.ContentLength > limit {
		out.Truncate(0)
		return tooMuch(u, m, f, size, fmt.Sprintf("announced a size of %d bytes,", off+resp.ContentLength))
	}

	// sent is where this response says the file ends; total is what
	// progress reports (the manifest's size when known).
	sent := int64(-1)
	if resp.ContentLength >= 0 {
		sent = off + resp.ContentLength
	}
	total := size
	if total == 0 && sent > 0 {
		total = sent
	}
	done, start := off, time.Now()
	var lastReport time.Time
	report := func(force bool) {
		if p.Progress == nil {
			return
		}
		now := time.Now()
		if !force && now.Sub(lastReport) < 100*time.Millisecond {
			return
		}
		lastReport = now
		pr := Progress{Model: m.Name, File: f.Path, Done: done, Total: total}
		if el := now.Sub(start).Seconds(); el > 0 {
			pr.Rate = float64(done-off) / el
		}
		if pr.Rate > 0 && total > done {
			pr.ETA = time.Duration(float64(total-done) / pr.Rate * float64(time.Second))
		}
		p.Progress(pr)
	}
	report(true)
	buf := make([]byte, 64<<10)
	// sinceReset is what came since the stall timer was last reset: it is
	// reset only once a window's worth came.
	enough, sinceReset := p.stallBytes(), int64(0)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if sinceReset += int64(n); sinceReset >= enough {
				timer.Reset(stall)
				sinceReset = 0
			}
			if done+int64(n) > limit {
				out.Truncate(0)
				return tooMuch(u, m, f, size, "sent")
			}
			if _, err := out.Write(buf[:n]); err != nil {
				return permanentError{err}
			}
			done += int64(n)
			report(false)
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
	report(true)
	if sent >= 0 && done < sent {
		return fmt.Errorf("%s: connection ended after %d of %d bytes", u, done, sent)
	}
	if err := out.Sync(); err != nil {
		return permanentError{err}
	}
	return nil
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

// validatorPath is where the validator of part's bytes is kept.
func validatorPath(part string) string { return part + ".meta" }

// partMeta is the content of validatorPath.
type partMeta struct {
	// Validator is the first response's validator (see validator).
	Validator string `json:"validator"`
}

// validator is what an If-Range can carry to ask for the rest of the
// file a response was: its strong ETag, else its Last-Modified date (a
// weak ETag never matches in If-Range, RFC 9110 section 13.1.5); "" for
// none.
func validator(h http.Header) string {
	if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
		return etag
	}
	return h.Get("Last-Modified")
}

// readValidator returns the validator of part's bytes; "" if there is
// none, or none that can be read, so that part is not resumed.
func readValidator(part string) string {
	b, err := os.ReadFile(validatorPath(part))
	if err != nil {
		return ""
	}
	var meta partMeta
	if json.Unmarshal(b, &meta) != nil {
		return ""
	}
	return meta.Validator
}

// writeValidator keeps v as the validator of the bytes part is about to
// receive from zero, before the first of them: an older one would let a
// resume splice another version of the file onto them.
func writeValidator(part, v string) error {
	if v == "" {
		if err := os.Remove(validatorPath(part)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.Marshal(partMeta{Validator: v})
	if err != nil {
		return err
	}
	return os.WriteFile(validatorPath(part), b, 0o666) // less the umask
}

// contentRangeStart parses "bytes START-END/TOTAL".
func contentRangeStart(h string) (int64, bool) {
	s, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, false
	}
	s, _, ok = strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
