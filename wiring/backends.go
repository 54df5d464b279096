package wiring

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/voiceassistant/voice/asr/xasr"
	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/frontend"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/llm/mnn"
	"github.com/voiceassistant/voice/tts/moss"
	"github.com/voiceassistant/voice/turn/smartturn"
	"github.com/voiceassistant/voice/vad"
	"github.com/voiceassistant/voice/vad/silero"
)

// newMoss opens MOSS-TTS-Nano for s.
func newMoss(s Stages) (*moss.Synthesizer, error) {
	dir := s.TTSModelDir
	if dir == "" {
		var ok bool
		var err error
		if dir, ok, err = s.model("", MossDir); err != nil {
			return nil, err
		} else if !ok {
			return nil, notFound(s, "TTS", "MOSS-TTS-Nano", MossDir,
				"run `voice-agent models pull MOSS-TTS-Nano-100M-ONNX MOSS-Audio-Tokenizer-Nano-ONNX`, or --tts tone for a demo",
				fmt.Sprintf("%s, put the TTS set in one of those places and the codec in %s beside it, or pass --tts-model-dir DIR", moss.Hint, MossCodecDir))
		}
	}
	return moss.Open(dir, s.TTSCodecDir, moss.Options{Voice: s.Voice, LowMemory: s.TTSLowMemory, ONNX: s.onnx(s.TTSThreads)})
}

// NewVAD builds the Silero detector for s, and the function that closes
// its model session.
func NewVAD(s Stages) (*vad.Detector, func() error, error) {
	path, ok, err := s.model(s.VADModel, SileroFile)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return nil, nil, notFound(s, "VAD", "Silero v5", SileroFile, "run `voice-agent models pull silero-vad-v5` (scripts/setup installs it too)", silero.ModelHint)
	}
	m, err := silero.New(path, s.onnx(s.VADThreads))
	if err != nil {
		return nil, nil, err
	}
	d, err := vad.NewDetector(m, s.VADTuning)
	if err != nil {
		return nil, nil, errors.Join(err, m.Close())
	}
	return d, m.Close, nil
}

// newMNN opens the MNN LLM for s.
func newMNN(s Stages) (*mnn.Model, error) {
	dir := s.LLMModelDir
	if dir == "" {
		var ok bool
		var err error
		if dir, ok, err = s.model("", MNNDir); err != nil {
			return nil, err
		} else if !ok {
			dir = s.ModelDir
		}
	}
	m, err := mnn.Open(mnn.Config{Dir: dir, Threads: s.LLMThreads, MaxNewTokens: s.LLMMaxTokens})
	switch {
	case errors.Is(err, mnn.ErrNotBuilt):
		return nil, unavailableError{
			what:   "LLM: this build has no MNN engine (scripts/setup builds it in)",
			short:  "LLM: this build has no MNN; run scripts/setup (it builds MNN and the agent with it), or --llm scripted --script FILE for a demo",
			detail: fmt.Sprintf("LLM backend %q: %v", s.LLM, err),
		}
	case err != nil && dir == "":
		return nil, notFound(s, "LLM", "MNN-Pocket-0.3B", MNNDir, "run `voice-agent models pull "+MNNDir+"`, or pass --llm-model-dir DIR",
			strings.ReplaceAll(mnn.Hint, "DIR", "one of those places")+", or pass --llm-model-dir DIR")
	case errors.Is(err, mnn.ErrCorrupt):
		return nil, corruptExport(dir, err)
	case err != nil:
		return nil, err
	}
	return m, nil
}

// corruptExport says how to get the export in dir whole again, whose
// files crash the engine (err). One a pull put in the cache leaves the
// lock file, which held its files to that download and would refuse
// another: a cut-short weight file, locked at its length, made every
// pull fail ("more than the bytes expected") and the model missing for
// good.
func corruptExport(dir string, err error) error {
	cache, cacheErr := assets.CacheDir()
	man, manErr := assets.LoadManifest()
	if cacheErr != nil || manErr != nil {
		return fmt.Errorf("%w; put a whole copy of the export in %s", err, dir)
	}
	for _, m := range man.Models {
		if m.Format != assets.FormatMNNLLM || filepath.Clean(dir) != assets.Path(cache, m) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), lockWait)
		defer cancel()
		if forgetErr := assets.ForgetLocked(ctx, cache, m); forgetErr != nil {
			return fmt.Errorf("%w; %s still holds its files to their first download (%v): remove %s and the entries \"%s/...\" from %s, then run `voice-agent models pull %s`",
				err, assets.LockFileName, forgetErr, dir, m.Name, filepath.Join(cache, assets.LockFileName), m.Name)
		}
		return fmt.Errorf("%w; %s no longer holds them to their first download (with --mirror, try another mirror if it repeats): run `voice-agent models pull %s`", err, assets.LockFileName, m.Name)
	}
	return fmt.Errorf("%w; put a whole copy of the export in %s", err, dir)
}

