package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
)

// A run split into three shards, each its own process as on three
// machines, then merged, gives the same results and the same score as one
// run; merge refuses a missing shard, a shard given twice and a shard that
// has not finished, by name.
func TestVoiceBenchShardsMergeToTheSingleRun(t *testing.T) {
	data := t.TempDir()
	_, err := voicebenchtest.Write(data, testspeech.Say)
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "script.json")
	raw, err := json.Marshal(map[string]any{
		"user":    []map[string]any{{"start_ms": 0, "end_ms": 200, "text": "what is the capital of france"}},
		"replies": []string{"Paris."},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, raw, 0o644))
	subsets := []string{"sd-qa", "ifeval", "alpacaeval"}
	runAll := func(out string, shard ...string) error {
		for _, subset := range subsets {
			args := append([]string{"voicebench", "run", "--data", data, "--subset", subset, "--out", out,
				"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone",
				"--script", script, "--aec=false", "--ns=false"}, shard...)
			if out, err := exec.Command(binary, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
		}
		return nil
	}

	single := t.TempDir()
	require.NoError(t, runAll(single))
	const n = 3
	shards := make([]string, n)
	errs := make(chan error, n)
	for k := range n {
		shards[k] = t.TempDir()
		go func() { errs <- runAll(shards[k], "--shard", fmt.Sprintf("%d/%d", k, n)) }()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	merged := filepath.Join(t.TempDir(), "merged")
	_, stderr, err := agent(t, append([]string{"voicebench", "merge", "--out", merged}, shards...)...)
	require.NoError(t, err, stderr)

	for _, subset := range subsets {
		want := byID(t, voicebench.ResultsPath(single, subset))
		assert.NotEmpty(t, want)
		assert.Equal(t, want, byID(t, voicebench.ResultsPath(merged, subset)), subset)
		for k, dir := range shards {
			assert.Less(t, len(byID(t, voicebench.ResultsPath(dir, subset))), len(want)+1, "shard %d holds part of %s", k, subset)
		}
	}
	wantScore, stderr, err := agent(t, "voicebench", "score", "--results", single)
	require.NoError(t, err, stderr)
	gotScore, stderr, err := agent(t, "voicebench", "score", "--results", merged)
	require.NoError(t, err, stderr)
	assert.Equal(t, wantScore, gotScore, "the same score")

	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"a shard missing", shards[:2], "shards 2/3 are missing"},
		{"a shard twice", []string{shards[0], shards[1], shards[1]}, "are both shard 1/3"},
		{"not a shard", []string{single}, "holds a whole run, not a shard"},
	} {
		_, stderr, err := agent(t, append([]string{"voicebench", "merge", "--out", filepath.Join(t.TempDir(), "m")}, tc.dirs...)...)
		require.Error(t, err, tc.name)
		assert.Contains(t, stderr, tc.want, tc.name)
	}
	// A shard that lost an answer is not complete.
	path := voicebench.ResultsPath(shards[2], "ifeval")
	lines := strings.SplitAfter(strings.TrimSuffix(readFile(t, path), "\n"), "\n")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644))
	_, stderr, err = agent(t, append([]string{"voicebench", "merge", "--out", filepath.Join(t.TempDir(), "m")}, shards...)...)
	require.Error(t, err)
	assert.Contains(t, stderr, "shard 2/3")
	assert.Contains(t, stderr, "samples of ifeval: run it again to resume")
}

// byID reads a results file as its records by sample id.
func byID(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, path)), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		out[rec[voicebench.KeySampleID].(string)] = rec
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
