package voicebench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// RunInfoFile sits beside the results and says what produced them.
const RunInfoFile = "run.json"

// Stage kinds in RunInfo.
const (
	KindReal    = "real"
	KindStandIn = "stand-in"
	KindOff     = "off"
)

// StageInfo is one stage of the set-up that answered.
type StageInfo struct {
	Stage   string `json:"stage"`
	Backend string `json:"backend"`
	Kind    string `json:"kind"`
}

// RunInfo is run.json: the set-up shared by every results file in the
// directory, so a score is never reported for stand-ins as if it were
// the real assistant's.
type RunInfo struct {
	Modality string      `json:"modality"`
	Stages   []StageInfo `json:"stages"`
	// StandIns names the stages that were stand-ins.
	StandIns []string `json:"stand_ins"`
	// ComputeScale and Limit are the run's --compute-scale (which changes
	// the latencies recorded) and --limit (which samples it answers).
	ComputeScale float64 `json:"compute_scale,omitempty"`
	Limit        int     `json:"limit,omitempty"`
	// Shard is the part of the run the directory holds: nil for a whole
	// run, and for shards merged back into one.
	Shard   *Shard   `json:"shard,omitempty"`
	Subsets []string `json:"subsets"`
	// Samples counts, per subset, the samples the run is to answer (of
	// its shard, within the limit), once it has read the whole subset:
	// what merge holds each shard's results to.
	Samples map[string]int `json:"samples,omitempty"`
}

func newRunInfo(cfg Config) RunInfo {
	info := RunInfo{Modality: cfg.Modality, StandIns: []string{}, ComputeScale: cfg.ComputeScale, Limit: cfg.Limit}
	if cfg.Shard.Count > 1 {
		info.Shard = &cfg.Shard
	}
	for _, b := range cfg.Stages.Backends() {
		if cfg.Modality != ModalityAudio && b.Stage != "llm" {
			continue // text goes straight to the LLM
		}
		kind := KindReal
		switch {
		case b.StandIn:
			kind = KindStandIn
			info.StandIns = append(info.StandIns, b.Stage)
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
	return info, readTestDoubles(data, &info)
}

// readTestDoubles reads what run.json called stand-ins before they were
// so named (test doubles) into info, so that older results still score
// with their note and a run into their directory goes on as the same
// set-up.
func readTestDoubles(data []byte, info *RunInfo) error {
	var old struct {
		TestDoubles []string `json:"test_doubles"`
	}
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	if info.StandIns == nil {
		info.StandIns = old.TestDoubles
	}
	for i := range info.Stages {
		if info.Stages[i].Kind == "test double" {
			info.Stages[i].Kind = KindStandIn
		}
	}
	return nil
}

// recordRun adds subset to dir's run.json, refusing to mix results of a
// different set-up into the directory.
func recordRun(dir, subset string, info RunInfo) error {
	old, err := ReadRunInfo(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if d := setupDiff(old, info); d != "" {
			return fmt.Errorf("voicebench: %s holds results of another set-up (%s); use another --out", dir, d)
		}
		if shardLabel(old.Shard) != shardLabel(info.Shard) {
			return fmt.Errorf("voicebench: %s holds shard %s, not %s; use another --out", dir, shardLabel(old.Shard), shardLabel(info.Shard))
		}
		info.Subsets = old.Subsets
		// Counts made under another limit are made again as the runs end.
		if old.Limit == info.Limit {
			info.Samples = old.Samples
		}
	}
	if !slices.Contains(info.Subsets, subset) {
		info.Subsets = append(info.Subsets, subset)
		slices.Sort(info.Subsets)
	}
	return writeRunInfo(dir, info)
}

// writeRunInfo replaces dir's run.json in one step.
func writeRunInfo(dir string, info RunInfo) error {
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

// setupDiff says how two runs' set-ups differ ("" if they do not): the
// things that change the answers or their latencies. (A run may go on
// under another --limit: it answers more or fewer of the same samples.)
func setupDiff(a, b RunInfo) string {
	switch {
	case a.Modality != b.Modality:
		return fmt.Sprintf("modality %s, not %s", a.Modality, b.Modality)
	case !slices.Equal(a.Stages, b.Stages):
		return fmt.Sprintf("stages %v, not %v", a.Stages, b.Stages)
	case a.ComputeScale != b.ComputeScale:
		return fmt.Sprintf("compute scale %v, not %v", a.ComputeScale, b.ComputeScale)
	}
	return ""
}

func shardLabel(s *Shard) string {
	if s == nil {
		return "the whole run"
	}
	return s.String()
}

// recordSamples notes in dir's run.json how many samples of subset the
// run is to answer, once it has read them all.
func recordSamples(dir, subset string, n int) error {
	info, err := ReadRunInfo(dir)
	if err != nil {
		return err
	}
	if info.Samples == nil {
		info.Samples = map[string]int{}
	}
	info.Samples[subset] = n
	return writeRunInfo(dir, info)
}
