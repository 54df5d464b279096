package onnx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/memstat"
)

// An optimized copy is made and checked in a child process: this binary
// again, started with envCopy set to its parent's pid, which package
// onnx's init reads (so any binary or test binary that links the package
// can be the child). Made in the agent's own process, the copy held the
// original session, its prepacked weights on the heap, while it loaded
// the copy and ran both: the full-size fp32 X-ASR took 1.22 GB of
// anonymous memory at its first load against 43 MB at later ones, at the
// start the device was most likely to be OOM-killed. In a child, that
// memory is gone when the child exits, and a kill under memory pressure
// ends the child, not the agent: the agent then loads the model as it is.
const envCopy = "VOICE_ORT_COPY"

// copyRequest is what the child is told on its stdin: everything the
// parent's configure sets is in Options, which is plain data.
type copyRequest struct {
	Library      string // the library the parent loaded
	Model        string
	Dir          string // the folder the copy is made in
	Options      Options
	Inputs       []string
	Outputs      []string
	MinPrepacked int64
}

// The child's side. The variable goes at once, so that nothing this
// process starts takes it for its own; and one not set by this process's
// parent (left exported in a shell, or copied into a service's
// environment) is ignored, where it would otherwise make every command a
// child that waits for a request.
func init() {
	parent, ok := os.LookupEnv(envCopy)
	if !ok {
		return
	}
	_ = os.Unsetenv(envCopy)
	if parent != strconv.Itoa(os.Getppid()) || !fromPipe(os.Stdin) {
		return
	}
	if err := serveCopy(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// fromPipe tells whether f is a pipe, as the request comes (a terminal
// would have the child wait for one).
func fromPipe(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeNamedPipe != 0
}

// serveCopy makes and checks the copy the parent asks for on stdin, and
// writes its verdict into the copy's folder.
func serveCopy() error {
	// The parent ends this process when it is stopped. Ended first by
	// the same signal (a terminal's Ctrl-C goes to the process group,
	// systemd's SIGTERM to the whole service), the child would look
	// crashed to a parent that has not yet seen the signal itself.
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// Under memory pressure the kernel ends this process before any other.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	var req copyRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return fmt.Errorf("onnx: the request for an optimized copy: %w", err)
	}
	if err := Init(req.Library); err != nil {
		return err
	}
	minPrepacked = req.MinPrepacked
	beforeCopy()
	verdict, err := checkedCopy(req.Model, req.Dir, req.Options, req.Inputs, req.Outputs)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(req.Dir, mappedVerdict), []byte(verdict), 0o644)
}

// beforeCopy runs in the child before it makes the copy: a test's fault.
var beforeCopy = func() {}

// copyTimeout bounds the child. The full-size fp32 X-ASR's copy takes
// 15 s on a desktop core; a child that takes 40 times that is stuck.
var copyTimeout = 10 * time.Minute

// errStopped ends a load whose copy was being made when the process was
// interrupted (derived.Stopping): nothing is loaded after a Ctrl-C.
var errStopped = errors.New("interrupted while its optimized copy was being made; the next start makes it again")

// copyWhere makes and checks the copy in making, in a child process, or
// here where this binary cannot start itself (under an emulator without
// binfmt, as the arm64 tests run it): checkedCopy's verdict and error.
func copyWhere(path, making string, opts Options, inputs, outputs []string) (string, error) {
	verdict, err := copyInChild(copyRequest{Library: env.path, Model: path, Dir: making, Options: opts,
		Inputs: inputs, Outputs: outputs, MinPrepacked: minPrepacked})
	var noChild childNotStarted
	if errors.As(err, &noChild) {
		slog.Debug("onnx: making the optimized copy in this process", "model", path, "why", err)
		return checkedCopy(path, making, opts, inputs, outputs)
	}
	return verdict, err
}

// childNotStarted is copyInChild's error where no child ran.
type childNotStarted struct{ err error }

func (e childNotStarted) Error() string { return "no child process: " + e.err.Error() }

// selfExecutable is os.Executable, or a test's binary that cannot start.
var selfExecutable = os.Executable

// copyInChild has a child process make and check the copy req asks for.
// A child that crashes, or takes over copyTimeout, gets a verdict that
// refuses the copy: its causes (the model, ONNX Runtime, the CPU and the
// options, which name the copy's folder) are the same at the next start.
// One killed (the OOM killer's SIGKILL) gets an error: memory is what the
// moment has free, and a copy saves memory at every later start, so the
// next start tries again.
func copyInChild(req copyRequest) (string, error) {
	stop := derived.Stopping()
	if stopped(stop) {
		return "", errStopped
	}
	self, err := selfExecutable()
	if err != nil {
		return "", childNotStarted{err}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), copyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), envCopy+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	tieToParent(cmd)
	if err := cmd.Start(); err != nil {
		return "", childNotStarted{err}
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if err := waitChild(waited, stop, cancel); err != nil {
		return "", err
	}
	return childVerdict(req, cmd.ProcessState, ctx.Err(), stderr.String())
}

