package assets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
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
	// Waiting, if set, is told each time a pull of model waits for
	// another pull (this process's or another's) to let go of the model's
	// folder dir: it holds it for a whole file's download, and the wait
	// is silent otherwise.
	Waiting func(model, dir string)
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

// Pull downloads every file of m that is missing or does not verify: for
// an MNN LLM export, its configs first, then the files they name.
func (p *Puller) Pull(ctx context.Context, m Model) error {
	if p.Dir == "" {
		return errors.New("assets: Puller.Dir is empty")
	}
	// A mirror that cannot serve is said once, not at every file's
	// every attempt.
	if p.Mirror != "" {
		if err := CheckMirror(p.Mirror); err != nil {
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
	unlock, err := lockModelDir(ctx, dir, filepath.Dir(path), func() {
		if p.Waiting != nil {
			p.Waiting(m.Name, dir)
		}
	})
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
		if f.SHA256 != "" || checkFormat(m, f, dir, path) == nil {
			return nil
		}
		if err := p.forget(ctx, m, f, path); err != nil {
			return err
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
	return p.install(ctx, m, f, part, path, size, sum)
}

// forget drops f's lock entry and its file at path, so that it is
// fetched again as if never pulled.
func (p *Puller) forget(ctx context.Context, m Model, f File, path string) error {
	if err := p.updateLock(ctx, func(entries map[string]lockEntry) bool {
		delete(entries, lockKey(m, f))
		return true
	}); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, err)
	}
	return nil
}

// install puts part, a complete download, at path once it holds size
// bytes with the checksum sum (where known), and records the checksum of
// a file the manifest gives none for. A part that fails is removed: a
// resume would only append to the wrong bytes.
func (p *Puller) install(ctx context.Context, m Model, f File, part, path string, size int64, sum string) error {
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
		if err := checkFormat(m, f, Path(p.Dir, m), part); err != nil {
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
// takes dir's lock (calling waiting before a wait for it). A failed pull removes the folders it leaves empty
// (removeEmptyDirs) while it holds the lock, so a lock taken on a folder
// that was removed meanwhile is let go, and the folder made and locked
// again.
func lockModelDir(ctx context.Context, dir, sub string, waiting func()) (unlock func(), err error) {
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
		unlock, err := lockDir(ctx, dir, waiting)
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