// lockWait bounds the wait for the lock file, which a pull holds only
// while it writes an entry.
const lockWait = 10 * time.Second

// NewFrontEnd builds the audio front-end for s (nil if every part is
// off), and the function that releases it. If echo cancellation is wanted
// but this build has none, it returns no front-end and halfDuplex true: the
// caller closes the microphone while the assistant speaks instead.
func NewFrontEnd(s Stages) (fe audio.FrontEnd, closeFE func(), halfDuplex bool, err error) {
	f := s.FrontEnd
	if !f.AEC && !f.NS && !f.AGC {
		return nil, func() {}, false, nil
	}
	p, err := frontend.New(frontend.Config{AEC: f.AEC, NS: f.NS, AGC: f.AGC, DelayMS: f.DelayMS, NSLevel: 2})
	if errors.Is(err, frontend.ErrUnavailable) {
		return nil, func() {}, f.AEC, nil
	}
	if err != nil {
		return nil, func() {}, false, err
	}
	return p, p.Close, false, nil
}

// FrontEndRestarts is how many times fe started afresh after producing
// audio that was not finite (see frontend.Processor.Restarts).
func FrontEndRestarts(fe audio.FrontEnd) int {
	if r, ok := fe.(interface{ Restarts() int }); ok {
		return r.Restarts()
	}
	return 0
}

// NewRecognizer opens the X-ASR recognizer for s: the directory given by
// ASRModelDir, else <model dir>/xasr-zh-en-streaming-160ms, else the model
// directory itself (xasr then names any file it lacks), else the copy
// under third_party/models.
func NewRecognizer(s Stages) (*xasr.Recognizer, error) {
	dir := s.ASRModelDir
	if dir == "" {
		var ok bool
		var err error
		if dir, ok, err = s.model("", XASRDir); err != nil {
			return nil, err
		} else if !ok {
			if s.ModelDir == "" {
				return nil, notFound(s, "ASR", "X-ASR", XASRDir, "run `voice-agent models pull "+XASRDir+"`, or pass --asr-model-dir DIR",
					strings.ReplaceAll(xasr.Hint, "DIR", "one of those places")+", or pass --asr-model-dir DIR")
			}
			dir = s.ModelDir
		}
	}
	return xasr.New(dir, s.onnx(s.ASRThreads))
}

// turnModelFix is how to get the Smart Turn model; a pipeline can also go
// without it, which the commands that only run the model cannot.
const turnModelFix = "run `voice-agent models pull smart-turn-v3.2-cpu`, or pass --turn-model PATH"

// NewTurnDetector opens the Smart Turn model for s.
func NewTurnDetector(s Stages) (*smartturn.Model, error) {
	return openTurnDetector(s, turnModelFix)
}

// openTurnDetector opens the Smart Turn model for s; fix says how to do
// without it when it is not found.
func openTurnDetector(s Stages, fix string) (*smartturn.Model, error) {
	path, ok, err := s.model(s.TurnModel, SmartTurnFile)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound(s, "turn detector", "Smart Turn v3.2", SmartTurnFile, fix,
			smartturn.Hint+", or put it in one of those places")
	}
	return smartturn.New(path, s.onnx(s.TurnThreads))
}

// onnx is the session options of a model run on threads threads; the
// budget bounds the first load's optimized copies too.
func (s Stages) onnx(threads int) onnx.Options {
	return onnx.Options{Library: s.ONNXRuntime, IntraThreads: threads, Profile: s.ONNXProfile, MemoryBudget: s.MemoryBudget}
}
