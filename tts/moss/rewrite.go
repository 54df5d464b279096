package moss

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/childjob"
	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
)

// graphRewrite is a rewrite of one of the synthesizer's graphs, derived
// at the graph's first load into the derived-files cache (under engine,
// keyed by version, ONNX Runtime's version and the graph's files) and
// kept only where it says what the original says.
type graphRewrite struct {
	engine, version string
	// kept is the verdict of a rewrite kept; keeping and leaving say in
	// the log what the synthesizer does with and without it.
	kept, keeping, leaving string
	// memory is what the rewrite's derivation and check take at their
	// peak.
	memory rewriteMemory
}

// rewriteMemory is the anonymous memory a rewrite's derivation and check
// take at their peak: base, and perByte for each byte of the original
// graph's files (fitted to the full-size stand-ins, int4 and fp32).
type rewriteMemory struct {
	base    int64
	perByte float64
}

// derivedVerdict is the derived file that says what a rewrite's check
// said; the rewritten graph beside it has the original's name (which
// tells profiles and logs which graph it is).
const derivedVerdict = "verdict"

// load is the path of the rewritten graph of the one at path, "" where it
// is not kept. At the first load derive writes it to model (and the
// external data it reads, *.data, beside it) and checks it, returning the
// verdict: r.kept, or why not (said once: later loads read the verdict).
func (r graphRewrite) load(path string, derive func(model string) (string, error)) (string, error) {
	sources, err := onnx.ModelSources(path)
	if err != nil {
		return "", err
	}
	// The rewritten graph has the original's name: a name of its own in
	// the folder's key.
	dir, release, err := derived.Acquire(r.engine, r.version+" "+ort.GetVersion()+" "+filepath.Base(path), sources...)
	if err != nil {
		return "", err
	}
	defer release()
	model := filepath.Join(dir, filepath.Base(path))
	verdict, err := os.ReadFile(filepath.Join(dir, derivedVerdict))
	if err == nil && strings.TrimSpace(string(verdict)) != r.kept {
		return "", nil
	}
	if err == nil {
		err := derived.Verify(dir, derivedFiles(dir, path)...)
		if err == nil {
			return model, nil
		}
		level := slog.LevelWarn
		if errors.Is(err, derived.ErrUnsealed) {
			level = slog.LevelInfo // a derivation that did not finish
		}
		slog.Log(context.Background(), level, "moss: the derived graph is not as it was made; making it again", "model", path, "dir", dir, "why", err)
	}
	said, err := derive(model)
	if err != nil {
		return "", err
	}
	if err := derived.WriteFile(filepath.Join(dir, derivedVerdict), func(w io.Writer) error {
		_, err := io.WriteString(w, said+"\n")
		return err
	}); err != nil {
		return "", err
	}
	if said != r.kept {
		slog.Info("moss: "+r.leaving+" (said once: later loads do the same)", "model", path, "why", said)
		return "", nil
	}
	if err := derived.Seal(dir, derivedFiles(dir, path)...); err != nil {
		return "", err
	}
	slog.Info("moss: "+r.keeping, "model", path, "derived", model)
	return model, nil
}

// derivedFiles are the names of the files in dir that a rewrite of the
// graph at path is loaded from: the graph, and the external data beside it.
func derivedFiles(dir, path string) []string {
	names := []string{filepath.Base(path)}
	data, _ := filepath.Glob(filepath.Join(dir, "*.data")) // its only error is a bad pattern
	for _, d := range data {
		names = append(names, filepath.Base(d))
	}
	return names
}

// A rewrite is derived and checked in a child process (the job
// rewriteJob, internal/childjob), which opens the synthesizer from the
// same folders. Its check runs the original graphs and the rewrite in
// their exact form, each with its own prepacked weights on the heap: in
// the agent, the int4 synthesizer's first load took 222 MiB of anonymous
// memory (fp32: 432) against 98-105 at later starts, and takes 101 (108)
// with the rewrites in children. The child gives that memory back when
// it exits, and a kill under memory pressure ends the child, not the
// agent.
const rewriteJob = "moss-rewrite"

// rewriteRequest asks the child to derive a rewrite (by its engine) of
// the synthesizer opened from From into Model.
type rewriteRequest struct {
	Rewrite string
	From    source
	Model   string
	// ONNX are the options the rewrite's graph is opened with.
	ONNX onnx.Options
}

