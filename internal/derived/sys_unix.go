//go:build unix

package derived

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// lock takes an exclusive lock on the file at path, waiting for another
// process's while it holds it (waiting says so once), until stop closes.
//
// A symlink at path is refused (errSymlink), not followed nor replaced:
// followed, it would have the agent create or lock a file anywhere the
// link points (as root, an empty /etc/nologin); removed and made again, two
// agents that met it at once could each remove the other's new lock and
// both go on holding "the" lock. Nothing of the agent's makes one, so it
// is the user's to remove, and the load goes without its derived files.
func lock(path string, stop <-chan struct{}) (func(), error) {
	f, err := openRegular(path, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, errSymlink) {
		return nil, fmt.Errorf("%s: %w; remove it", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w (set XDG_CACHE_HOME to a writable folder)", err)
	}
	for said := false; ; said = true {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		wait := time.After(lockPoll)
		if !said {
			select {
			case <-stop:
				wait = nil // stopped before the wait began: nothing to say
			default:
				slog.Info("derived files: waiting for another process that makes them (Ctrl-C stops waiting)", "lock", path)
			}
		}
		select {
		case <-stop:
			f.Close()
			return nil, heldError(path)
		case <-wait:
		}
	}
}

// openRegular opens the regular file at path, never through a symlink
// (errSymlink) and never blocking on a FIFO planted there.
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errSymlink
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// FreeBytes is the space in dir's file system that an unprivileged
// process may still write.
func FreeBytes(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// diskBytes is what the file takes on disk (a sparse file less than its
// size).
func diskBytes(info os.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return info.Size()
}
