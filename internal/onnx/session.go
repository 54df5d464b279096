package onnx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/childjob"
	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/malloc"
)

// Float, Int64 and Int32 are the tensor element types the stages use.
const (
	Float = ort.TensorElementDataTypeFloat
	Int64 = ort.TensorElementDataTypeInt64
	Int32 = ort.TensorElementDataTypeInt32
)

// Tensor describes an input or output the code relies on. Dims lists the
// expected dimensions with -1 for "any"; a nil Dims checks only the type.
type Tensor struct {
	Name string
	Type ort.TensorElementDataType
	Dims []int64
}

func (t Tensor) String() string {
	return fmt.Sprintf("%s %s%v", t.Name, t.Type, t.Dims)
}

// Options tune a session. Zero values take ONNX Runtime's defaults except
// threads, which default to one: the stages run side by side on small
// devices and each is fastest single-threaded at its sizes.
type Options struct {
	// Library is an explicit library path (see FindLibrary).
	Library      string
	IntraThreads int
	InterThreads int
	// Optimization is ONNX Runtime's graph optimization level; the zero
	// value means all optimizations.
	Optimization ort.GraphOptimizationLevel
	// DisabledOptimizers are ONNX Runtime graph transformers not to run
	// (by name, as onnxruntime/core/optimizer/graph_transformer_utils.cc
	// makes them: "TransposeOptimizer").
	DisabledOptimizers []string
	// Profile, when set, has ONNX Runtime time every node of every run:
	// each session writes PROFILE-<model>_<time>.json when destroyed
	// (ReadProfile sums it by operator).
	Profile string
	// MemoryBudget, in MiB, refuses the load of a model whose optimized
	// copy is still to be made where the making would take the process
	// and its child over it (0: no budget).
	MemoryBudget int
}

// Session is an ONNX model checked against the tensors its caller uses.
type Session struct {
	*ort.DynamicAdvancedSession
	runsMu sync.Mutex
	runs   RunStats
	Path   string
	// Mapped is the optimized copy the session was loaded from, with its
	// prepacked weights mapped from a file (see mappedCopy); "" when the
	// model was loaded as it is.
	Mapped  string
	Inputs  []ort.InputOutputInfo
	Outputs []ort.InputOutputInfo
	// Moved, when set, says what a run reads and writes of its tensors,
	// in bytes, where their sizes overstate it (RunStats): a cache that a
	// run reads in part and writes in place.
	Moved func(inputs, outputs []ort.Value) (in, out int64)
}

// RunContext runs the session like Run, and stops it when ctx is done:
// ONNX Runtime checks a terminate flag between the graph's nodes, so a
// long run (a TTS prefill) ends within one node of a cancellation. It
// returns ctx's error then.
func (s *Session) RunContext(ctx context.Context, inputs, outputs []ort.Value) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	opts, err := ort.NewRunOptions()
	if err != nil {
		return fmt.Errorf("onnx: run options: %w", err)
	}
	defer opts.Destroy()
	stop := context.AfterFunc(ctx, func() { _ = opts.Terminate() })
	start := time.Now()
	err = s.RunWithOptions(inputs, outputs, opts)
	s.addRun(time.Since(start), inputs, outputs)
	stop()
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return err
}

// Run runs the session, as ONNX Runtime's Run, counting the call, its
// time and the bytes of its inputs and outputs (Runs).
func (s *Session) Run(inputs, outputs []ort.Value) error {
	start := time.Now()
	err := s.DynamicAdvancedSession.Run(inputs, outputs)
	s.addRun(time.Since(start), inputs, outputs)
	return err
}

// RunStats is what a session's runs took: how many, their wall time, and
// the bytes of tensors they were given and gave back (a decode step's KV
// cache, a codec's state: memory a run must at least read and write).
type RunStats struct {
	Calls             int
	Time              time.Duration
	InBytes, OutBytes int64
}

// Runs is what the session's runs took so far.
func (s *Session) Runs() RunStats {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	return s.runs
}

func (s *Session) addRun(d time.Duration, inputs, outputs []ort.Value) {
	var in, out int64
	if s.Moved != nil {
		in, out = s.Moved(inputs, outputs)
	} else {
		in, out = tensorBytes(inputs), tensorBytes(outputs)
	}
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	s.runs.Add(d, in, out)
}

// Add counts a run of d that read in bytes and wrote out.
func (r *RunStats) Add(d time.Duration, in, out int64) {
	r.Calls++
	r.Time += d
	r.InBytes += in
	r.OutBytes += out
}

