package onnx

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/voiceassistant/voice/internal/childjob"
	"github.com/voiceassistant/voice/internal/derived"
)

// An optimized copy is made and checked in a child process (the job
// copyJob, which package onnx serves, so any binary or test binary that
// links the package can be the child). Made in the agent's own process,
// the copy held the original session, its prepacked weights on the heap,
// while it loaded the copy and ran both: the full-size fp32 X-ASR took
// 1.22 GB of anonymous memory at its first load against 43 MB at later
// ones, at the start the device was most likely to be OOM-killed. In a
// child, that memory is gone when the child exits, and a kill under
// memory pressure ends the child, not the agent: the agent then loads the
// model as it is.
const copyJob = "onnx-copy"

// copyRequest is what the child is asked: everything the parent's
// configure sets is in Options, which is plain data.
type copyRequest struct {
	Library      string // the library the parent loaded
	Model        string
	Dir          string // the folder the copy is made in
	Options      Options
	Inputs       []string
	Outputs      []string
	MinPrepacked int64
}

func init() { childjob.Serve(copyJob, serveCopy) }

// serveCopy makes and checks the copy req asks for, in the child: its
// verdict.
func serveCopy(req copyRequest) (string, error) {
	if err := Init(req.Library); err != nil {
		return "", err
	}
	minPrepacked = req.MinPrepacked
	beforeCopy()
	return checkedCopy(req.Model, req.Dir, req.Options, req.Inputs, req.Outputs)
}

// beforeCopy runs in the child before it makes the copy: a test's fault.
var beforeCopy = func() {}

// copyTimeout bounds the child. The full-size fp32 X-ASR's copy takes
// 15 s on a desktop core; a child that takes 40 times that is stuck.
var copyTimeout = 10 * time.Minute

// errStopped ends a load whose copy was being made when the process was
// interrupted (derived.Stopping): nothing is loaded after a Ctrl-C.
var errStopped = errors.New("interrupted while its optimized copy was being made; the next start makes it again")

// runJob is childjob.Run, or a test's that starts no child.
var runJob = childjob.Run

// copyWhere makes and checks the copy in making, in a child process, or
// here where this binary cannot start itself (under an emulator without
// binfmt, as the arm64 tests run it): checkedCopy's verdict and error.
//
// A child that crashes, or takes over copyTimeout, gets a verdict that
// refuses the copy: its causes (the model, ONNX Runtime, the CPU and the
// options, which name the copy's folder) are the same at the next start.
// One killed (the OOM killer's SIGKILL) gets an error: memory is what the
// moment has free, and a copy saves memory at every later start, so the
// next start tries again.
func copyWhere(path, making string, opts Options, inputs, outputs []string) (string, error) {
	r, err := runJob(copyJob, copyRequest{Library: env.path, Model: path, Dir: making, Options: opts,
		Inputs: inputs, Outputs: outputs, MinPrepacked: minPrepacked}, copyTimeout)
	if err != nil {
		return "", err
	}
	remove := filepath.Dir(making)
	switch r.End {
	case childjob.NotStarted:
		slog.Debug("onnx: making the optimized copy in this process", "model", path, "why", r.Err)
		return checkedCopy(path, making, opts, inputs, outputs)
	case childjob.Stopped:
		return "", errStopped
	case childjob.Done:
		return r.Answer, nil
	case childjob.Failed:
		// An error the child reported (a full disk), as one made here
		// would be: nothing is kept, and the next start tries again.
		return "", r.Err
	case childjob.Killed:
		return "", fmt.Errorf("the child process making the optimized copy was %s: the next start tries again; with too little memory for it, VOICE_ORT_MAPPED_WEIGHTS=0 loads the models as they are", r.KilledHow())
	case childjob.TimedOut:
		return fmt.Sprintf("%sin %v (a child process made it and was ended; remove %s to try again)", copyNotMade, copyTimeout, remove), nil
	}
	// A fault in ONNX Runtime, or the Go runtime's report of a panic.
	return fmt.Sprintf("%sONNX Runtime crashed (%s; remove %s to try again)", copyNotMade, r.How, remove), nil
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

// roomInBudget refuses a copy whose making would take this process and
// its child over budgetMiB of anonymous memory (0: no budget).
func roomInBudget(need int64, budgetMiB int) error {
	if err := childjob.FitsBudget(need, budgetMiB); err != nil {
		return fmt.Errorf("its first load makes an optimized copy, which takes about %d MiB of anonymous memory while it is made, in a child process (once: later starts map the copy); %w: start once with --memory-budget 0 where that memory is free, or set VOICE_ORT_MAPPED_WEIGHTS=0 to load the models as they are (more memory at every start)",
			need>>20, err)
	}
	return nil
}
