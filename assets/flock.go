package assets

import (
	"context"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lockDir takes an exclusive lock on dir, a directory (so that no lock
// file is left behind), waiting until ctx ends. It opens dir and never
// creates it: a folder removed meanwhile is an error, not made a file.
// The lock belongs to the open file, so two pulls in one process exclude
// each other as two processes do (flock(2) on Unix, LockFileEx on
// Windows, through gofrs/flock).
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	l := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	locked, err := l.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if !locked {
		return nil, ctx.Err()
	}
	return func() { l.Unlock() }, nil
}
