package assets

// The lock file, models.lock: its format, reading and recording. The
// cross-process locking that guards it (lockDir) is in flock.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFileName is the name, inside the cache directory, of the file that
// records the sha256 and size of first downloads of files the manifest
// has no sha256 for, and when a cached file was last found to have the
// sha256 it should.
const LockFileName = "models.lock"

type lockEntry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Verified is the file as it was when CheckCached last hashed it and
	// found SHA256: while it stays so, the next check need not hash it.
	Verified fileStamp `json:"verified,omitzero"`
}

// fileStamp is what a file's metadata says of its content: a write
// changes its modification time (or its size).
type fileStamp struct {
	ModTime int64 `json:"mtime_ns"` // Unix nanoseconds
	Size    int64 `json:"size"`
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}
}

func (p *Puller) lockPath() string { return filepath.Join(p.Dir, LockFileName) }

func lockKey(m Model, f File) string { return m.Name + "/" + f.Path }

// readLock reads the lock file; a missing file is an empty map. It takes
// no lock: the file is only ever replaced whole (updateLock), so a reader
// sees the old or the new one, and a user who cannot write the cache can
// still read it.
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
		return nil, fmt.Errorf("assets: lock file %s is not the JSON object of sha256 sums it should be (%w); move it aside and pull again, which records the sums anew", path, err)
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

// record sets key's entry in the lock file.
func (p *Puller) record(ctx context.Context, key string, e lockEntry) error {
	return p.updateLock(ctx, func(entries map[string]lockEntry) bool {
		if old, ok := entries[key]; ok && old == e {
			return false
		}
		entries[key] = e
		return true
	})
}

// updateLock lets change edit the lock file's entries under an exclusive
// lock, and replaces the file atomically if change reports an edit. The
// new file is created before the lock is taken, so that a user who cannot
// write the cache fails without holding up those who can.
func (p *Puller) updateLock(ctx context.Context, change func(map[string]lockEntry) bool) error {
	tmp, err := createTemp(p.Dir, LockFileName+".", ".tmp")
	if err != nil {
		return fmt.Errorf("assets: lock file: %w", err)
	}
	replaced, err := p.replaceLock(ctx, tmp, change)
	if !replaced {
		os.Remove(tmp.Name())
	}
	return err
}

// replaceLock is updateLock once tmp is created; it closes tmp.
func (p *Puller) replaceLock(ctx context.Context, tmp *os.File, change func(map[string]lockEntry) bool) (replaced bool, err error) {
	defer tmp.Close() // on the paths that do not close it first
	unlock, err := lockDir(ctx, p.Dir, nil)
	if err != nil {
		return false, fmt.Errorf("assets: lock file: %w", err)
	}
	defer unlock()
	entries, err := p.readLock()
	if err != nil || !change(entries) {
		return false, err
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return false, err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close() // before the rename, which Windows refuses for an open file
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p.lockPath())
	}
	if err != nil {
		return false, fmt.Errorf("assets: lock file: %w", err)
	}
	return true, nil
}

// createTemp creates a new file in dir named prefix, a random string and
// suffix. Unlike os.CreateTemp's (0600), its mode is 0666 less the umask,
// as every file of the cache is, so that a cache one user pulled others
// can read.
func createTemp(dir, prefix, suffix string) (*os.File, error) {
	for range 1000 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no unused name for a new file %s*%s", dir, prefix, suffix)
}

// ForgetLocked drops m's entries from the lock file in the cache dir: its
// files are then held to no first download, and the next pull fetches
// them again instead of refusing what the source now sends. It is for a
// download the lock held that proved bad only when loaded (an MNN export
// whose files crash the engine): a locked sum is only as good as the
// first download it was taken from.
func ForgetLocked(ctx context.Context, dir string, m Model) error {
	p := &Puller{Dir: dir}
	prefix := lockKey(m, File{}) // every file of m's: "MODEL/"
	return p.updateLock(ctx, func(entries map[string]lockEntry) bool {
		before := len(entries)
		maps.DeleteFunc(entries, func(key string, _ lockEntry) bool { return strings.HasPrefix(key, prefix) })
		return len(entries) != before
	})
}
