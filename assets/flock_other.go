//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package assets

import (
	"context"
	"sync"
)

// Without flock, only pulls within this process are serialized.
var procLocks sync.Map

func lockFile(ctx context.Context, path string) (func(), error) {
	v, _ := procLocks.LoadOrStore(path, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
