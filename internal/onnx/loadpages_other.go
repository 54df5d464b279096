//go:build !linux

package onnx

// dropLoadPages is a Linux measure (see loadpages_linux.go).
func dropLoadPages(string) int64 { return 0 }
