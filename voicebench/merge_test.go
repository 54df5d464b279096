package voicebench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardDir writes a shard's output: its run.json and, for each subset,
// one result line per id, with its sample count.
func shardDir(t *testing.T, info RunInfo, results map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	info.Samples = map[string]int{}
	for subset, ids := range results {
		info.Subsets = append(info.Subsets, subset)
		info.Samples[subset] = len(ids)
		var data []byte
		for _, id := range ids {
			data = fmt.Appendf(data, "{%q:%q,%q:\"ok\"}\n", KeySampleID, id, KeyResponse)
		}
		require.NoError(t, os.WriteFile(ResultsPath(dir, subset), data, 0o644))
	}
	require.NoError(t, writeRunInfo(dir, info))
	return dir
}

// idsOf splits ids between the shards of count as the partition does.
func idsOf(subset string, count int, ids ...string) [][]string {
	out := make([][]string, count)
	for _, id := range ids {
		for k := range count {
			if (Shard{Index: k, Count: count}).Has(subset, id) {
				out[k] = append(out[k], id)
			}
		}
	}
	return out
}

func TestMergeRefusesWhatDoesNotAddUp(t *testing.T) {
	base := RunInfo{Modality: ModalityText, Stages: []StageInfo{{Stage: "llm", Backend: "mnn", Kind: KindReal}}}
	ids := idsOf("ifeval", 2, "1", "2", "3", "4", "5", "6", "7", "8")
	require.NotEmpty(t, ids[0])
	require.NotEmpty(t, ids[1])
	shard := func(k int, edit func(*RunInfo), results []string) string {
		info := base
		info.Stages = slices.Clone(base.Stages)
		info.Shard = &Shard{Index: k, Count: 2}
		if edit != nil {
			edit(&info)
		}
		return shardDir(t, info, map[string][]string{"ifeval": results})
	}
	good0, good1 := shard(0, nil, ids[0]), shard(1, nil, ids[1])
	// A shard stopped before it read its subset through has no count.
	unfinished := shard(1, nil, ids[1][:1])
	partial, err := ReadRunInfo(unfinished)
	require.NoError(t, err)
	partial.Samples = nil
	require.NoError(t, writeRunInfo(unfinished, partial))
	// One that lost an answer (or was stopped mid-subset after counting).
	short := shard(1, nil, ids[1])
	lost, err := ReadRunInfo(short)
	require.NoError(t, err)
	lost.Samples["ifeval"]++
	require.NoError(t, writeRunInfo(short, lost))

	merged := filepath.Join(t.TempDir(), "merged")
	info, err := Merge(merged, []string{good1, good0})
	require.NoError(t, err)
	assert.Nil(t, info.Shard)
	assert.Equal(t, map[string]int{"ifeval": 8}, info.Samples)
	again, err := ReadRunInfo(merged)
	require.NoError(t, err)
	assert.Equal(t, info, again)

	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"other stages", []string{good0, shard(1, func(i *RunInfo) { i.Stages[0].Backend = "scripted" }, ids[1])}, "different set-ups (stages"},
		{"other compute scale", []string{good0, shard(1, func(i *RunInfo) { i.ComputeScale = 1 }, ids[1])}, "compute scale"},
		{"other limit", []string{good0, shard(1, func(i *RunInfo) { i.Limit = 4 }, ids[1])}, "--limit"},
		{"split otherwise", []string{good0, shard(1, func(i *RunInfo) { i.Shard = &Shard{Index: 1, Count: 3} }, ids[1])}, "runs split differently"},
		{"a sample in the wrong shard", []string{good0, shard(1, nil, append([]string{ids[0][0]}, ids[1]...))}, "which is not shard 1/2's"},
		{"unfinished", []string{good0, unfinished}, "has not finished ifeval"},
		{"an answer short", []string{good0, short}, fmt.Sprintf("has %d of its %d samples of ifeval", len(ids[1]), len(ids[1])+1)},
		{"no shards", nil, "needs the shards"},
	} {
		_, err := Merge(filepath.Join(t.TempDir(), "m"), tc.dirs)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err = Merge(merged, []string{good0, good1})
	assert.ErrorContains(t, err, "is not empty", "never over another merge")
}
