//go:build unix

// Package filemap maps a file read-only: its pages are read as they are
// touched, and count as file-backed memory the kernel may drop, where
// reading it whole would put all of it on the heap (a 600 MB model
// checked at download).
package filemap

import (
	"os"
	"syscall"
)

// Map maps the file at path read-only; unmap releases it.
func Map(path string) (data []byte, unmap func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if info.Size() == 0 {
		return nil, func() {}, nil
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(info.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
