package app

import (
	"errors"
	"slices"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/wiring"
)

// probe opens one stage's real backend alone and closes it again, to tell
// which of the stages that wiring.Build could not build lack their model.
type probe struct {
	stage string // the manifest's stage name
	uses  func(wiring.Stages) bool
	open  func(wiring.Stages) error
}

var probes = []probe{
	{"vad", func(s wiring.Stages) bool { return s.VAD == wiring.VADSilero }, func(s wiring.Stages) error {
		_, closeFn, err := wiring.NewVAD(s)
		return closeIf(closeFn, err)
	}},
	{"turn", func(s wiring.Stages) bool { return s.Turn == wiring.TurnSmart }, func(s wiring.Stages) error {
		m, err := wiring.NewTurnDetector(s)
		if err != nil {
			return err
		}
		return m.Close()
	}},
	{"asr", func(s wiring.Stages) bool { return s.ASR == wiring.ASRXASR }, func(s wiring.Stages) error {
		r, err := wiring.NewRecognizer(s)
		if err != nil {
			return err
		}
		return r.Close()
	}},
	{"tts", func(s wiring.Stages) bool { return s.TTS == wiring.TTSMoss }, func(s wiring.Stages) error {
		_, closeFn, err := wiring.NewSynthesizer(s)
		return closeIf(closeFn, err)
	}},
}

func closeIf(closeFn func() error, err error) error {
	if err != nil {
		return err
	}
	return closeFn()
}

// diagnose turns a build error that says a backend is unavailable into the
// window's problem: the error's own words (they name what is missing and
// where it was looked for) and the manifest models that would supply it.
// Only called on that failure path, so probing again costs nothing in the
// common case.
func diagnose(s wiring.Stages, buildErr error) *Problem {
	p := &Problem{Message: buildErr.Error()}
	var stages []string
	for _, pr := range probes {
		if pr.uses(s) && errors.Is(pr.open(s), wiring.ErrUnavailable) {
			stages = append(stages, pr.stage)
		}
	}
	// Without the ONNX Runtime library no ONNX stage opens, so the probes
	// cannot tell which models are there; the library comes first, and the
	// next start names what else is missing.
	if errors.Is(buildErr, onnx.ErrLibraryMissing) {
		stages = append(stages, "runtime")
	}
	man, err := assets.LoadManifest()
	if err != nil {
		p.Message += "\n" + err.Error()
		return p
	}
	for _, mod := range man.Models {
		if slices.Contains(stages, mod.Stage) && mod.ForThisPlatform() {
			p.Models = append(p.Models, mod.Name)
			for _, f := range mod.Files {
				p.Bytes += f.Size
			}
		}
	}
	return p
}

// manifestModels returns the manifest entries of the problem's models.
func (p *Problem) manifestModels() ([]assets.Model, error) {
	man, err := assets.LoadManifest()
	if err != nil {
		return nil, err
	}
	var out []assets.Model
	for _, name := range p.Models {
		if mod, ok := man.Model(name); ok {
			out = append(out, mod)
		}
	}
	return out, nil
}
