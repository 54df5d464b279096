//go:build mnn && !linux

package mnn

// maxFileBytes has no limit where it has not been looked at.
func maxFileBytes() uint64 { return ^uint64(0) }

// hasSparseFiles is true where file systems have not been looked at.
func hasSparseFiles(string) bool { return true }
