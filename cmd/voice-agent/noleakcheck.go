//go:build !leakcheck

package main

// checkLeaks checks nothing outside test builds (see leakcheck.go).
func checkLeaks() error { return nil }
