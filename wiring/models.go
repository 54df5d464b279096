package wiring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/llm/mnn"
)

// ErrUnavailable marks a backend that cannot be used on this build or
// machine; the error's message says what is missing and how to get it.
var ErrUnavailable = errors.New("backend unavailable")

// unavailableError is a stage that cannot be built here: what is missing
// (Unavailable), one line for the user with the command that fixes it,
// and the detail (where it was looked for, how to get it by hand) behind
// --log-level debug (Details).
type unavailableError struct{ what, short, detail string }

func (e unavailableError) Error() string        { return e.short }
func (e unavailableError) Is(target error) bool { return target == ErrUnavailable }

// notFound is the error for a stage's model found nowhere.
func notFound(s Stages, stage, model, file, fix, manual string) error {
	what := fmt.Sprintf("%s: %s not found", stage, model)
	return unavailableError{
		what:   what,
		short:  what + "; " + fix,
		detail: fmt.Sprintf("%s: looked for %s in %s; %s", stage, file, s.searched(), manual),
	}
}

// Model files looked for in the model directory and under third_party/.
const (
	SileroFile    = "silero_vad_v5.onnx"
	SmartTurnFile = "smart-turn-v3.2-cpu.onnx"
	XASRDir       = "xasr-zh-en-streaming-160ms"
	MNNDir        = "mnn-pocket-0.3b-int4"
	// The MOSS directories are named as their repositories, because the
	// TTS set's manifest finds the codec through ../MOSS-Audio-Tokenizer-Nano-ONNX.
	MossDir      = "MOSS-TTS-Nano-100M-ONNX"
	MossCodecDir = "MOSS-Audio-Tokenizer-Nano-ONNX"
)

// StageModel is what one stage's configured backend needs of the disk.
type StageModel struct {
	// Stage is the manifest's name: runtime (the ONNX Runtime library),
	// vad, turn, asr, llm or tts.
	Stage string
	// Backend is the configured backend ("onnxruntime" for the runtime).
	Backend string
	// Loads is whether the backend loads a model: a stand-in, "none"
	// or an engine not in this build does not.
	Loads bool
	// NotBuilt is set when the backend's engine is not in this build.
	NotBuilt bool
	// Present is whether the model is where the agent looks for one.
	Present bool
}

// StageModels says, stage by stage, whether the configured backends would
// find their models (and the ONNX stages their runtime), without loading
// anything.
func (s Stages) StageModels() []StageModel {
	found := func(explicit, file string) bool {
		if explicit != "" {
			return true
		}
		_, ok, err := s.model("", file)
		return ok && err == nil
	}
	models := []StageModel{
		{Stage: "vad", Backend: s.VAD, Loads: s.VAD == VADSilero, Present: found(s.VADModel, SileroFile)},
		{Stage: "asr", Backend: s.ASR, Loads: s.ASR == ASRXASR, Present: found(s.ASRModelDir, XASRDir) || s.ModelDir != ""},
		{Stage: "turn", Backend: s.Turn, Loads: s.Turn == TurnSmart, Present: found(s.TurnModel, SmartTurnFile)},
		{Stage: "llm", Backend: s.LLM, Loads: s.LLM == LLMMNN && mnn.Built, NotBuilt: s.LLM == LLMMNN && !mnn.Built,
			Present: found(s.LLMModelDir, MNNDir) || s.ModelDir != ""},
		{Stage: "tts", Backend: s.TTS, Loads: s.TTS == TTSMoss, Present: found(s.TTSModelDir, MossDir)},
	}
	onnxStage := slices.ContainsFunc(models, func(m StageModel) bool { return m.Loads && m.Stage != "llm" })
	_, err := onnx.FindLibrary(s.ONNXRuntime)
	runtime := StageModel{Stage: "runtime", Backend: "onnxruntime", Loads: onnxStage, Present: err == nil}
	return append([]StageModel{runtime}, models...)
}

// MissingStages names the model stages (vad, turn, asr, llm, tts) whose
// configured real backend has no model where the agent looks for one,
// without loading anything. The LLM counts only in a build with MNN:
// without the engine a model would not help.
func (s Stages) MissingStages() []string {
	var missing []string
	for _, m := range s.StageModels() {
		if m.Stage != "runtime" && m.Loads && !m.Present {
			missing = append(missing, m.Stage)
		}
	}
	return missing
}

// WithInstalled swaps each stage whose model is not installed (or, for the
// LLM, not built in) for what stands in for it in a measurement: the
// energy VAD, no turn model, the tone synthesizer, and, given a script,
// the scripted recognizer and LLM. It returns the stages and the names of
// the stages swapped.
func (s Stages) WithInstalled() (Stages, []string) {
	missing := s.MissingStages()
	if s.LLM == LLMMNN && !mnn.Built {
		missing = append(missing, "llm")
	}
	var swapped []string
	swap := func(name string, backend *string, double string) {
		if slices.Contains(missing, name) {
			*backend = double
			swapped = append(swapped, name)
		}
	}
	swap("vad", &s.VAD, VADEnergy)
	swap("turn", &s.Turn, TurnNone)
	swap("tts", &s.TTS, TTSTone)
	if s.Script != "" {
		swap("asr", &s.ASR, ASRScripted)
		swap("llm", &s.LLM, LLMScripted)
	}
	return s, swapped
}

