package assets

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lockDir takes an exclusive lock on dir, a directory (so that no lock
// file is left behind), waiting until ctx ends; waiting, if not nil, is
// called before a wait. It opens dir and never creates it: a folder
// removed meanwhile is an error, not made a file. The lock belongs to
// the open file, so two pulls in one process exclude each other as two
// processes do (flock(2) on Unix, LockFileEx on Windows, through
// gofrs/flock).
func lockDir(ctx context.Context, dir string, waiting func()) (unlock func(), err error) {
	l := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	locked, err := l.TryLock()
	if err == nil && !locked {
		if waiting != nil {
			waiting()
		}
		locked, err = l.TryLockContext(ctx, 20*time.Millisecond)
		if !locked && ctx.Err() != nil {
			return nil, fmt.Errorf("stopped waiting for another process that holds %s: %w", dir, ctx.Err())
		}
	}
	if err != nil {
		return nil, err
	}
	if !locked {
		return nil, ctx.Err()
	}
	return func() { l.Unlock() }, nil
}
