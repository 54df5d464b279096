package onnx

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
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
// in a file ONNX Runtime maps, or path itself where a copy gains nothing.
//
// ONNX Runtime prepacks a MatMul's weights at load, onto the heap, beside
// the originals (which it maps from an external data file). Saved with
// session.save_external_prepacked_constant_initializers, the prepacked
// weights go into the copy's data file and later loads map them instead
// (onnxruntime PR #23069; the keys in
// include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h):
// the fp32 synthesizer's decode step then adds 42 MiB of anonymous memory
// instead of 331. ONNX Runtime 1.24 saves the prepacked layouts of float
// kernels only, not those of MatMulNBits or the int8 MatMuls: a quantized
// model's copy holds no more than the model, and is not kept.
//
// The copy is made once per model content, ONNX Runtime version and CPU
// (internal/derived), at its first load, which takes longer for it.
func mappedCopy(path string, configure func(*ort.SessionOptions) error, inputs, outputs []string) (string, error) {
	sources, err := modelSources(path)
	if err != nil {
		return "", err
	}
	dir, release, err := derived.Acquire("onnxruntime", ort.GetVersion(), sources...)
	if err != nil {
		return "", err
	}
	defer release()
	copyPath := filepath.Join(dir, mappedModel)
	if verdict, err := os.ReadFile(filepath.Join(dir, mappedVerdict)); err == nil {
		if strings.TrimSpace(string(verdict)) == "mapped" {
			return copyPath, nil
		}
		return path, nil
	}
	if err := saveCopy(path, dir, configure, inputs, outputs); err != nil {
		return "", err
	}
	gain, err := holdsPrepacked(dir)
	if err != nil {
		return "", err
	}
	verdict := "mapped"
	switch {
	case !gain:
		// The copy would only duplicate the model on disk.
		verdict = "no prepacked weights saved: the model is loaded as it is"
	case loads(copyPath, configure, inputs, outputs) != nil:
		// ONNX Runtime writes some graphs it cannot read back (Silero's
		// subgraphs: "initializer name is not unique").
		verdict = "the copy does not load: the model is loaded as it is"
	}
	if verdict != "mapped" {
		_ = os.Remove(copyPath)
		_ = os.Remove(filepath.Join(dir, mappedWeights))
		copyPath = path
	}
	if err := os.WriteFile(filepath.Join(dir, mappedVerdict), []byte(verdict+"\n"), 0o644); err != nil {
		return "", err
	}
	return copyPath, nil
}

// forgetCopy removes a copy that no longer loads (damaged since it was
// made), so that the next load makes it again.
func forgetCopy(copyPath string) {
	dir := filepath.Dir(copyPath)
	for _, f := range []string{mappedVerdict, mappedModel, mappedWeights} {
		_ = os.Remove(filepath.Join(dir, f))
	}
}

// saveCopy has ONNX Runtime optimize the model at path, with the options
// the sessions use, into dir.
func saveCopy(path, dir string, configure func(*ort.SessionOptions) error, inputs, outputs []string) error {
	return loads(path, func(so *ort.SessionOptions) error {
		if err := configure(so); err != nil {
			return err
		}
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
	}, inputs, outputs)
}

// loads creates a session of the model at path, and closes it.
func loads(path string, configure func(*ort.SessionOptions) error, inputs, outputs []string) error {
	so, err := ort.NewSessionOptions()
	if err != nil {
		return err
	}
	defer so.Destroy()
	if err := configure(so); err != nil {
		return err
	}
	s, err := ort.NewDynamicAdvancedSession(path, inputs, outputs, so)
	if err != nil {
		return err
	}
	return s.Destroy()
}

// holdsPrepacked tells whether the copy holds prepacked weights: ONNX
// Runtime writes the copy whether or not any kernel gave it prepacked
// data. Each prepacked blob is named in its initializer's external data
// as prepacked_N = "KERNEL+HASH|OFFSET;LENGTH;..." (onnxruntime
// core/framework/tensor_external_data_info.cc).
func holdsPrepacked(dir string) (bool, error) {
	graph, err := os.ReadFile(filepath.Join(dir, mappedModel))
	if err != nil {
		return false, err
	}
	var total int64
	for _, m := range prepackedBlob.FindAllSubmatch(graph, -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		total += n
	}
	return total >= minPrepacked, nil
}

// minPrepacked is the least prepacked data worth a copy of the model.
var minPrepacked int64 = 1 << 20

var prepackedBlob = regexp.MustCompile(`prepacked_\d+\x12[\x00-\xff][^|]*\|\d+;(\d+);`)

// modelSources are the model's file and the external data files it names,
// what its copy is derived from.
func modelSources(path string) ([]string, error) {
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

func mappedWeightsOn() bool {
	on, err := strconv.ParseBool(os.Getenv(envMappedWeights))
	return err != nil || on
}
