package childjob

import (
	"os"
	"os/exec"
	"syscall"
)

// tieToParent has the kernel kill the child when its parent ends (an
// interrupted agent exits while the child works, or is killed): work
// nobody waits for is not finished, and its memory is not held. So tied,
// the child gets a process group of its own: a terminal's Ctrl-C goes to
// the parent alone, which ends the child itself, where it also reached
// the child before the child had set its signals aside (1 check in 49
// ended so, and was said as a child killed, not as the stop it was).
func tieToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// raiseOOMScore makes this process the kernel's first choice under
// memory pressure: the child, which holds what the parent would otherwise
// hold once, not the agent.
func raiseOOMScore() {
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
}
