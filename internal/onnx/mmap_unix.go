//go:build unix

package onnx

import (
	"os"
	"syscall"
)

// mapFile maps the file read-only: pages are read as they are touched, so
// walking a model's fields reads little of a large file.
func mapFile(path string) ([]byte, func(), error) {
	size, err := checkModelFile(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { _ = syscall.Munmap(data) }, nil
}
