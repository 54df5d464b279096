package childjob

import (
	"os"
	"os/exec"
	"syscall"
)

// tieToParent has the kernel kill the child when its parent ends (an
// interrupted agent exits while the child works, or is killed): work
// nobody waits for is not finished, and its memory is not held.
func tieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// raiseOOMScore makes this process the kernel's first choice under
// memory pressure: the child, which holds what the parent would otherwise
// hold once, not the agent.
func raiseOOMScore() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
}
