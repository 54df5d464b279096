// Package childjob runs a part of this program's work in a child process:
// the program again, started to do one job and exit. The work that takes
// the most memory once and never again (making an ONNX model's optimized
// copy, deriving the synthesizer's graph rewrites) leaves its memory
// behind with the child, and a crash or an OOM kill of what it runs (MNN
// on corrupt weights) ends the child, not the agent.
//
// A job is served by the package that owns it, from its init (Serve): the
// child does its job there, after the packages the job needs are
// initialised and before main, and exits. Run starts it. What the parent
// and the child share:
//
//   - The child is told its job by its one argument, which names the job
//     and the parent's pid, and is given its request on a pipe; a command
//     line that names a job the way a parent does, run by anyone else, is
//     refused. No environment variable is read: one left exported in a
//     shell or a service's environment cannot make an ordinary run a
//     child, nor pass itself on to what the child starts.
//   - The child dies with its parent (on Linux) and is the kernel's first
//     choice under memory pressure; it ignores the signals that stop the
//     parent (Ctrl-C, SIGTERM, SIGHUP), which ends it itself.
//   - The parent's stop (derived.Stopping) wins over whatever the child
//     did meanwhile: a child ended because the agent was stopped is no
//     verdict on its work.
//   - How the child ended is classified once (Result), and each caller
//     decides what that means for its work.
package childjob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"time"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/memstat"
)

// jobArg starts a child's one argument: jobArg, the job's name, ":" and
// its parent's pid.
const jobArg = "-child-job="

// answerFD is the descriptor the child writes its answer on: not its
// stdout, where a C library may print.
const answerFD = 3

// maxAnswer bounds what the parent reads of an answer.
const maxAnswer = 1 << 20

// waitDelay bounds the wait for the child's stderr once it has exited:
// what it started may hold the pipe open (a grandchild killed with it on
// Linux; elsewhere, not).
const waitDelay = 5 * time.Second

// End is how a child's job ended.
type End int

const (
	// NotStarted: no child ran, because this program cannot start itself
	// (under an emulator without binfmt, as the arm64 tests run it);
	// Result.Err says why. The caller does the work in its own process.
	NotStarted End = iota
	// Stopped: the parent was stopped (derived.Stopping) before or while
	// the child worked; the child, if started, was ended.
	Stopped
	// Done: the job returned; Result.Answer is what it answered.
	Done
	// Failed: the job returned an error, Result.Err (the last line it
	// wrote on stderr).
	Failed
	// Faulted: a fault ended the child (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
	// SIGABRT, SIGTRAP, SIGSYS), as the kernel or the Go runtime reports
	// it: what corrupt input makes a C library do.
	Faulted
	// Killed: a signal sent to end a process ended the child: the OOM
	// killer's SIGKILL, or another (the child ignores Ctrl-C, SIGTERM and
	// SIGHUP, which stop its parent, but not kill -9 or Ctrl-\).
	Killed
	// Crashed: the child ended otherwise: a Go panic or fatal error, or
	// an exit status that no job returns.
	Crashed
	// TimedOut: the child ran past its time and was killed.
	TimedOut
)

// Result is how a child's job ended, and what it said.
type Result struct {
	End End
	// Answer is the job's answer (Done).
	Answer string
	// Signal is the signal that ended the child (Faulted, Killed), 0 if
	// none did.
	Signal syscall.Signal
	// How says how the child ended, for a message: the Go runtime's
	// report of a crash ("SIGSEGV: segmentation violation", "panic:
	// ..."), or else its exit ("signal: killed", "exit status 3").
	How string
	// Err is the job's error (Failed), or why no child started
	// (NotStarted).
	Err error
}

// KilledHow says how a child that a signal ended (Killed) was ended, for
// a message: by the OOM killer, most likely, where the signal was SIGKILL.
func (r Result) KilledHow() string {
	if r.Signal == syscall.SIGKILL {
		return "killed (out of memory?)"
	}
	return "ended (" + r.How + ")"
}

// executable is the program a child runs: this one, or a test's.
var executable = os.Executable

