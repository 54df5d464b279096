package wiring

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
)

// DefaultMemoryBudget is the budget on arch: on the glasses (arm64, 1-2
// GB shared with the system) 450 MiB of anonymous memory, which the kernel
// cannot reclaim without killing a process; none on a desktop.
func DefaultMemoryBudget(arch string) int {
	if arch == "arm64" {
		return 450
	}
	return 0
}

// maxMemoryBudget bounds --memory-budget, in MiB: no device has more, and
// GoMemoryLimit's bytes would overflow past 8 EiB (a budget of 2^44 MiB
// gave the Go runtime a limit of 341 KiB).
const maxMemoryBudget = 1 << 20

// GoMemoryLimit is the soft limit the agent sets on the Go runtime's
// memory (debug.SetMemoryLimit, unless GOMEMLIMIT is set) under a budget:
// a third of it. The Go side's live heap peaks near 110 MB in a replayed
// conversation at true size (the codec's state twice, 49 MB; the
// synthesizer's KV caches; gctrace, docs/performance.md); a limit below
// it keeps the collector running without pause (at a sixth, 75 MiB, the
// synthesizer's p95 compute a turn doubled) for no memory back. Above
// it, the limit caps the garbage the heap may hold when it grows.
func GoMemoryLimit(budgetMiB int) int64 { return int64(budgetMiB) << 20 / 3 }

// StageMemory is the anonymous memory a stage is expected to take at its
// peak in a conversation, from the size of its installed model.
type StageMemory struct {
	Stage string
	MiB   float64
	// Fits names what would make the stage take less, for a refusal.
	Fits string
}

// How anonymous memory follows the models, fitted to `bench stages` at
// true size (the int4 stand-ins of scripts/bench-scale, ONNX Runtime
// 1.30.0, 2026-12-04, docs/performance.md): per MiB of model file, what
// the engine holds on the heap, and what a stage adds while it runs
// (caches, activations, the Go side's copies). The ONNX Runtime library
// itself and the process take the rest.
//
// ONNX Runtime prepacks a model's matrix weights at load. From an
// optimized copy (internal/onnx, on unless VOICE_ORT_MAPPED_WEIGHTS=0) it
// maps them from a file, and what stays on the heap is what its kernels
// do not prepack (perModelMiB); without one, the prepacked weights are on
// the heap too (perModelHeapMiB). ONNX Runtime 1.30 packs a weight read by
// many nodes once (the unrolled local frame graph's 17 steps), so the
// model's size is the measure either way.
//
// A start that makes the copies (the first after a model or the runtime
// changes) makes each in a child process, one model at a time, which
// holds the original with its prepacked weights on the heap: about twice
// an fp32 model (the full-size X-ASR's 563 MiB encoder took 1,193 MiB),
// beside what the agent holds by then. The estimate here cannot tell
// which copies are still to be made: the synthesizer loads graphs it
// derives at its first load, each with a copy of its own, and some of a
// stage's files are never loaded (the prefill graph under
// --tts-low-memory, Silero's refused copy aside). So each copy's making
// is checked against the budget as its model loads, on what the agent
// then holds (onnx.Options.MemoryBudget), and a start it would take over
// is refused there, in one line that says what the copy takes.
const (
	runtimeMiB = 20 // ONNX Runtime's environment and first session
	processMiB = 30 // the Go runtime, libraries' data, audio buffers
)

type memoryFit struct{ perModelMiB, perModelHeapMiB, runMiB float64 }

var stageMemory = map[string]memoryFit{
	// Silero's copy gains nothing (its graph is small), so it is
	// loaded as it is.
	"vad":  {2, 2, 2},
	"turn": {0.5, 1.5, 27},
	"asr":  {0.3, 1.3, 50},
	// MNN maps the weights (use_mmap): what stays anonymous is the KV
	// cache, the activations, and, in an export with MNN's C4 fusions,
	// the fused projections MNN unpacks into a copy for each of its two
	// modules (fusedLLM).
	"llm":       {0.25, 0.25, 40},
	"llm fused": {1.33, 1.33, 40},
	// The synthesizer's prefill and decode graphs each load the global
	// transformer's weights; tts counts them twice unless the prefill
	// graph is closed (moss.Options.LowMemory).
	"tts": {0.2, 1, 140},
}

