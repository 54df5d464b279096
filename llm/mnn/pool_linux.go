//go:build mnn && linux

package mnn

import "syscall"

// maxFileBytes is the largest file this process may write
// (RLIMIT_FSIZE); the most a uint64 holds if there is no limit.
func maxFileBytes() uint64 {
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		return ^uint64(0)
	}
	return limit.Cur
}

// File systems (statfs f_type, linux/magic.h) whose files have no holes:
// a file made long is written out whole.
const (
	msdosMagic = 0x4d44     // FAT12/16/32 (vfat, msdos)
	exfatMagic = 0x2011bab0 // exFAT
)

// hasSparseFiles tells whether the files of dir's file system can have
// holes; true if it cannot tell.
func hasSparseFiles(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return true
	}
	switch int64(st.Type) {
	case msdosMagic, exfatMagic:
		return false
	}
	return true
}