// tensorBytes is the size of the tensors' data. The common types are
// measured by their data, which GetShape would copy a shape to learn.
func tensorBytes(vs []ort.Value) int64 {
	var n int64
	for _, v := range vs {
		switch t := v.(type) {
		case nil:
		case *ort.Tensor[float32]:
			n += 4 * int64(len(t.GetData()))
		case *ort.Tensor[int32]:
			n += 4 * int64(len(t.GetData()))
		case *ort.Tensor[int64]:
			n += 8 * int64(len(t.GetData()))
		default:
			if v.GetONNXType() == ort.ONNXTypeTensor {
				n += v.GetShape().FlattenedSize() * elementBits(ort.TensorElementDataType(v.DataType())) / 8
			}
		}
	}
	return n
}

// elementBits is the size of one element of type t, in bits (0 for
// strings and other types of no fixed size). ONNX Runtime's element types
// are ONNX's TensorProto data types, number for number.
func elementBits(t ort.TensorElementDataType) int64 {
	switch t {
	case ort.TensorElementDataTypeUint4, ort.TensorElementDataTypeInt4:
		return 4
	case ort.TensorElementDataTypeUint8, ort.TensorElementDataTypeInt8, ort.TensorElementDataTypeBool:
		return 8
	case ort.TensorElementDataTypeUint16, ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16:
		return 16
	case ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeUint32:
		return 32
	case ort.TensorElementDataTypeDouble, ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeUint64:
		return 64
	}
	return 0
}

// ErrModelMismatch is returned when a model's inputs or outputs are not
// the ones the code expects (a wrong or corrupt file).
var ErrModelMismatch = errors.New("model does not match")

// Open loads the model at path after checking that it declares the given
// inputs and outputs; the session feeds them in that order. hint tells the
// user how to get the model if it is missing.
func Open(path string, inputs, outputs []Tensor, opts Options, hint string) (*Session, error) {
	if err := Init(opts.Library); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model %s: %w; %s", path, err, hint)
	}
	ins, outs, err := Declaration(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, hint)
	}
	if err := checkBoth(path, inputs, outputs, ins, outs); err != nil {
		return nil, err
	}
	load := path
	if MappedWeights() {
		// A copy that cannot be made (a read-only or full cache) costs
		// memory, not the stage; but nothing is loaded after a stop, or
		// over the budget.
		load, err = mappedCopy(path, opts, names(inputs), names(outputs))
		if errors.Is(err, errStopped) || errors.Is(err, derived.ErrStopped) || errors.Is(err, childjob.ErrOverBudget) {
			return nil, fmt.Errorf("model %s: %w", path, err)
		}
		if err != nil {
			slog.Warn("onnx: loading the model as it is: no optimized copy with mapped weights", "model", path, "err", err)
			load = path
		}
	}
	if opts.Profile != "" {
		opts.Profile = profilePrefix(opts.Profile, path)
	}
	so, err := sessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	s, err := ort.NewDynamicAdvancedSession(load, names(inputs), names(outputs), so)
	if err != nil && load != path {
		slog.Warn("onnx: the optimized copy did not load; loading the model as it is, and making the copy again at the next load", "model", path, "copy", load, "err", err)
		forgetCopy(load)
		load = path
		s, err = ort.NewDynamicAdvancedSession(path, names(inputs), names(outputs), so)
	}
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	if load == path {
		load = ""
	} else {
		dropLoadPages(filepath.Join(filepath.Dir(load), mappedWeights))
	}
	// What the load freed (ONNX Runtime's graph transformations, the
	// copy's making) goes back to the system, not to the C heap's free
	// lists: 3-5 MiB less anonymous memory at the peak of a conversation,
	// as fast. A lower mmap threshold (MALLOC_MMAP_THRESHOLD_=128 KiB) would
	// give back 45-50 MiB, but makes every run's large tensors a fresh
	// mapping: voice to voice 450 -> 1,860-2,020 ms (docs/performance.md).
	malloc.Trim()
	return &Session{DynamicAdvancedSession: s, Path: path, Mapped: load, Inputs: ins, Outputs: outs}, nil
}

// OpenData loads a model held in memory after checking its inputs and
// outputs as Open does; name says which model in errors. Its weights are
// inline, or in external data files in dataDir (their locations are
// relative to it, as to a model file's folder). It makes no optimized
// copy: it is for short-lived sessions (a derived graph's check).
func OpenData(model []byte, dataDir, name string, inputs, outputs []Tensor, opts Options) (*Session, error) {
	if err := Init(opts.Library); err != nil {
		return nil, err
	}
	ins, outs, err := declaration(model)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	if err := checkBoth(name, inputs, outputs, ins, outs); err != nil {
		return nil, err
	}
	opts.Profile = ""
	so, err := sessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if dataDir != "" {
		// onnxruntime/core/session/onnxruntime_session_options_config_keys.h,
		// kOrtSessionOptionsModelExternalInitializersFileFolderPath.
		if err := so.AddSessionConfigEntry("session.model_external_initializers_file_folder_path", dataDir); err != nil {
			return nil, fmt.Errorf("model %s: %w", name, err)
		}
	}
	s, err := ort.NewDynamicAdvancedSessionWithONNXData(model, names(inputs), names(outputs), so)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	return &Session{DynamicAdvancedSession: s, Path: name, Inputs: ins, Outputs: outs}, nil
}