// Unavailable lists what err says is missing, one line per stage and
// without the command-line fixes (for a window that offers its own): the
// stages wiring could not build for want of a model or an engine. It is
// empty for any other error.
func Unavailable(err error) []string {
	var out []string
	eachUnavailable(err, func(u unavailableError) { out = append(out, u.what) })
	return out
}

// Details is the detail behind each unavailable stage in err: where its
// model was looked for and how to get it by hand.
func Details(err error) []string {
	var out []string
	eachUnavailable(err, func(u unavailableError) { out = append(out, u.detail) })
	return out
}

// eachUnavailable calls f for every unavailable stage in err's tree.
func eachUnavailable(err error, f func(unavailableError)) {
	switch e := err.(type) {
	case unavailableError:
		f(e)
	case interface{ Unwrap() []error }:
		for _, c := range e.Unwrap() {
			eachUnavailable(c, f)
		}
	case interface{ Unwrap() error }:
		eachUnavailable(e.Unwrap(), f)
	}
}

// cachePaths maps a model file or directory to where `voice-agent models
// pull` puts it in the cache: under the manifest's model name.
var cachePaths = map[string]string{
	SileroFile:    filepath.Join("silero-vad-v5", SileroFile),
	SmartTurnFile: filepath.Join("smart-turn-v3.2-cpu", SmartTurnFile),
	XASRDir:       XASRDir,
	MossDir:       MossDir,
	MNNDir:        MNNDir,
}

// model finds a model file or directory: the explicit path if given, else
// in the model directory, else in the model cache, else where
// scripts/setup installs models. A model found in the cache must be
// complete and as pulled (assets.CheckCached: sizes, and sha256s once per
// change of a file), so a damaged download or a file changed since is
// reported with the command that repairs it, rather than loaded or
// failing in the loader. A cache folder that holds none of the model's
// files (a failed pull's) is not the model: the search goes on, and ends
// in "not found" with the alternatives.
func (s Stages) model(explicit, file string) (string, bool, error) {
	if explicit != "" {
		return explicit, true, nil // a wrong explicit path is reported by the loader
	}
	if s.ModelDir != "" {
		p := filepath.Join(s.ModelDir, file)
		if ok, err := exists(p); ok || err != nil {
			return p, ok, err
		}
	}
	if cache, err := assets.CacheDir(); err == nil {
		p := filepath.Join(cache, cachePaths[file])
		if ok, err := exists(p); err != nil {
			return p, false, err
		} else if ok {
			if err := checkCached(cache, cachePaths[file]); !errors.Is(err, assets.ErrNotCached) {
				return p, true, err
			}
		}
	}
	p, ok := assets.Local(filepath.Join("models", file))
	return p, ok, nil
}

// searched names, for a "not found" message, where model looks.
func (s Stages) searched() string {
	var places []string
	if s.ModelDir != "" {
		places = append(places, "the model directory "+s.ModelDir)
	}
	if cache, err := assets.CacheDir(); err == nil {
		places = append(places, "the model cache "+cache)
	}
	places = append(places, filepath.Join(assets.LocalDir, "models"))
	if len(places) == 1 {
		return places[0]
	}
	return strings.Join(places[:len(places)-1], ", ") + " and " + places[len(places)-1]
}

// exists says whether path is there; a place that is there but cannot be
// looked into (permissions) is an error, not "not found", so the user
// fixes the permissions rather than downloading the model again.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return false, nil
	}
	return false, fmt.Errorf("%w; make it readable (and its folders searchable) by this user", err)
}

// checkCached checks the manifest's model whose directory rel lies in.
func checkCached(cache, rel string) error {
	manifest, err := assets.LoadManifest()
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	m, ok := manifest.Model(name)
	if !ok {
		return fmt.Errorf("wiring: no manifest entry %q for the cached model %s", name, rel)
	}
	return assets.CheckCached(cache, m)
}

// MissingModels are the manifest's models (for this platform) that would
// supply the stages s runs whose models are not where the agent looks,
// the ONNX Runtime library included: what `voice-agent run --pull` gets.
func (s Stages) MissingModels() ([]assets.Model, error) {
	man, err := assets.LoadManifest()
	if err != nil {
		return nil, err
	}
	var out []assets.Model
	for _, sm := range s.StageModels() {
		if !sm.Loads || sm.Present {
			continue
		}
		for _, mod := range man.Models {
			if mod.Stage == sm.Stage && mod.ForThisPlatform() {
				out = append(out, mod)
			}
		}
	}
	return out, nil
}