// ExpectedMemory estimates, stage by stage, the anonymous memory of the
// stages that load a model, without loading anything; a stage whose model
// is not found is left out (loading it fails on its own).
func (s Stages) ExpectedMemory() []StageMemory {
	var out []StageMemory
	onnxStages := false
	for _, sm := range s.StageModels() {
		if sm.Stage == "runtime" || !sm.Loads || !sm.Present {
			continue
		}
		files, twice := s.modelFiles(sm.Stage)
		if len(files) == 0 {
			continue
		}
		k := stageMemory[sm.Stage]
		fused := sm.Stage == "llm" && fusedLLM(files)
		if fused {
			k = stageMemory["llm fused"]
		}
		perModel := k.perModelHeapMiB
		if onnx.MappedWeights() {
			perModel = k.perModelMiB
		}
		m := StageMemory{Stage: sm.Stage, MiB: perModel*(mib(files)+mib(twice)) + k.runMiB}
		switch {
		case sm.Stage == "tts" && !s.TTSLowMemory:
			m.Fits = fmt.Sprintf("--tts-low-memory (about %.0f MiB less)", perModel*mib(twice))
		case fused:
			m.Fits = "the LLM exported without MNN's C4 fusions (llmexport --disable_transformer_c4; docs/performance.md)"
		case sm.Stage == "llm":
			m.Fits = "a smaller LLM"
		default:
			m.Fits = "a smaller model, or one quantized further (voice-agent models quantize --bits 4, if it is not 4-bit already)"
		}
		onnxStages = onnxStages || sm.Stage != "llm"
		out = append(out, m)
	}
	if onnxStages {
		out = append(out, StageMemory{Stage: "onnxruntime", MiB: runtimeMiB})
	}
	return append(out, StageMemory{Stage: "process", MiB: processMiB})
}

// CheckMemory refuses, in one line, a set of stages expected to take more
// than budgetMiB of anonymous memory (0: no budget), naming the largest
// stage and what would make it fit.
func CheckMemory(expected []StageMemory, budgetMiB int) error {
	if budgetMiB <= 0 {
		return nil
	}
	var total float64
	for _, m := range expected {
		total += m.MiB
	}
	if total <= float64(budgetMiB) {
		return nil
	}
	var largest StageMemory
	for _, m := range expected {
		if m.Fits != "" && m.MiB > largest.MiB {
			largest = m
		}
	}
	return fmt.Errorf("memory: the installed models are expected to take %.0f MiB of anonymous memory, over the budget of %d MiB (%s); the largest is %s, %.0f MiB: try %s, or --memory-budget 0 to run anyway",
		total, budgetMiB, Breakdown(expected), largest.Stage, largest.MiB, largest.Fits)
}

// Breakdown is the estimate stage by stage, for the log.
func Breakdown(expected []StageMemory) string {
	parts := make([]string, len(expected))
	for i, m := range expected {
		parts[i] = fmt.Sprintf("%s %.0f", m.Stage, m.MiB)
	}
	return strings.Join(parts, ", ")
}

// modelFiles are the files of a stage's model where the stage would load
// it, and those its graphs load twice.
func (s Stages) modelFiles(stage string) (files, twice []string) {
	dirFiles := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range entries {
			if e.Type().IsRegular() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
		return out
	}
	dir := func(explicit, name string) string {
		if explicit != "" {
			return explicit
		}
		if p, ok, err := s.model("", name); ok && err == nil {
			return p
		}
		return s.ModelDir
	}
	switch stage {
	case "vad", "turn":
		explicit, name := s.VADModel, SileroFile
		if stage == "turn" {
			explicit, name = s.TurnModel, SmartTurnFile
		}
		if p, ok, err := s.model(explicit, name); ok && err == nil {
			return []string{p}, nil
		}
	case "asr":
		return dirFiles(dir(s.ASRModelDir, XASRDir)), nil
	case "llm":
		return dirFiles(dir(s.LLMModelDir, MNNDir)), nil
	case "tts":
		tts := dir(s.TTSModelDir, MossDir)
		codec := s.TTSCodecDir
		if codec == "" {
			codec = filepath.Join(filepath.Dir(tts), MossCodecDir)
		}
		files = append(dirFiles(tts), dirFiles(codec)...)
		if !s.TTSLowMemory {
			twice, _ = filepath.Glob(filepath.Join(tts, "*global*.data"))
		}
		return files, twice
	}
	return nil, nil
}

func mib(files []string) float64 { return float64(derived.Bytes(files)) / (1 << 20) }

// fusedLLM tells whether an MNN export has the C4 fusions (MNNConvert's
// FuseTransformerC4, llmexport's default): its graph then names FusedRoPE
// ops, which an export made with --disable_transformer_c4 does not.
func fusedLLM(files []string) bool {
	for _, f := range files {
		if filepath.Base(f) != "llm.mnn" {
			continue
		}
		graph, err := os.ReadFile(f)
		return err == nil && bytes.Contains(graph, []byte("FusedRoPE"))
	}
	return false
}
