package assets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnvCache names the environment variable that overrides the cache.
const EnvCache = "VOICE_MODELS"

// CacheDir is the user's model cache: $VOICE_MODELS if set, else
// $XDG_DATA_HOME/voice-agent/models, else ~/.local/share/voice-agent/models.
// A model's files live in <cache>/<model name>/<file path>.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "voice-agent", "models"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("assets: cache dir: %w (set VOICE_MODELS)", err)
	}
	return filepath.Join(home, ".local", "share", "voice-agent", "models"), nil
}

// Path is the directory that holds model m's files under cache dir.
func Path(dir string, m Model) string {
	return filepath.Join(dir, m.Name)
}

// LockFileName is the name, inside the cache directory, of the file that
// records the sha256 and size of first downloads of files the manifest
// has no sha256 for.
const LockFileName = "models.lock"

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
	Progress     func(Progress)
	// Retrying, if set, is told of each failed attempt that will be tried
	// again after wait, so a user watching knows the pull is not stuck.
	Retrying func(model, file string, attempt int, err error, wait time.Duration)
}

// FileStatus is the state of one file of a model in the cache.
type FileStatus struct {
	File     File
	Path     string
	Present  bool
	Verified bool
	Size     int64
	Problem  string
}

type lockEntry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
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

func (p *Puller) client() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	return http.DefaultClient
}

func (p *Puller) lockPath() string { return filepath.Join(p.Dir, LockFileName) }

func lockKey(m Model, f File) string { return m.Name + "/" + f.Path }

// readLock reads the lock file; a missing file is an empty map.
func (p *Puller) readLock() (map[string]lockEntry, error) {
	b, err := os.ReadFile(p.lockPath())
	if errors.Is(err, os.ErrNotExist) {
		return map[string]lockEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("assets: lock file: %w", err)
	}
	return parseLock(p.lockPath(), b)
}

// parseLock parses the lock file at path, which holds b: a JSON object
// from "MODEL/PATH" to the sha256 and size of the file's first download.
// An empty file is an empty map, and so is JSON null (which would
// otherwise leave a nil map for record to write to).
func parseLock(path string, b []byte) (map[string]lockEntry, error) {
	entries := map[string]lockEntry{}
	if len(bytes.TrimSpace(b)) == 0 {
		return entries, nil
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("assets: lock file %s: %w", path, err)
	}
	if entries == nil {
		entries = map[string]lockEntry{}
	}
	for key, e := range entries {
		if !isSHA256(e.SHA256) || e.Size < 0 {
			return nil, fmt.Errorf("assets: lock file %s: %q has sha256 %q and size %d; delete the entry (or the file) and pull again",
				path, key, e.SHA256, e.Size)
		}
	}
	return entries, nil
}

// record adds key to the lock file under an exclusive lock, atomically.
func (p *Puller) record(ctx context.Context, key string, e lockEntry) error {
	unlock, err := lockFile(ctx, p.Dir)
	if err != nil {
		return fmt.Errorf("assets: lock file: %w", err)
	}
	defer unlock()
	entries, err := p.readLock()
	if err != nil {
		return err
	}
	if old, ok := entries[key]; ok && old == e {
		return nil
	}
	entries[key] = e
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(p.Dir, LockFileName+".*.tmp")
	if err != nil {
		return fmt.Errorf("assets: lock file: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p.lockPath())
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("assets: lock file: %w", err)
	}
	return nil
}

// expected returns the size and sha256 f must have: the manifest's, or
// else what the lock file recorded (size from the manifest wins).
func expected(f File, e lockEntry, locked bool) (size int64, sum string, fromLock bool) {
	size, sum = f.Size, strings.ToLower(f.SHA256)
	if sum == "" && locked {
		sum, fromLock = strings.ToLower(e.SHA256), true
		if size == 0 {
			size = e.Size
		}
	}
	return size, sum, fromLock
}

func hashFile(path string) (string, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// check verifies one file on disk. It returns a problem ("" when
// verified) and the file's sha256 (when it was read).
func check(path string, size int64, sum string) (st FileStatus, actual string) {
	st.Path = path
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			st.Problem = "missing"
		} else {
			st.Problem = err.Error()
		}
		return st, ""
	}
	st.Present, st.Size = true, fi.Size()
	if size > 0 && fi.Size() != size {
		st.Problem = fmt.Sprintf("size %d, expected %d", fi.Size(), size)
		return st, ""
	}
	actual, _, err = hashFile(path)
	if err != nil {
		st.Problem = err.Error()
		return st, ""
	}
	if sum == "" {
		st.Problem = "no sha256 in the manifest or the lock file to check against"
		return st, actual
	}
	if actual != sum {
		st.Problem = fmt.Sprintf("sha256 %s, expected %s", actual, sum)
		return st, actual
	}
	st.Verified = true
	return st, actual
}

// Verify checks each file of m in the cache against the manifest's size
// and sha256, or the lock file's record when the manifest has no sha256.
func (p *Puller) Verify(m Model) ([]FileStatus, error) {
	entries, err := p.readLock()
	if err != nil {
		return nil, err
	}
	out := make([]FileStatus, 0, len(m.Files))
	for _, f := range m.Files {
		e, ok := entries[lockKey(m, f)]
		size, sum, _ := expected(f, e, ok)
		st, _ := check(filepath.Join(Path(p.Dir, m), filepath.FromSlash(f.Path)), size, sum)
		st.File = f
		out = append(out, st)
	}
	return out, nil
}

