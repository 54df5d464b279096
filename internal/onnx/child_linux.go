package onnx

import (
	"os/exec"
	"syscall"
)

// tieToParent has the kernel kill the child when this process ends (an
// interrupted agent exits while the child works, or is killed): a copy
// nobody waits for is not finished, and its memory is not held.
func tieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