// checkBoth checks a model's declared inputs and outputs against those
// its caller uses.
func checkBoth(path string, inputs, outputs []Tensor, ins, outs []ort.InputOutputInfo) error {
	if err := check(path, "input", inputs, ins); err != nil {
		return err
	}
	return check(path, "output", outputs, outs)
}

// sessionOptions are ONNX Runtime's options for opts; the caller
// destroys them.
func sessionOptions(opts Options) (*ort.SessionOptions, error) {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx: session options: %w", err)
	}
	if err := configure(so, opts); err != nil {
		so.Destroy()
		return nil, fmt.Errorf("onnx: session options: %w", err)
	}
	return so, nil
}

func configure(so *ort.SessionOptions, opts Options) error {
	intra, inter := max(opts.IntraThreads, 1), max(opts.InterThreads, 1)
	if err := so.SetIntraOpNumThreads(intra); err != nil {
		return err
	}
	if err := so.SetInterOpNumThreads(inter); err != nil {
		return err
	}
	// Worker threads that spin between runs burn the cores the other
	// stages (and, on a small SoC, everything else) need; a stage runs every
	// few tens of ms, so parking costs nothing measurable.
	if intra > 1 {
		if err := so.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			return err
		}
	}
	if inter > 1 {
		if err := so.AddSessionConfigEntry("session.inter_op.allow_spinning", "0"); err != nil {
			return err
		}
	}
	// No arena and no memory patterns: intermediate tensors come from
	// malloc and go back to it after each run, rather than from an arena
	// per session that grows to the largest run's needs and keeps them
	// (by doubling chunks), or from a block planned for every tensor of a
	// run. With glibc's one arena (internal/malloc) what one model frees
	// serves the next: the int4 assistant peaked at 1,036 MiB in a
	// replayed conversation instead of 1,202, and its stages, loaded one
	// after another, at 502-516 instead of 577-580, as fast.
	if err := so.SetCpuMemArena(false); err != nil {
		return err
	}
	if err := so.SetMemPattern(false); err != nil {
		return err
	}
	if opts.Profile != "" {
		if err := so.EnableProfiling(opts.Profile); err != nil {
			return err
		}
	}
	if len(opts.DisabledOptimizers) > 0 {
		if err := so.AddSessionConfigEntry("optimization.disable_specified_optimizers", strings.Join(opts.DisabledOptimizers, ";")); err != nil {
			return err
		}
	}
	return so.SetGraphOptimizationLevel(opts.level())
}

func (opts Options) level() ort.GraphOptimizationLevel {
	if opts.Optimization == 0 {
		return ort.GraphOptimizationLevelEnableAll
	}
	return opts.Optimization
}

// graphKey names what of opts shapes the optimized graph ONNX Runtime
// saves: "" for the defaults, so that their copies keep their names.
func (opts Options) graphKey() string {
	if opts.level() == ort.GraphOptimizationLevelEnableAll && len(opts.DisabledOptimizers) == 0 {
		return ""
	}
	return fmt.Sprintf("level %d, without %s", opts.level(), strings.Join(opts.DisabledOptimizers, ";"))
}

// check compares what the code expects with what the model declares.
func check(path, kind string, want []Tensor, have []ort.InputOutputInfo) error {
	byName := map[string]ort.InputOutputInfo{}
	var declared []string
	for _, h := range have {
		byName[h.Name] = h
		declared = append(declared, h.String())
	}
	var problems []string
	for _, w := range want {
		h, ok := byName[w.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("no %s %q", kind, w.Name))
		case h.OrtValueType != ort.ONNXTypeTensor:
			problems = append(problems, fmt.Sprintf("%s %q is a %s, not a tensor", kind, w.Name, h.OrtValueType))
		case h.DataType != w.Type:
			problems = append(problems, fmt.Sprintf("%s %q is %s, expected %s", kind, w.Name, h.DataType, w.Type))
		case w.Dims != nil && !dimsMatch(w.Dims, h.Dimensions):
			problems = append(problems, fmt.Sprintf("%s %q has shape %v, expected %v (-1: any)", kind, w.Name, h.Dimensions, w.Dims))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s: %s (the model declares: %s)", ErrModelMismatch, path,
			strings.Join(problems, "; "), strings.Join(declared, ", "))
	}
	return nil
}

// dimsMatch accepts symbolic dimensions (-1 in the file) wherever the
// rank matches, since exporters mark batch and time axes dynamic.
func dimsMatch(want []int64, have ort.Shape) bool {
	if len(want) != len(have) {
		return false
	}
	for i, w := range want {
		if w >= 0 && have[i] >= 0 && w != have[i] {
			return false
		}
	}
	return true
}

func names(ts []Tensor) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
