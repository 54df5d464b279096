//go:build !unix

package derived

import (
	"fmt"
	"os"
)

func lock(string, <-chan struct{}) (func(), error) { return func() {}, nil }

// openRegular opens the regular file at path, not one a symlink there
// points at (checked first: there is no O_NOFOLLOW).
func openRegular(path string, flag int, perm os.FileMode) (*os.File, error) {
	if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return nil, errSymlink
	} else if err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	return os.OpenFile(path, flag, perm)
}

// FreeBytes is not known here: as much as asked.
func FreeBytes(string) (uint64, error) { return ^uint64(0), nil }

func diskBytes(info os.FileInfo) int64 { return info.Size() }
