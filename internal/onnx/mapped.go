package onnx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/derived"
)

// Where ONNX Runtime writes an optimized copy of a model, and the file
// that says whether the copy is worth loading.
const (
	mappedModel   = "model.onnx"
	mappedWeights = "weights.bin"
	mappedVerdict = "verdict"
)

// mappedCopy returns what to load for the model at path: an optimized copy
// of it whose weights, prepacked (rearranged for this CPU's kernels), are
// in a file ONNX Runtime maps, or path itself where a copy gains nothing
// or cannot be trusted.
//
// ONNX Runtime prepacks a MatMul's weights at load, onto the heap, beside
// the originals (which it maps from an external data file). Saved with
// session.save_external_prepacked_constant_initializers, the prepacked
// weights go into the copy's data file and later loads map them instead
// (onnxruntime PR #23069; the keys in
// include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h):
// the fp32 synthesizer's decode step then adds 42 MiB of anonymous memory
// instead of 331, and the whole int4 synthesizer (ONNX Runtime 1.30, whose
// MatMulNBits saves its packed layout; 1.24 did not) 73-83 MiB against
// 312-318 on 1.24 (docs/performance.md, run D).
//
// A copy is used only after it has been checked: ONNX Runtime writes the
// packed blobs where a kernel cannot use them as they lie (relayout moves
// them), and a copy that does not reproduce the original is worse than
// none. So the original and the copy each run once on the same probe
// input (ProbeInputs), and the copy is kept only if every output agrees
// (sameOutputs). A copy refused is not made again: the verdict, with its
// reason, stays beside it, and the log says it once.
//
// The copy is made once per model content, ONNX Runtime version, CPU and
// options that shape the graph (internal/derived), at its first load,
// which takes longer for it.
func mappedCopy(path string, opts Options, inputs, outputs []string) (string, error) {
	sources, err := ModelSources(path)
	if err != nil {
		return "", err
	}
	// The options that shape the optimized graph (graphKey) name the copy
	// too: a copy made under others is another graph.
	version := ort.GetVersion()
	if key := opts.graphKey(); key != "" {
		version += " " + key
	}
	dir, release, err := derived.Acquire("onnxruntime", version, sources...)
	if err != nil {
		return "", err
	}
	defer release()
	copyPath := filepath.Join(dir, mappedModel)
	switch verdict, err := os.ReadFile(filepath.Join(dir, mappedVerdict)); {
	case err != nil:
	case refused(string(verdict)):
		return path, nil
	case strings.TrimSpace(string(verdict)) != verdictMapped:
		// Damaged (a crash before it was written back, a full disk,
		// another program): taken for a refusal, it would keep the copy
		// off for good, unsaid.
		slog.Warn("onnx: the verdict on the optimized copy is damaged; making the copy again", "model", path, "verdict", filepath.Join(dir, mappedVerdict), "read", truncate(string(verdict), 64))
		forgetCopy(copyPath)
	default:
		err := derived.Verify(dir, mappedModel, mappedWeights)
		if err == nil {
			return copyPath, nil
		}
		// Damaged since it was made (or made before copies were
		// sealed): made again, as at the first load.
		level := slog.LevelWarn
		if errors.Is(err, derived.ErrUnsealed) {
			level = slog.LevelInfo
		}
		slog.Log(context.Background(), level, "onnx: the optimized copy is not as it was made; making it again", "model", path, "copy", copyPath, "why", err)
		forgetCopy(copyPath)
	}
	if err := roomForCopy(dir, sources); err != nil {
		return "", err
	}
	need := copyMemory(path, sources, inputs)
	if err := roomInBudget(need, opts.MemoryBudget); err != nil {
		return "", err
	}
	// What the first start costs, said where it is paid.
	slog.Info("onnx: making the model's optimized copy, in a child process: once for this model and runtime, and later loads map it",
		"model", path, "anonymous_mib_while_made", need>>20)
	opts.MemoryBudget, opts.Profile = 0, ""
	verdict, err := makeCopy(path, dir, opts, inputs, outputs)
	if err != nil {
		return "", err
	}
	if verdict != verdictMapped {
		// A copy that failed its check is worth a warning; one not
		// worth making or checking, a note.
		level := slog.LevelInfo
		if strings.HasPrefix(verdict, copyFailed) {
			level = slog.LevelWarn
		}
		slog.Log(context.Background(), level, "onnx: the model is loaded as it is, without an optimized copy (said once: later loads do the same)", "model", path, "why", verdict)
		copyPath = path
	}
	if err := derived.WriteFile(filepath.Join(dir, mappedVerdict), func(w io.Writer) error {
		_, err := io.WriteString(w, verdict+"\n")
		return err
	}); err != nil {
		return "", err
	}
	return copyPath, nil
}

