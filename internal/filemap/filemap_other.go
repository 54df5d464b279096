//go:build !unix

// Package filemap maps a file read-only; here, where there is no mmap, it
// reads it whole.
package filemap

import "os"

// Map reads the file at path; unmap does nothing.
func Map(path string) (data []byte, unmap func(), err error) {
	data, err = os.ReadFile(path)
	return data, func() {}, err
}
