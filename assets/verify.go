package assets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FileStatus is the state of one file of a model in the cache.
type FileStatus struct {
	File     File
	Path     string
	Present  bool
	Verified bool
	Size     int64
	Problem  string
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
	actual, _, err = HashFile(path)
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

// Verify checks each file of m in the cache (those its config names, for
// an MNN LLM export) against the manifest's size and sha256, or the lock
// file's record when the manifest has no sha256.
func (p *Puller) Verify(m Model) ([]FileStatus, error) {
	entries, err := p.readLock()
	if err != nil {
		return nil, err
	}
	files, err := m.filesIn(Path(p.Dir, m))
	if err != nil {
		return nil, err
	}
	out := make([]FileStatus, 0, len(files))
	for _, f := range files {
		e, ok := entries[lockKey(m, f)]
		size, sum, fromLock := expected(f, e, ok)
		path := filepath.Join(Path(p.Dir, m), filepath.FromSlash(f.Path))
		st, _ := check(path, size, sum)
		// Held to its first download only: the checksum says the file is
		// what arrived, not that it is a file of its kind.
		if st.Verified && fromLock {
			if err := checkFormat(m, f, Path(p.Dir, m), path); err != nil {
				st.Verified, st.Problem = false, err.Error()+"; pull it again"
			}
		}
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
	want, err := m.filesIn(local)
	if err != nil {
		return Path(p.Dir, m), files, err
	}
	there := make([]FileStatus, 0, len(want))
	for _, f := range want {
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

// ErrNotCached is CheckCached's error for a model folder in the cache that
// holds none of the model's files: what a failed pull leaves (empty, or
// with partial downloads only) is no installed model, and a command looks
// on, and says it is not found, rather than that a file of it is missing.
var ErrNotCached = errors.New("none of its files is in the cache")

// CheckCached is the check a command makes, before loading, of a model it
// found in the cache dir: every file present (those its config names, for
// an MNN LLM export), with the size and the sha256 the manifest or the
// lock file gives; ErrNotCached if none is. A file is hashed once per
// change: the lock file keeps the modification time and size at which its
// sha256 was last found right, and while they stand the file is not read
// again.
func CheckCached(dir string, m Model) error {
	p := &Puller{Dir: dir}
	entries, err := p.readLock()
	if err != nil {
		return err
	}
	files, err := m.filesIn(Path(dir, m))
	if err != nil {
		return err
	}
	pathOf := func(f File) string { return filepath.Join(Path(dir, m), filepath.FromSlash(f.Path)) }
	if !slices.ContainsFunc(files, func(f File) bool {
		_, err := os.Stat(pathOf(f))
		return !errors.Is(err, os.ErrNotExist)
	}) {
		return fmt.Errorf("model %s: %w", m.Name, ErrNotCached)
	}
	for _, f := range files {
		key := lockKey(m, f)
		e, locked := entries[key]
		size, sum, _ := expected(f, e, locked)
		path := pathOf(f)
		fi, err := os.Stat(path)
		var problem string
		// A file held only to its first download is only as good as that
		// download: one an older agent locked without checking its kind
		// (a page, weights cut short) would crash the engine at every
		// start.
		var notItsKind error
		if err == nil && f.SHA256 == "" {
			notItsKind = checkFormat(m, f, Path(dir, m), path)
		}
		switch {
		case errors.Is(err, os.ErrNotExist):
			problem = "is missing"
		case err != nil:
			problem = err.Error()
		case size > 0 && fi.Size() != size:
			problem = fmt.Sprintf("has %d bytes, expected %d (interrupted or damaged)", fi.Size(), size)
		case notItsKind != nil:
			problem = "is " + notItsKind.Error()
		case sum == "" || (locked && e.SHA256 == sum && e.Verified == stampOf(fi)):
			continue
		default:
			problem = p.verifyCached(key, path, sum, fi, e, locked)
			if problem == "" {
				continue
			}
		}
		return fmt.Errorf("model %s in the cache: %s %s; run `voice-agent models pull %s` to fetch it again", m.Name, path, problem, m.Name)
	}
	return nil
}

// racyWindow is how long after a file's last write its stamp is not
// recorded: a write within its modification time's granularity (a clock
// tick; 2 s on FAT) would leave the stamp unchanged.
const racyWindow = 2 * time.Second

// verifyCached hashes the file at path, described by fi, which should have
// sha256 sum, and returns the problem ("" for none). If the sum is right
// it records fi's stamp in key's lock entry, which was e (if locked).
func (p *Puller) verifyCached(key, path, sum string, fi fs.FileInfo, e lockEntry, locked bool) string {
	start := time.Now()
	actual, _, err := HashFile(path)
	switch {
	case err != nil:
		return err.Error()
	case actual != sum:
		return fmt.Sprintf("was changed or damaged since it was pulled (sha256 %s, expected %s)", actual, sum)
	case !fi.ModTime().Before(start.Add(-racyWindow)):
		return "" // right, but written too recently to stamp
	}
	// The stamp only saves a later check the hash: a cache this user
	// cannot write (another user's), or a lock held long, costs no more
	// than that, so it is not an error. An entry that changed meanwhile
	// is left to whoever changed it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = p.updateLock(ctx, func(entries map[string]lockEntry) bool {
		if now, ok := entries[key]; ok != locked || now != e {
			return false
		}
		entries[key] = lockEntry{SHA256: sum, Size: fi.Size(), Verified: stampOf(fi)}
		return true
	})
	return ""
}
