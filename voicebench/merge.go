package voicebench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Merge combines the results of every shard of a run (voicebench run
// --shard K/N, one directory each) into out, as one machine would have
// written them, so that score gives the same summary. It refuses shards of
// different set-ups, a shard given twice or missing, a sample answered by
// two shards, and a shard that has not answered all its samples, naming
// them. out must be empty or not exist.
func Merge(out string, dirs []string) (RunInfo, error) {
	if len(dirs) == 0 {
		return RunInfo{}, errors.New("voicebench: merge needs the shards' result directories")
	}
	infos := make([]RunInfo, len(dirs))
	for i, dir := range dirs {
		info, err := ReadRunInfo(dir)
		if err != nil {
			return RunInfo{}, fmt.Errorf("voicebench: %s is not the output of a voicebench run: %w", dir, err)
		}
		if info.Shard == nil {
			return RunInfo{}, fmt.Errorf("voicebench: %s holds a whole run, not a shard (voicebench run --shard K/N)", dir)
		}
		infos[i] = info
	}
	first := infos[0]
	byIndex := map[int]string{}
	for i, info := range infos {
		if d := setupDiff(first, info); d != "" {
			return RunInfo{}, fmt.Errorf("voicebench: %s and %s are runs of different set-ups (%s)", dirs[0], dirs[i], d)
		}
		switch {
		case info.Limit != first.Limit:
			return RunInfo{}, fmt.Errorf("voicebench: %s ran with --limit %d and %s with %d", dirs[0], first.Limit, dirs[i], info.Limit)
		case info.Shard.Count != first.Shard.Count:
			return RunInfo{}, fmt.Errorf("voicebench: %s is shard %s and %s shard %s: runs split differently", dirs[0], first.Shard, dirs[i], info.Shard)
		case !slices.Equal(info.Subsets, first.Subsets):
			return RunInfo{}, fmt.Errorf("voicebench: %s has subsets %v and %s %v", dirs[0], first.Subsets, dirs[i], info.Subsets)
		}
		if other, dup := byIndex[info.Shard.Index]; dup {
			return RunInfo{}, fmt.Errorf("voicebench: %s and %s are both shard %s", other, dirs[i], info.Shard)
		}
		byIndex[info.Shard.Index] = dirs[i]
	}
	var missing []string
	for k := range first.Shard.Count {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, Shard{k, first.Shard.Count}.String())
		}
	}
	if len(missing) > 0 {
		return RunInfo{}, fmt.Errorf("voicebench: shards %s are missing (%d of %d given)", strings.Join(missing, ", "), len(dirs), first.Shard.Count)
	}
	if err := emptyDir(out); err != nil {
		return RunInfo{}, err
	}

	merged := first
	merged.Shard, merged.Samples = nil, map[string]int{}
	for _, subset := range first.Subsets {
		var data []byte
		from := map[string]string{}
		for i, dir := range dirs {
			lines, err := shardResults(dir, subset, infos[i])
			if err != nil {
				return RunInfo{}, err
			}
			for _, l := range lines {
				if other, dup := from[l.id]; dup {
					return RunInfo{}, fmt.Errorf("voicebench: sample %s of %s is answered in %s and in %s", l.id, subset, other, dir)
				}
				from[l.id] = dir
				data = append(append(data, l.line...), '\n')
			}
			merged.Samples[subset] += infos[i].Samples[subset]
		}
		if err := os.WriteFile(ResultsPath(out, subset), data, 0o644); err != nil {
			return RunInfo{}, fmt.Errorf("voicebench: %w", err)
		}
	}
	return merged, writeRunInfo(out, merged)
}

// shardResults reads a shard's results of subset, holding them to what
// the shard was to answer.
func shardResults(dir, subset string, info RunInfo) ([]resultLine, error) {
	path := ResultsPath(dir, subset)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("voicebench: shard %s: %w", info.Shard, err)
	}
	lines, _, err := resultLines(path, data)
	if err != nil {
		return nil, err
	}
	want, counted := info.Samples[subset]
	switch {
	case !counted:
		return nil, fmt.Errorf("voicebench: shard %s (%s) has not finished %s: run it again to resume", info.Shard, dir, subset)
	case len(lines) < want:
		return nil, fmt.Errorf("voicebench: shard %s (%s) has %d of its %d samples of %s: run it again to resume", info.Shard, dir, len(lines), want, subset)
	}
	for _, l := range lines {
		if !info.Shard.Has(subset, l.id) {
			return nil, fmt.Errorf("voicebench: %s holds sample %s of %s, which is not shard %s's", dir, l.id, subset, info.Shard)
		}
	}
	return lines, nil
}

// emptyDir makes dir if need be, and refuses one that holds anything.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return fmt.Errorf("voicebench: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("voicebench: %s is not empty; merge into a new directory", filepath.Clean(dir))
	}
	return nil
}
