package test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
)

// Ctrl-C in the middle of `voicebench run` keeps every finished answer,
// says how to resume, and the same command then answers only the rest. The
// LLM double waits a second of wall time before each reply (text mode runs
// in wall time), so the signal lands while a sample is in flight.
func TestVoiceBenchInterruptAndResume(t *testing.T) {
	data, out := t.TempDir(), t.TempDir()
	prompts := []string{"tell me a joke", "what should i cook tonight", "explain rainbows"}
	var records []map[string]any
	for _, p := range prompts {
		records = append(records, map[string]any{"prompt": p})
	}
	require.NoError(t, voicebenchtest.WriteJSONL(filepath.Join(data, "alpacaeval.jsonl"), records))
	script := filepath.Join(t.TempDir(), "script.json")
	raw, err := json.Marshal(map[string]any{"replies": []string{"Sure."}, "first_token_ms": 1000})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, raw, 0o644))
	args := []string{"voicebench", "run", "--data", data, "--subset", "alpacaeval", "--out", out,
		"--modality", "text", "--llm", "scripted", "--script", script}
	results := voicebench.ResultsPath(out, "alpacaeval")

	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	require.Eventually(t, func() bool { return len(lines(results)) == 1 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	require.Error(t, err, "an interrupted run fails")
	assert.Contains(t, stderr.String(), "interrupted after 1 answers; run the same command again to resume")
	first := lines(results)
	require.Len(t, first, 1, "the sample in flight is not written")

	// The resumed run must also end with no goroutine left behind.
	t.Setenv("VOICE_AGENT_LEAKCHECK", "1")
	stdout, stderr2, err := agent(t, args...)
	require.NoError(t, err, stdout+stderr2)
	assert.Contains(t, stderr2, "answered=2")
	assert.Contains(t, stderr2, "skipped=1")
	all := lines(results)
	require.Len(t, all, 3)
	assert.Equal(t, first[0], all[0], "the finished answer kept as written")
	var ids []string
	for _, l := range all {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec))
		ids = append(ids, rec[voicebench.KeySampleID].(string))
		assert.Equal(t, "Sure.", rec[voicebench.KeyResponse])
	}
	slices.Sort(ids)
	assert.Equal(t, []string{"0", "1", "2"}, ids)
}

// lines reads the complete lines of a file (none if it does not exist
// yet); it runs outside the test goroutine, so it cannot fail the test.
func lines(path string) []string {
	data, _ := os.ReadFile(path)
	complete := data[:bytes.LastIndexByte(data, '\n')+1]
	return strings.FieldsFunc(string(complete), func(r rune) bool { return r == '\n' })
}