// A copy's verdict is verdictMapped, for a copy that is loaded, or a
// refusal: one of the phrases below, then its reason. Any other content
// is damage. copyFailed starts the refusals of copies that failed.
const (
	verdictMapped = "mapped"
	noPrepacked   = "no prepacked weights saved"
	noProbeInput  = "no probe input for the model, so its copy cannot be checked: "
	noProbeRun    = "the model does not run on a probe input, so its copy cannot be checked: "
	copyFailed    = "the optimized copy "
	copyNoLoad    = copyFailed + "does not load: "
	copyNoRun     = copyFailed + "does not run: "
	copyDiffers   = copyFailed + "does not reproduce the original: "
	copyNotMade   = copyFailed + "could not be made: "
)

// refused tells whether verdict is a refusal, as makeCopy writes it.
func refused(verdict string) bool {
	return slices.ContainsFunc([]string{noPrepacked, noProbeInput, noProbeRun, copyNoLoad, copyNoRun, copyDiffers, copyNotMade},
		func(phrase string) bool { return strings.HasPrefix(verdict, phrase) })
}

// truncate is s cut to n bytes at most, for a log line.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// makeCopy has ONNX Runtime save the optimized copy, lays it out for
// mapping and checks it against the original, in a folder of its own
// inside dir; a copy that passes is moved into dir and sealed
// (derived.Seal). Its verdict is verdictMapped or why the copy is not
// used; its error, a copy that could not be made at all (a full or
// read-only cache), which leaves nothing behind.
//
// ONNX Runtime writes its copy's files in place, so a copy made again in
// dir itself would rewrite the pages another agent has mapped (a SIGBUS
// there); renamed into place, the new files are new inodes.
func makeCopy(path, dir string, opts Options, inputs, outputs []string) (string, error) {
	forgetCopy(filepath.Join(dir, mappedModel))
	stale, _ := filepath.Glob(filepath.Join(dir, makingPrefix+"*")) // what an interrupted attempt left
	for _, s := range stale {
		_ = os.RemoveAll(s)
	}
	making, err := os.MkdirTemp(dir, makingPrefix)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(making)
	verdict, err := copyWhere(path, making, opts, inputs, outputs)
	if err != nil || verdict != verdictMapped {
		return verdict, err
	}
	for _, f := range []string{mappedWeights, mappedModel} {
		if err := os.Rename(filepath.Join(making, f), filepath.Join(dir, f)); err != nil {
			return "", err
		}
	}
	if err := derived.Seal(dir, mappedModel, mappedWeights); err != nil {
		return "", err
	}
	return verdictMapped, nil
}

// roomForCopy refuses to start a copy the disk has no room for: the copy
// holds the model's weights and their prepacked layouts, up to twice the
// model (fp32 X-ASR's 584 MB made 1.2 GB). Started anyway, it would fail
// half written, at every start.
func roomForCopy(dir string, sources []string) error {
	need := uint64(derived.Bytes(sources))*2 + 16<<20
	free, err := freeBytes(dir)
	if err == nil && free < need {
		err = fmt.Errorf("%d MiB free in %s, where the optimized copy needs about %d MiB; free some space", free>>20, dir, need>>20)
	}
	return err
}

// freeBytes is derived.FreeBytes, or a test's full disk.
var freeBytes = derived.FreeBytes

// makingPrefix names the folder a copy is made in.
const makingPrefix = ".making-"

// checkedCopy makes the copy in dir and checks it: makeCopy's verdict.
func checkedCopy(path, dir string, opts Options, inputs, outputs []string) (string, error) {
	original, err := session(path, opts, dir, inputs, outputs)
	if err != nil {
		return "", err
	}
	defer original.Destroy()
	prepacked, err := layOut(dir)
	if err != nil {
		return "", err
	}
	if prepacked < minPrepacked {
		// The copy would only duplicate the model on disk.
		return noPrepacked, nil
	}
	probeInputs, err := probeDeclared(path, inputs)
	defer DestroyValues(probeInputs)
	if err != nil {
		return noProbeInput + err.Error(), nil
	}
	want, err := probe(original, probeInputs, outputs)
	if err != nil {
		return noProbeRun + err.Error(), nil
	}
	copied, err := session(filepath.Join(dir, mappedModel), opts, "", inputs, outputs)
	if err != nil {
		// ONNX Runtime writes some graphs it cannot read back (Silero's
		// subgraphs, in 1.24: "initializer name is not unique").
		return copyNoLoad + err.Error(), nil
	}
	defer copied.Destroy()
	got, err := probe(copied, probeInputs, outputs)
	if err != nil {
		return copyNoRun + err.Error(), nil
	}
	if err := sameOutputs(want, got); err != nil {
		return copyDiffers + err.Error(), nil
	}
	return verdictMapped, nil
}

