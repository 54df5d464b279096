package childjob

import (
	"cmp"
	"errors"
	"os"
	"strings"
	"syscall"
)

// signals are the signals a child's end is told by, by the names the Go
// runtime reports them with, and whether each is a fault (what a bad
// access, a wild jump or a C library's abort raises) or is sent to end a
// process.
var signals = []struct {
	signal syscall.Signal
	name   string
	fault  bool
}{
	{syscall.SIGSEGV, "SIGSEGV", true}, {syscall.SIGBUS, "SIGBUS", true}, {syscall.SIGILL, "SIGILL", true},
	{syscall.SIGFPE, "SIGFPE", true}, {syscall.SIGABRT, "SIGABRT", true}, {syscall.SIGTRAP, "SIGTRAP", true},
	{syscall.SIGSYS, "SIGSYS", true},
	{syscall.SIGKILL, "SIGKILL", false}, {syscall.SIGTERM, "SIGTERM", false}, {syscall.SIGINT, "SIGINT", false},
	{syscall.SIGHUP, "SIGHUP", false}, {syscall.SIGQUIT, "SIGQUIT", false}, {syscall.SIGPIPE, "SIGPIPE", false},
}

// ended classifies a child's end: its state, what it wrote on stderr,
// and whether its time had run out (its context killed it then).
func ended(state *os.ProcessState, stderr string, timedOut bool) Result {
	how := state.String()
	status, _ := state.Sys().(syscall.WaitStatus)
	switch {
	case state.Success():
		return Result{End: Done, How: how}
	case status.Signaled() && timedOut && status.Signal() == syscall.SIGKILL:
		return Result{End: TimedOut, How: how}
	case status.Signaled():
		return bySignal(status.Signal(), how)
	}
	report := runtimeReport(stderr)
	how = cmp.Or(report, how)
	if name, _, ok := strings.Cut(strings.TrimPrefix(report, "[signal "), ": "); ok {
		for _, s := range signals {
			if s.name == name {
				return bySignal(s.signal, how)
			}
		}
	}
	if state.ExitCode() == 1 && report == "" {
		return Result{End: Failed, How: how, Err: errors.New(cmp.Or(lastLine(stderr), "a child process failed ("+how+") and said nothing"))}
	}
	return Result{End: Crashed, How: how}
}

// bySignal is the Result of a child ended by sig.
func bySignal(sig syscall.Signal, how string) Result {
	for _, s := range signals {
		if s.signal == sig && s.fault {
			return Result{End: Faulted, Signal: sig, How: how}
		}
	}
	return Result{End: Killed, Signal: sig, How: how}
}

// runtimeReport is the line the Go runtime starts its report of a crash
// with ("" if stderr has none): a panic's, a fatal error's, or a
// signal's it caught, which is the process's own where the fault was in
// C code ("SIGSEGV: segmentation violation", then exit status 2); for a
// fatal error that a signal caused, the signal's line after it.
func runtimeReport(stderr string) string {
	lines := strings.Split(stderr, "\n")
	for i, line := range lines {
		switch {
		case strings.HasPrefix(line, "panic: "):
			return line
		case strings.HasPrefix(line, "fatal error: "):
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "[signal SIG") {
				return lines[i+1]
			}
			return line
		case isSignalLine(line):
			return line
		}
	}
	return ""
}

// isSignalLine tells whether line is the Go runtime's name of a signal it
// caught: "SIGSEGV: segmentation violation".
func isSignalLine(line string) bool {
	name, _, ok := strings.Cut(line, ": ")
	return ok && len(name) > 3 && strings.HasPrefix(name, "SIG") && strings.ToUpper(name) == name && !strings.Contains(name, " ")
}

// lastLine is the last line of s that says something.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// reportBytes is how much of a child's stderr report keeps at its start
// and at its end.
const reportBytes = 64 << 10

// report is what a child writes on stderr, its start and its end kept
// (where the Go runtime's report of a crash and a job's error are), the
// middle dropped: a child's library may print without end.
type report struct {
	head, tail []byte
	dropped    bool
}

func (r *report) Write(p []byte) (int, error) {
	n := len(p)
	if room := reportBytes - len(r.head); room > 0 {
		k := min(room, len(p))
		r.head, p = append(r.head, p[:k]...), p[k:]
	}
	r.tail = append(r.tail, p...)
	if len(r.tail) > 2*reportBytes {
		r.tail = r.tail[:copy(r.tail, r.tail[len(r.tail)-reportBytes:])]
		r.dropped = true
	}
	return n, nil
}

func (r *report) String() string {
	if r.dropped {
		return string(r.head) + "\n...\n" + string(r.tail)
	}
	return string(r.head) + string(r.tail)
}