// Run has a child process do the job name (one that a package of this
// program serves, Serve) on request, encoded as JSON, in timeout at most.
// Its error is one of the request's encoding: how the child ended,
// including where it did not start, is the Result.
func Run(name string, request any, timeout time.Duration) (Result, error) {
	stop := derived.Stopping()
	if closed(stop) {
		return Result{End: Stopped}, nil
	}
	body, err := json.Marshal(request)
	if err != nil {
		return Result{}, fmt.Errorf("the request for a child process (%s): %w", name, err)
	}
	if !serves(name) {
		return Result{End: NotStarted, Err: fmt.Errorf("no package of this program serves %q", name)}, nil
	}
	self, err := executable()
	if err != nil {
		return Result{End: NotStarted, Err: err}, nil
	}
	answers, answerW, err := os.Pipe()
	if err != nil {
		return Result{End: NotStarted, Err: err}, nil
	}
	defer answers.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, jobArg+name+":"+strconv.Itoa(os.Getpid()))
	cmd.Env = append(os.Environ(), collector()...)
	cmd.Stdin = bytes.NewReader(body)
	cmd.ExtraFiles = []*os.File{answerW}
	var report report
	cmd.Stderr = &report
	cmd.WaitDelay = waitDelay
	tieToParent(cmd)
	// On Linux the child dies when the thread that started it ends, not
	// the process: this goroutine keeps that thread until the child is
	// gone, so that the Go runtime cannot end it meanwhile.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	answerW.Close()
	if err != nil {
		return Result{End: NotStarted, Err: err}, nil
	}
	answered := make(chan string, 1)
	go func() {
		answer, _ := io.ReadAll(io.LimitReader(answers, maxAnswer))
		_, _ = io.Copy(io.Discard, answers) // the rest, which the child must write to end
		answered <- string(answer)
	}()
	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // its error is the state's, read below
		close(waited)
	}()
	stopped := waitFor(waited, stop, cancel)
	answer := readAnswer(answered, answers)
	if stopped {
		return Result{End: Stopped}, nil
	}
	r := ended(cmd.ProcessState, report.String(), ctx.Err() == context.DeadlineExceeded)
	r.Answer = answer
	return r, nil
}

// collector is the environment that has a child's Go collector run as
// this process's does. The child does its job from an init, before a main
// package's own settings are made (internal/gogc's, which keeps the fp32
// synthesizer's ring rewrite child at 375 MiB against 540-580 with Go's
// default, its heap holding a graph's copies as garbage; the memory limit
// a budget sets), so they reach it as the variables the Go runtime reads
// first.
func collector() []string {
	settings := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(settings)
	env := []string{"GOGC=off"}
	if percent := settings[0].Value.Uint64(); percent <= math.MaxInt32 {
		env[0] = "GOGC=" + strconv.FormatUint(percent, 10)
	}
	if limit := settings[1].Value.Uint64(); limit < math.MaxInt64 {
		env = append(env, "GOMEMLIMIT="+strconv.FormatUint(limit, 10))
	}
	return env
}

// ErrOverBudget is in FitsBudget's error.
var ErrOverBudget = errors.New("over the memory budget")

// FitsBudget refuses a child that takes need bytes of anonymous memory
// at its peak where, with what this process holds, that is over
// budgetMiB (0: no budget): a child's memory is beside its parent's, and
// the start that runs children is the one with the highest peak, which
// the budget is there for.
func FitsBudget(need int64, budgetMiB int) error {
	if budgetMiB <= 0 {
		return nil
	}
	held := memstat.Now().Anon
	if held+need <= int64(budgetMiB)<<20 {
		return nil
	}
	return fmt.Errorf("with the %d MiB this process holds, that is %w of %d MiB", held>>20, ErrOverBudget, budgetMiB)
}

// waitFor waits for the child (waited closes when it has exited) or the
// stop, whichever comes first, and ends the child on the stop (cancel
// kills it). It tells whether the stop came: where both have, the stop
// wins (a select takes either by chance), for the child's end then says
// nothing the stop does not (Ctrl-C reaches a child in the terminal's
// process group, often before the parent sees it).
func waitFor(waited <-chan struct{}, stop <-chan struct{}, cancel func()) bool {
	select {
	case <-waited:
	case <-stop:
		cancel()
		<-waited
	}
	return closed(stop)
}

// readAnswer is what came on the answer pipe, read whole once the child
// has exited; a pipe still held open after waitDelay (by what the child
// started) is closed.
func readAnswer(answered <-chan string, answers *os.File) string {
	select {
	case answer := <-answered:
		return answer
	case <-time.After(waitDelay):
		answers.Close()
		return <-answered
	}
}

// closed tells whether ch is closed, without waiting (nil is never).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
