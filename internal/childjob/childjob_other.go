//go:build !linux

package childjob

import "os/exec"

// tieToParent does nothing where the kernel cannot end a child with its
// parent: the child's timeout bounds it.
func tieToParent(*exec.Cmd) {}

// raiseOOMScore does nothing where there is no OOM score to raise.
func raiseOOMScore() {}
