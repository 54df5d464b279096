package app

import (
	"errors"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/wiring"
)

// diagnose turns a build error that says a backend is unavailable into the
// window's problem: what is missing, one line a stage, in words for the
// window (the command-line fixes are the CLI's), and the manifest models
// that would supply it, found by looking where the agent looks, without
// loading anything.
func diagnose(s wiring.Stages, buildErr error) *Problem {
	p := &Problem{Message: buildErr.Error()}
	if lines := wiring.Unavailable(buildErr); len(lines) > 0 {
		p.Message = strings.Join(lines, "\n")
	}
	stages := s.MissingStages()
	// Without the ONNX Runtime library no ONNX stage opens; the library
	// comes first, and the next start names what else is missing.
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
				p.SizeUnknown = p.SizeUnknown || f.Size == 0
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
