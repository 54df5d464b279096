//go:build !linux || !cgo

package malloc

func limited() bool { return false }

func trim() {}
