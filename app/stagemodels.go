package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/wiring"
)

// ModelState is what the models panel says of a stage's model.
type ModelState string

const (
	ModelInstalled ModelState = "installed"
	ModelMissing   ModelState = "missing"
	// ModelUnused: the stage runs without a model (off, or a stand-in).
	ModelUnused ModelState = "not used"
	// ModelNotBuilt: the stage's engine is not in this build.
	ModelNotBuilt ModelState = "not in this build"
)

// ModelRow is one stage of the models panel.
type ModelRow struct {
	// Stage and Name are as a person says them: "Speech recognition",
	// "X-ASR".
	Stage, Name string
	State       ModelState
	// Note says more where the state alone does not (which stand-in).
	Note string
	// Models are the manifest models that supply a missing stage, Bytes
	// their size where known, estimated in part where SizeApprox.
	Models      []string
	Bytes       int64
	SizeApprox  bool
	SizeUnknown bool
}

// Line is the row as the panel shows it.
func (r ModelRow) Line() string {
	line := fmt.Sprintf("%s (%s): %s", r.Stage, r.Name, r.State)
	switch {
	case r.State == ModelMissing && r.SizeUnknown:
		// Some file's size is known only once downloaded: a part of the
		// size would mislead.
		line += ", size unknown"
	case r.State == ModelMissing && r.Bytes > 0:
		line += ", " + assets.FormatEstimate(r.Bytes, r.SizeApprox)
	case r.Note != "":
		line += ", " + r.Note
	}
	return line
}

// stageNames name the manifest's stages in the window's words.
var stageNames = map[string][2]string{
	"runtime": {"Model runtime", "ONNX Runtime"},
	"vad":     {"Speech detection", "Silero VAD v5"},
	"asr":     {"Speech recognition", "X-ASR"},
	"turn":    {"Turn detection", "Smart Turn v3.2"},
	"llm":     {"Language model", "MNN-Pocket-0.3B"},
	"tts":     {"Speech synthesis", "MOSS-TTS-Nano"},
}

// ModelRows looks, stage by stage, for the models the configured backends
// need where the agent looks for them, without loading anything, and
// names the manifest models that would supply the missing ones.
func ModelRows(s wiring.Stages) ([]ModelRow, error) {
	man, err := assets.LoadManifest()
	if err != nil {
		return nil, err
	}
	var rows []ModelRow
	for _, sm := range s.StageModels() {
		if sm.Stage == "runtime" && !sm.Loads {
			continue // no ONNX stage runs: nothing to say about it
		}
		names := stageNames[sm.Stage]
		row := ModelRow{Stage: names[0], Name: names[1]}
		switch {
		case sm.NotBuilt:
			row.State = ModelNotBuilt
		case !sm.Loads:
			row.State, row.Note = ModelUnused, "stand-in: "+sm.Backend
			if sm.Backend == wiring.TurnNone || sm.Backend == wiring.TTSNone {
				row.Note = "off"
			}
		case sm.Present:
			row.State = ModelInstalled
		default:
			row.State = ModelMissing
			for _, mod := range man.Models {
				if mod.Stage != sm.Stage || !mod.ForThisPlatform() {
					continue
				}
				row.Models = append(row.Models, mod.Name)
				n, approx, unknown := mod.DownloadSize()
				row.Bytes += n
				row.SizeApprox = row.SizeApprox || approx
				row.SizeUnknown = row.SizeUnknown || unknown
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// missing is what the models panel offers: the rows whose model is
// missing, counted as the window counts models (a row each: MOSS-TTS-Nano
// is one model, though two downloads), and the manifest models that
// supply them.
type missing struct {
	// Rows name the missing models as the rows do: "X-ASR".
	Rows []string
	// Models are their manifest names, what is downloaded.
	Models []string
	// Bytes is their size, estimated in part where Approx; some size is
	// known only once downloaded where Unknown.
	Bytes           int64
	Approx, Unknown bool
}

func missingModels(rows []ModelRow) missing {
	var m missing
	for _, r := range rows {
		if r.State == ModelMissing {
			m.Rows = append(m.Rows, r.Name)
			m.Models = append(m.Models, r.Models...)
			m.Bytes += r.Bytes
			m.Approx = m.Approx || r.SizeApprox
			m.Unknown = m.Unknown || r.SizeUnknown
		}
	}
	return m
}

// manifestModels returns the manifest entries of the named models.
func manifestModels(names []string) ([]assets.Model, error) {
	man, err := assets.LoadManifest()
	if err != nil {
		return nil, err
	}
	var out []assets.Model
	for _, name := range names {
		if mod, ok := man.Model(name); ok {
			out = append(out, mod)
		}
	}
	return out, nil
}

// cannotStart is the window's line for a session that could not start for
// want of models or engines: the models panel lists what is missing, so
// the line points there, unless what is wrong is not a missing model (an
// engine not in this build), which it names.
func cannotStart(err error, rows []ModelRow) string {
	missing := len(missingModels(rows).Rows)
	lines := wiring.Unavailable(err)
	switch {
	case missing == 1:
		return "Can't start: a model is missing (see Models)."
	case missing > 1:
		return fmt.Sprintf("Can't start: %d models are missing (see Models).", missing)
	case len(lines) > 0:
		return "Can't start: " + strings.Join(lines, "; ")
	}
	return "Can't start: " + err.Error()
}

// unavailable is whether err means a model or engine is missing, which
// the models panel is for.
func unavailable(err error) bool {
	return errors.Is(err, wiring.ErrUnavailable) || errors.Is(err, onnx.ErrLibraryMissing)
}

// downloadLabel names what the download button gets: the model, or how
// many when there are several (their stages are listed above it), and how
// much.
func (m missing) downloadLabel(retry bool) string {
	what := m.Rows[0]
	if len(m.Rows) > 1 {
		what = fmt.Sprintf("the %d missing models", len(m.Rows))
	}
	size := assets.FormatEstimate(m.Bytes, m.Approx)
	if m.Unknown {
		size += " and more"
	}
	verb := "Download"
	if retry {
		verb = "Try again: download"
	}
	return fmt.Sprintf("%s %s (%s)", verb, what, size)
}

// shortError is an error as one line of the window.
func shortError(err error) string { return oneLine(err.Error()) }

// oneLine is a message's first line, cut to what the window shows without
// growing.
func oneLine(msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	const most = 240
	if r := []rune(line); len(r) > most {
		line = string(r[:most]) + "…"
	}
	return line
}
