package childjob

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// asked is the job this process was started to do, "" in an ordinary run.
var asked string

// This package's init runs before that of any package that serves a job,
// so each finds the job asked here.
func init() {
	if len(os.Args) != 2 || !strings.HasPrefix(os.Args[1], jobArg) {
		return
	}
	name, parent, _ := strings.Cut(strings.TrimPrefix(os.Args[1], jobArg), ":")
	if parent != strconv.Itoa(os.Getppid()) || !fromPipe(os.Stdin) {
		fmt.Fprintf(os.Stderr, "%s: %s...: that argument is for the child processes the program starts itself, which get their request from it on a pipe\n",
			filepath.Base(os.Args[0]), jobArg)
		os.Exit(2)
	}
	asked = name
}

// fromPipe tells whether f is a pipe, as a request comes (a terminal
// would have the child wait for one).
func fromPipe(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeNamedPipe != 0
}

// served are the names of the jobs this program serves.
var served sync.Map

func serves(name string) bool {
	_, ok := served.Load(name)
	return ok
}

// Serve registers the job name, which do does. Call it from the init of
// the package that owns the job: in a child started for it (by Run), it
// does the job there and exits; anywhere else it returns at once. do is
// given the request Run was given; its answer goes back as Result.Answer,
// and its error, printed on stderr, as Result.Err.
func Serve[Request any](name string, do func(Request) (answer string, err error)) {
	if _, dup := served.LoadOrStore(name, true); dup {
		panic("childjob: two packages serve " + name)
	}
	if name == asked {
		os.Exit(serve(do))
	}
}

// serve does the job asked of this process: its exit status.
func serve[Request any](do func(Request) (string, error)) int {
	// The parent ends this process when it is stopped. Ended first by the
	// same signal (Ctrl-C reaches the terminal's whole process group,
	// systemd's SIGTERM the whole service), the child would seem killed
	// to a parent that has not yet seen the signal itself.
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	raiseOOMScore()
	answers := os.NewFile(answerFD, "answer")
	syscall.CloseOnExec(answerFD) // what the job starts does not hold it
	var req Request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintf(os.Stderr, "the request from the parent process: %v\n", err)
		return 1
	}
	answer, err := do(req)
	if err == nil {
		_, err = io.WriteString(answers, answer)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
