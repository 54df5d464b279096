//go:build mnn && linux

package mnn

import (
	"os"
	"sync"
	"syscall"
)

var quietOnce sync.Once

// keepStdoutClean sends what the engine prints to stderr. MNN logs with
// printf, that is to file descriptor 1, which would mix its messages into
// the JSON lines the agent writes on stdout. The process's stdout moves to
// a new descriptor that os.Stdout follows, and descriptor 1 becomes a copy
// of stderr. It happens once, before the first engine is created.
func keepStdoutClean() {
	quietOnce.Do(func() {
		fd, err := syscall.Dup(1)
		if err != nil {
			return
		}
		syscall.CloseOnExec(fd)
		if err := syscall.Dup3(2, 1, 0); err != nil {
			syscall.Close(fd)
			return
		}
		os.Stdout = os.NewFile(uintptr(fd), "/dev/stdout")
	})
}
