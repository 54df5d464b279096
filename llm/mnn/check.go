//go:build mnn

package mnn

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/voiceassistant/voice/internal/childjob"
)

// MNN checks none of an export's files: a corrupt or cut-short
// llm.mnn.weight (a page a mirror sent, a download cut at a matching
// length) crashes the engine with SIGSEGV at the first prefill, at every
// start, a crash loop under a service manager. So a load that has no
// sealed pool to map (its first, or every one where no pool can be made)
// runs in a child process first (the job checkJob, internal/childjob):
// the child loads the model, runs a token and exits; only if it does is
// the pool sealed and the model loaded here. Later starts map the sealed
// pool and pay nothing.
const checkJob = "mnn-check"

// checkRequest is what a parent asks its check child: the model as the
// parent loads it (the config file, the settings over it, the threads:
// MNN lays out the pool by them).
type checkRequest struct {
	Dir        string         `json:"dir"`
	ConfigFile string         `json:"config_file,omitempty"`
	Settings   map[string]any `json:"settings,omitempty"`
	Threads    int            `json:"threads,omitempty"`
}

// checkTimeout bounds the child: a load and a token take seconds even on
// a small device, and the pool's making a minute at most.
const checkTimeout = 5 * time.Minute

// checking tells whether this process is a check child.
var checking bool

func init() { childjob.Serve(checkJob, check) }

// check loads the model its parent names, in the child.
func check(req checkRequest) (string, error) {
	checking = true
	m, err := Open(Config{Dir: req.Dir, ConfigFile: req.ConfigFile, Settings: req.Settings, Threads: req.Threads, MaxNewTokens: 1})
	if err != nil {
		return "", err
	}
	return "", m.Close()
}

// runJob is childjob.Run, or a test's.
var runJob = childjob.Run

// checkInChild loads the model of cfg in a child process, which makes and
// seals its pool where one is made, and returns an error that says what
// happened if the child does not load it (wrapping ErrCorrupt if the
// files crash the engine).
func checkInChild(cfg Config) error {
	r, err := runJob(checkJob, checkRequest{Dir: cfg.Dir, ConfigFile: cfg.ConfigFile, Settings: cfg.Settings, Threads: cfg.Threads}, checkTimeout)
	if err != nil {
		return fmt.Errorf("mnn: settings: %w", err)
	}
	if r.End == childjob.NotStarted {
		slog.Debug("mnn: the model's load is not checked in a child", "err", r.Err)
	}
	return checkVerdict(cfg.Dir, r)
}

// checkVerdict is what the check of the model in dir says, from how its
// child ended. Only a fault, or a load stuck past its time, blames the
// files: a child ended by a signal sent to end a process (the OOM
// killer's; Ctrl-\), or because this process was stopped, says nothing
// of them, and the advice for corrupt files would have the user delete a
// good model. The pool the child made is not sealed then, so the next
// start checks again.
func checkVerdict(dir string, r childjob.Result) error {
	switch r.End {
	case childjob.NotStarted, childjob.Done:
		// Not started: this binary cannot run itself (under an emulator
		// without binfmt, as the arm64 tests run it); it loads here, as
		// before.
		return nil
	case childjob.Stopped:
		return fmt.Errorf("mnn: %s: interrupted while its load was checked", dir)
	case childjob.Killed:
		return fmt.Errorf("mnn: %s: the check of its load was ended by a signal (%s: an interrupt, a stop, or the system out of memory), not by its files; start again", dir, r.How)
	case childjob.TimedOut:
		return fmt.Errorf("mnn: %s: loading it and running a token took over %v in a check, which a whole export never does: one of its files is %w", dir, checkTimeout, ErrCorrupt)
	case childjob.Faulted:
		return fmt.Errorf("mnn: %s: its files crash the engine (%s while loading it and running a token): one is %w", dir, r.How, ErrCorrupt)
	case childjob.Failed:
		return r.Err
	}
	return fmt.Errorf("mnn: %s: the check of its load crashed (%s)", dir, r.How)
}
