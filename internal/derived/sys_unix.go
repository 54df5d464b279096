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
func lock(path string, stop <-chan struct{}) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("stopped waiting for the process that holds %s", path)
		case <-wait:
		}
	}
}

func inode(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
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
