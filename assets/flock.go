package assets

import (
	"context"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lockFile takes an exclusive lock on path, a directory (so that no lock
// file is left behind) or a file (created if missing), waiting until ctx
// ends. The lock belongs to the open file, so two pulls in one process
// exclude each other as two processes do (flock(2) on Unix, LockFileEx on
// Windows, through gofrs/flock).
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	opt := flock.SetPermissions(0o666) // less the umask, as every file of the cache
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		opt = flock.SetFlag(os.O_RDONLY) // a directory opens, never creates
	}
	l := flock.New(path, opt)
	locked, err := l.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if !locked {
		return nil, ctx.Err()
	}
	return func() { l.Unlock() }, nil
}
