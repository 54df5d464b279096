package assets

// The lock file, models.lock: its format, reading and recording. The
// cross-process locking that guards it (lockFile) is in flock_*.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LockFileName is the name, inside the cache directory, of the file that
// records the sha256 and size of first downloads of files the manifest
// has no sha256 for.
const LockFileName = "models.lock"

type lockEntry struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
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
