//go:build mnn

package mnn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/voiceassistant/voice/internal/derived"
)

// MNN checks none of an export's files: a corrupt or cut-short
// llm.mnn.weight (a page a mirror sent, a download cut at a matching
// length) crashes the engine with SIGSEGV at the first prefill, at every
// start, a crash loop under a service manager. So a load that has no
// sealed pool to map (its first, or every one where no pool can be made)
// runs in a child process first (this binary again, with envCheck set):
// the child loads the model, runs a token and exits; only if it does is
// the pool sealed and the model loaded here. Later starts map the sealed
// pool and pay nothing.
const envCheck = "VOICE_MNN_CHECK"

// checkRequest is what a parent puts in envCheck for its check child:
// the model as the parent loads it (the config file, the settings over
// it, the threads: MNN lays out the pool by them), and the parent's pid,
// so that the variable left in an environment (exported by hand, kept by
// a service manager) makes no other process a check child.
type checkRequest struct {
	Parent     int            `json:"parent"`
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

// The child's side: it loads the model its parent names, and exits.
func init() {
	value, ok := os.LookupEnv(envCheck)
	if !ok {
		return
	}
	// Meant for this process alone: what it starts is no check child.
	os.Unsetenv(envCheck)
	var req checkRequest
	if err := json.Unmarshal([]byte(value), &req); err != nil || req.Parent != os.Getppid() || req.Dir == "" {
		slog.Warn("mnn: " + envCheck + " in the environment is ignored: the agent sets it only for the check process it starts itself; unset it")
		return
	}
	checking = true
	m, err := Open(Config{Dir: req.Dir, ConfigFile: req.ConfigFile, Settings: req.Settings, Threads: req.Threads, MaxNewTokens: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = m.Close()
	os.Exit(0)
}

// checkProgram is the program the check runs: this one, or a test's.
var checkProgram = os.Executable

// checkInChild loads the model of cfg in a child process, which makes and
// seals its pool where one is made, and returns an error that says what
// happened if the child does not load it (wrapping ErrCorrupt if the
// files crash the engine).
func checkInChild(cfg Config) error {
	self, err := checkProgram()
	if err != nil {
		slog.Debug("mnn: the model's load is not checked in a child", "err", err)
		return nil
	}
	req, err := json.Marshal(checkRequest{Parent: os.Getpid(), Dir: cfg.Dir, ConfigFile: cfg.ConfigFile, Settings: cfg.Settings, Threads: cfg.Threads})
	if err != nil {
		return fmt.Errorf("mnn: settings: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), envCheck+"="+string(req))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		// This binary cannot run itself (under an emulator without
		// binfmt, as the arm64 tests run it): load it here, as before.
		slog.Debug("mnn: the model's load is not checked in a child", "err", err)
		return nil
	}
	stop := derived.Stopping()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err = <-waited:
	case <-stop:
		cancel()
		err = <-waited
	}
	return checkVerdict(cfg.Dir, err, stderr.String(), closed(stop), errors.Is(ctx.Err(), context.DeadlineExceeded))
}

// closed tells whether ch is closed, without waiting.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// checkVerdict is what the check of the model in dir says, from the
// child's end (err, and what it wrote on stderr), whether the parent was
// stopped by then, and whether the check ran out of time. A stop wins
// over whatever the child died of: Ctrl-C reaches the child too (it is
// in the terminal's process group), often before the parent sees its own
// signal, and a child killed because we stopped is no corrupt file. The
// pool the child made is not sealed then, so the next start checks again.
func checkVerdict(dir string, err error, stderr string, stopped, timedOut bool) error {
	if err == nil {
		return nil
	}
	signal, fault := childSignal(err, stderr)
	switch {
	case stopped:
		return fmt.Errorf("mnn: %s: interrupted while its load was checked", dir)
	case signal != "" && !fault && !timedOut:
		return fmt.Errorf("mnn: %s: the check of its load was ended by a signal (%s: an interrupt, a stop, or the system out of memory), not by its files; start again", dir, signal)
	case timedOut:
		return fmt.Errorf("mnn: %s: loading it and running a token took over %v in a check, which a whole export never does: one of its files is %w", dir, checkTimeout, ErrCorrupt)
	case fault:
		return fmt.Errorf("mnn: %s: its files crash the engine (%s while loading it and running a token): one is %w", dir, signal, ErrCorrupt)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if line := strings.TrimSpace(lines[len(lines)-1]); line != "" {
		return errors.New(line)
	}
	return fmt.Errorf("mnn: %s: the model did not load in a check (%w)", dir, err)
}

// faults are the signals of a fault in the engine, what corrupt weights
// raise (an access past the file's end, a wild jump, an abort in one of
// MNN's own checks), as against those sent to end a process (Ctrl-C, a
// service manager's SIGTERM, the OOM killer's SIGKILL).
var faults = map[syscall.Signal]string{
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL",
	syscall.SIGFPE: "SIGFPE", syscall.SIGABRT: "SIGABRT", syscall.SIGTRAP: "SIGTRAP", syscall.SIGSYS: "SIGSYS",
}

// childSignal names the signal that ended the child ("" if none did), and
// whether it is a fault: the kernel's, or the one the Go runtime reports
// on its first line when the fault was in C ("SIGSEGV: segmentation
// violation", then exit status 2; "SIGQUIT: quit" for Ctrl-\).
func childSignal(err error, stderr string) (signal string, fault bool) {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			_, fault = faults[status.Signal()]
			return exit.ProcessState.String(), fault
		}
	}
	for _, line := range strings.Split(stderr, "\n") {
		if sig, what, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(sig, "SIG") && strings.ToUpper(sig) == sig && !strings.Contains(sig, " ") {
			for _, name := range faults {
				fault = fault || name == sig
			}
			return sig + " (" + what + ")", fault
		}
	}
	return "", false
}