// Installed checks m where the agent loads it from: in the cache (see
// Verify) or, when not every file is there, in its third_party/ folder as
// scripts/setup installs it (checked against the manifest's sizes and
// sha256). It returns the folder used and the files' status there.
func (p *Puller) Installed(m Model) (dir string, files []FileStatus, err error) {
	files, err = p.Verify(m)
	if err != nil || allPresent(files) || m.Local == "" {
		return Path(p.Dir, m), files, err
	}
	local, ok := Local(m.Local)
	if !ok {
		return Path(p.Dir, m), files, nil
	}
	there := make([]FileStatus, 0, len(m.Files))
	for _, f := range m.Files {
		st, _ := check(filepath.Join(local, filepath.FromSlash(f.Path)), f.Size, strings.ToLower(f.SHA256))
		st.File = f
		there = append(there, st)
	}
	if !allPresent(there) {
		return Path(p.Dir, m), files, nil
	}
	return local, there, nil
}

func allPresent(files []FileStatus) bool {
	for _, f := range files {
		if !f.Present {
			return false
		}
	}
	return true
}

// Pull downloads every file of m that is missing or does not verify.
func (p *Puller) Pull(ctx context.Context, m Model) error {
	if p.Dir == "" {
		return errors.New("assets: Puller.Dir is empty")
	}
	for _, f := range m.Files {
		if err := p.pullFile(ctx, m, f); err != nil {
			return err
		}
	}
	return nil
}

func (p *Puller) pullFile(ctx context.Context, m Model, f File) error {
	path := filepath.Join(Path(p.Dir, m), filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("assets: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("assets: model %s file %s: lock: %w", m.Name, f.Path, err)
	}
	defer unlock()

	entries, err := p.readLock()
	if err != nil {
		return err
	}
	e, locked := entries[lockKey(m, f)]
	size, sum, _ := expected(f, e, locked)
	// A file that verifies is done (this is what a second waiter on the
	// lock sees); one that is missing, or does not verify, is fetched again.
	if st, _ := check(path, size, sum); st.Verified {
		return nil
	}

	part := path + ".part"
	if err := p.download(ctx, m, f, part, size); err != nil {
		// What arrived stays for the next pull to resume from; an empty
		// file would only be litter.
		if fi, statErr := os.Stat(part); statErr == nil && fi.Size() == 0 {
			os.Remove(part)
		}
		return err
	}
	actual, n, err := hashFile(part)
	if err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	if size > 0 && n != size {
		os.Remove(part)
		return fmt.Errorf("assets: model %s file %s: downloaded size %d, expected %d; the partial file was removed, pull again or check the mirror/source", m.Name, f.Path, n, size)
	}
	if sum != "" && actual != sum {
		os.Remove(part)
		return fmt.Errorf("assets: model %s file %s: sha256 mismatch: expected %s, got %s; the partial file was removed, pull again or check the mirror/source", m.Name, f.Path, sum, actual)
	}
	if err := os.Rename(part, path); err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	if sum == "" {
		if err := p.record(ctx, lockKey(m, f), lockEntry{SHA256: actual, Size: n}); err != nil {
			return err
		}
	}
	return nil
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
	mu, err := url.Parse(p.Mirror)
	if err != nil || mu.Host == "" {
		return "", fmt.Errorf("mirror %q: not a URL with a host", p.Mirror)
	}
	u.Scheme, u.Host = mu.Scheme, mu.Host
	if prefix := strings.TrimSuffix(mu.Path, "/"); prefix != "" {
		u.Path = prefix + u.Path
		u.RawPath = ""
	}
	return u.String(), nil
}

// download fills part from the sources in order, retrying each with
// backoff, resuming from what part already holds.
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
			if errors.As(err, &perm) || attempt >= p.retries() {
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
	return fmt.Errorf("assets: model %s file %s: download failed: %w", m.Name, f.Path, errors.Join(errs...))
}

// fetch makes one request for u, appending to part from its size.
func (p *Puller) fetch(ctx context.Context, m Model, f File, u, part string, size int64) error {
	out, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return permanentError{err}
	}
	defer out.Close()
	off, err := out.Seek(0, io.SeekEnd)
	if err != nil {
		return permanentError{err}
	}
	if size > 0 && off > size { // more than the file holds: start over
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
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
	}
	resp, err := p.client().Do(req)
	if err != nil {
		if context.Cause(ctx) == errStall {
			return fmt.Errorf("%s: no response for %v", u, stall)
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
	case resp.StatusCode == http.StatusOK:
		if off > 0 { // the server ignored Range: start from zero
			if err := out.Truncate(0); err != nil {
				return permanentError{err}
			}
			if off, err = out.Seek(0, io.SeekStart); err != nil {
				return permanentError{err}
			}
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
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			timer.Reset(stall)
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

// CheckCached is the check a command makes, before loading, of a model it
// found in the cache dir: every file present, with the size the manifest
// or the lock file gives. Hashing every byte is left to `voice-agent
// models verify`; a damaged file of the right size is caught by its loader.
func CheckCached(dir string, m Model) error {
	entries, err := (&Puller{Dir: dir}).readLock()
	if err != nil {
		return err
	}
	for _, f := range m.Files {
		e, ok := entries[lockKey(m, f)]
		size, _, _ := expected(f, e, ok)
		path := filepath.Join(Path(dir, m), filepath.FromSlash(f.Path))
		fi, err := os.Stat(path)
		var problem string
		switch {
		case errors.Is(err, os.ErrNotExist):
			problem = "is missing"
		case err != nil:
			problem = err.Error()
		case size > 0 && fi.Size() != size:
			problem = fmt.Sprintf("has %d bytes, expected %d (interrupted or damaged)", fi.Size(), size)
		default:
			continue
		}
		return fmt.Errorf("model %s in the cache: %s %s; run `voice-agent models pull %s` to fetch it again", m.Name, path, problem, m.Name)
	}
	return nil
}