// layOut is relayout, but where a test asks for ONNX Runtime's own layout.
var layOut = relayout

// probeDeclared makes the probe input for the named inputs of the model
// at path.
func probeDeclared(path string, inputs []string) ([]ort.Value, error) {
	declared, _, err := Declaration(path)
	if err != nil {
		return nil, err
	}
	infos := make([]ort.InputOutputInfo, len(inputs))
	for i, name := range inputs {
		j := slices.IndexFunc(declared, func(d ort.InputOutputInfo) bool { return d.Name == name })
		if j < 0 {
			return nil, fmt.Errorf("model %s declares no input %q", path, name)
		}
		infos[i] = declared[j]
	}
	return ProbeInputs(infos)
}

// session loads the model at path with opts, for a probe (a failed
// run's reason goes into the verdict), and has it save its optimized
// copy into saveTo unless that is "".
func session(path string, opts Options, saveTo string, inputs, outputs []string) (*ort.DynamicAdvancedSession, error) {
	so, err := sessionOptions(opts)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	if saveTo != "" {
		if err := saveOptions(so, saveTo); err != nil {
			return nil, err
		}
	}
	return ort.NewDynamicAdvancedSession(path, inputs, outputs, so)
}

// probe runs the session once on the probe input.
func probe(s *ort.DynamicAdvancedSession, probeInputs []ort.Value, outputs []string) ([]Output, error) {
	values := make([]ort.Value, len(outputs))
	defer DestroyValues(values)
	if err := s.Run(probeInputs, values); err != nil {
		return nil, err
	}
	return ReadOutputs(values, outputs)
}

// forgetCopy removes a copy that no longer loads (damaged since it was
// made), so that the next load makes it again.
func forgetCopy(copyPath string) {
	dir := filepath.Dir(copyPath)
	for _, f := range []string{mappedVerdict, mappedModel, mappedWeights, derived.SealFile} {
		_ = os.Remove(filepath.Join(dir, f))
	}
}

// saveOptions have a session save its optimized model, with its
// prepacked weights, into dir.
func saveOptions(so *ort.SessionOptions, dir string) error {
	if err := so.SetOptimizedModelFilePath(filepath.Join(dir, mappedModel)); err != nil {
		return err
	}
	for k, v := range map[string]string{
		"session.optimized_model_external_initializers_file_name":         mappedWeights,
		"session.optimized_model_external_initializers_min_size_in_bytes": "1024",
		"session.save_external_prepacked_constant_initializers":           "1",
	} {
		if err := so.AddSessionConfigEntry(k, v); err != nil {
			return err
		}
	}
	return nil
}

// minPrepacked is the least prepacked data worth a copy of the model.
var minPrepacked int64 = 1 << 20

// ModelSources are the model's file and the external data files it names,
// what its copy is derived from.
func ModelSources(path string) ([]string, error) {
	sources := []string{path}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > maxGraphOnly {
		return sources, nil // its weights are inline
	}
	graph, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	data, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*.data"))
	if err != nil {
		return nil, err
	}
	for _, d := range data {
		// The graph names each external data file as its location.
		if bytes.Contains(graph, []byte(filepath.Base(d))) {
			sources = append(sources, d)
		}
	}
	return sources, nil
}

// maxGraphOnly is the largest model file read whole to find the external
// data it names: one whose weights are apart is a graph of a few MB.
const maxGraphOnly = 16 << 20

// envMappedWeights turns the optimized copies off ("0"): for measuring
// what they save, and for a disk too small for them.
const envMappedWeights = "VOICE_ORT_MAPPED_WEIGHTS"

// MappedWeights tells whether models are loaded from optimized copies
// whose prepacked weights are mapped (the default), or as they are, their
// prepacked weights on the heap.
func MappedWeights() bool {
	on, err := strconv.ParseBool(os.Getenv(envMappedWeights))
	return err != nil || on
}
