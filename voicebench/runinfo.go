package voicebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/voiceassistant/voice/internal/wiring"
)

// RunInfoFile sits beside the results and says what produced them.
const RunInfoFile = "run.json"

// Stage kinds in RunInfo.
const (
	KindReal   = "real"
	KindDouble = "test double"
	KindOff    = "off"
)

// StageInfo is one stage of the set-up that answered.
type StageInfo struct {
	Stage   string `json:"stage"`
	Backend string `json:"backend"`
	Kind    string `json:"kind"`
}

// RunInfo is run.json: the set-up shared by every results file in the
// directory, so a score is never reported for test doubles as if it were
// the real assistant's.
type RunInfo struct {
	Modality string      `json:"modality"`
	Stages   []StageInfo `json:"stages"`
	// Doubles names the stages that were test doubles.
	Doubles []string `json:"test_doubles"`
	Subsets []string `json:"subsets"`
}

func newRunInfo(modality string, s wiring.Stages) RunInfo {
	info := RunInfo{Modality: modality, Doubles: []string{}}
	for _, b := range s.Backends() {
		if modality != ModalityAudio && b.Stage != "llm" {
			continue // text goes straight to the LLM
		}
		kind := KindReal
		switch {
		case b.Double:
			kind = KindDouble
			info.Doubles = append(info.Doubles, b.Stage)
		case b.Off:
			kind = KindOff
		}
		info.Stages = append(info.Stages, StageInfo{Stage: b.Stage, Backend: b.Backend, Kind: kind})
	}
	return info
}

// ReadRunInfo reads dir's run.json.
func ReadRunInfo(dir string) (RunInfo, error) {
	var info RunInfo
	data, err := os.ReadFile(filepath.Join(dir, RunInfoFile))
	if err != nil {
		return info, fmt.Errorf("voicebench: %w", err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("voicebench: %s: %w", filepath.Join(dir, RunInfoFile), err)
	}
	return info, nil
}

// recordRun adds subset to dir's run.json, refusing to mix results of a
// different set-up into the directory.
func recordRun(dir, subset string, info RunInfo) error {
	old, err := ReadRunInfo(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	case old.Modality != info.Modality || !slices.Equal(old.Stages, info.Stages):
		return fmt.Errorf("voicebench: %s holds results of another set-up (%s, %v); use another --out", dir, old.Modality, old.Stages)
	default:
		info.Subsets = old.Subsets
	}
	if !slices.Contains(info.Subsets, subset) {
		info.Subsets = append(info.Subsets, subset)
		slices.Sort(info.Subsets)
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, RunInfoFile+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("voicebench: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, RunInfoFile)); err != nil {
		return fmt.Errorf("voicebench: %w", err)
	}
	return nil
}