// waitChild waits for the child's exit or the stop, whichever comes
// first; the stop wins where both have come (the child's exit then says
// nothing the stop does not), and ends the child (cancel kills it).
func waitChild(waited <-chan error, stop <-chan struct{}, cancel func()) error {
	select {
	case <-waited:
	case <-stop:
		cancel()
		<-waited
	}
	if stopped(stop) {
		return errStopped
	}
	return nil
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// childVerdict reads the verdict of a child that ended as state says.
func childVerdict(req copyRequest, state *os.ProcessState, timedOut error, stderr string) (string, error) {
	status, _ := state.Sys().(syscall.WaitStatus)
	switch {
	case timedOut != nil:
		return fmt.Sprintf("%sin %v (a child process made it and was ended; remove %s to try again)", copyNotMade, copyTimeout, filepath.Dir(req.Dir)), nil
	case status.Signaled() && status.Signal() == syscall.SIGKILL:
		return "", fmt.Errorf("the child process making the optimized copy was killed (out of memory?): the next start tries again; with too little memory for it, VOICE_ORT_MAPPED_WEIGHTS=0 loads the models as they are")
	case state.Success():
		verdict, err := os.ReadFile(filepath.Join(req.Dir, mappedVerdict))
		if err != nil {
			return "", fmt.Errorf("the child process making the optimized copy gave no verdict: %w", err)
		}
		return string(verdict), nil
	case state.ExitCode() == 1:
		// An error the child reported (a full disk), as one made here
		// would be: nothing is kept, and the next start tries again.
		return "", errors.New(lastLine(stderr))
	}
	// Killed by another signal, or the Go runtime's report of a fault in
	// C code or a panic (exit status 2), its first line the cause.
	crash := state.String()
	if first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n"); first != "" {
		crash += ": " + first
	}
	return fmt.Sprintf("%sONNX Runtime crashed (%s; remove %s to try again)", copyNotMade, crash, filepath.Dir(req.Dir)), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// The anonymous memory a copy's making takes at its peak: per byte of
// the model's graph file and of its external data, per byte of the probe
// input, and besides them. The child holds the original session, its
// prepacked weights on the heap (about the weights' size; more for 4-bit
// ones, less where embeddings are most of the data), a graph file with
// its weights inline read whole, and the probe's tensors: its input, the
// outputs of two runs, in ONNX Runtime and copied out, and what the
// graph makes in between (a codec's caches, 24 MiB of its input, took
// 140 MiB). Fitted to the child's sampled peak on the full-size
// stand-ins (docs/performance.md): fp32 X-ASR's encoder, 563 MiB inline,
// 1,195 MiB (estimated 1,198); the int4 encoder, 90 MiB of external data,
// 178 (191); the int4 synthesizer's graphs 74-91 (76-127: its embeddings
// count as packed weights), its codec's 174-186 (177-184); a tiny Smart
// Turn, 9.
const (
	copyPerGraphByte = 2.05
	copyPerDataByte  = 1.6
	copyPerProbeByte = 6
	copyBase         = 20 << 20
)

// copyMemory is the anonymous memory the making of a copy of the model
// at path, whose files are sources (ModelSources: the graph first), takes
// with a probe of inputs.
func copyMemory(path string, sources, inputs []string) int64 {
	graph, data := derived.Bytes(sources[:1]), derived.Bytes(sources[1:])
	return int64(copyPerGraphByte*float64(graph)+copyPerDataByte*float64(data)+copyPerProbeByte*float64(probeBytes(path, inputs))) + copyBase
}

// probeBytes is the size of the probe input ProbeInputs makes for the
// named inputs of the model at path (0 where it cannot be read).
func probeBytes(path string, inputs []string) int64 {
	declared, _, err := Declaration(path)
	if err != nil {
		return 0
	}
	var n int64
	for _, d := range declared {
		if !slices.Contains(inputs, d.Name) {
			continue
		}
		elements := int64(1)
		for _, dim := range d.Dimensions {
			elements *= max(dim, 1)
		}
		n += elements * max(elementBits(d.DataType), 8) / 8
	}
	return n
}

// errOverBudget ends a load whose copy's making would take the agent
// over its memory budget.
var errOverBudget = errors.New("over the memory budget")

// roomInBudget refuses a copy whose making would take this process and
// its child over budgetMiB of anonymous memory (0: no budget): the start
// that makes copies is the one with the highest peak, and the budget is
// there for it.
func roomInBudget(need int64, budgetMiB int) error {
	if budgetMiB <= 0 {
		return nil
	}
	held := memstat.Now().Anon
	if held+need <= int64(budgetMiB)<<20 {
		return nil
	}
	return fmt.Errorf("its first load makes an optimized copy, which takes about %d MiB of anonymous memory while it is made, in a child process (once: later starts map the copy); with the %d MiB this process holds, that is %w of %d MiB: start once with --memory-budget 0 where that memory is free, or set VOICE_ORT_MAPPED_WEIGHTS=0 to load the models as they are (more memory at every start)",
		need>>20, held>>20, errOverBudget, budgetMiB)
}