func init() { childjob.Serve(rewriteJob, serveRewrite) }

// serveRewrite derives and checks the rewrite req asks for, in the child:
// its verdict.
func serveRewrite(req rewriteRequest) (string, error) {
	s, graphs, err := configured(req.From.TTSDir, req.From.CodecDir, Options{Voice: req.From.Voice})
	if err != nil {
		return "", err
	}
	defer s.Close()
	if err := onnx.Init(req.ONNX.Library); err != nil {
		return "", err
	}
	switch req.Rewrite {
	case sharedKVRewrite.engine:
		return s.deriveSharedKV(graphs.decode, graphs.prefill, req.Model, req.ONNX)
	case ringRewrite.engine:
		// The ring's lengths come from a run of the original codec.
		if s.codec, err = onnx.Open(graphs.codec.path, graphs.codec.ins, graphs.codec.outs, req.ONNX, Hint); err != nil {
			return "", err
		}
		return s.ringOf(graphs.codec, req.Model, req.ONNX)
	}
	return "", fmt.Errorf("moss: no rewrite %q", req.Rewrite)
}

// rewriteTimeout bounds the child. The full-size fp32 set's rewrites
// take seconds; a child that takes minutes is stuck.
var rewriteTimeout = 10 * time.Minute

// errStopped ends a load whose rewrite was being derived when the process
// was interrupted (derived.Stopping): nothing is loaded after a Ctrl-C.
var errStopped = errors.New("interrupted while its rewrite was derived; the next start derives it again")

// runJob is childjob.Run, or a test's.
var runJob = childjob.Run

// deriveApart derives the rewrite r of the graph at path into model, in
// a child process, or with here where this binary cannot start itself
// (under an emulator without binfmt): the verdict, as here gives it.
//
// A child that crashes or is stuck gets a verdict that leaves the
// rewrite: the same graphs and ONNX Runtime do the same at the next
// start. One killed (the OOM killer), or one whose derivation failed (a
// full disk), gets an error: the start goes on without the rewrite, and
// the next one tries again.
func (s *Synthesizer) deriveApart(r graphRewrite, path, model string, opts onnx.Options, here func() (string, error)) (string, error) {
	sources, err := onnx.ModelSources(path)
	if err != nil {
		return "", err
	}
	need := r.memory.base + int64(r.memory.perByte*float64(derived.Bytes(sources)))
	if err := childjob.FitsBudget(need, opts.MemoryBudget); err != nil {
		return "", fmt.Errorf("its first load derives a rewrite of it (%s), which takes about %d MiB of anonymous memory while it is checked, in a child process (once: later starts load it); %w: start once with --memory-budget 0 where that memory is free",
			r.engine, need>>20, err)
	}
	// What the first start costs, said where it is paid.
	slog.Info("moss: deriving a rewrite of the graph, in a child process: once for this model and runtime, and later loads read it",
		"model", path, "rewrite", r.engine, "anonymous_mib_while_derived", need>>20)
	opts.MemoryBudget, opts.Profile = 0, ""
	ended, err := runJob(rewriteJob, rewriteRequest{Rewrite: r.engine, From: s.from, Model: model, ONNX: opts}, rewriteTimeout)
	if err != nil {
		return "", err
	}
	switch ended.End {
	case childjob.NotStarted:
		slog.Debug("moss: deriving the rewrite in this process", "model", path, "why", ended.Err)
		return here()
	case childjob.Stopped:
		return "", errStopped
	case childjob.Done:
		return ended.Answer, nil
	case childjob.Failed:
		return "", ended.Err
	case childjob.Killed:
		return "", fmt.Errorf("the child process deriving it was %s: the next start tries again", ended.KilledHow())
	case childjob.TimedOut:
		return fmt.Sprintf("not derived: a child process took over %v and was ended (remove %s to try again)", rewriteTimeout, filepath.Dir(model)), nil
	}
	return fmt.Sprintf("not derived: ONNX Runtime crashed (%s; remove %s to try again)", ended.How, filepath.Dir(model)), nil
}

// endsTheLoad tells whether a rewrite's error ends the synthesizer's
// load, rather than leaving the rewrite for this start: a stop, or a
// derivation over the memory budget.
func endsTheLoad(err error) bool {
	return errors.Is(err, errStopped) || errors.Is(err, derived.ErrStopped) || errors.Is(err, childjob.ErrOverBudget)
}
