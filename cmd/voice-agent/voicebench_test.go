//go:build !novoicebench

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/voicebenchtest"
	"github.com/voiceassistant/voice/wiring"
)

// voiceAgent runs the command line in-process.
func voiceAgent(t *testing.T, args ...string) (string, error) {
	t.Helper()
	a := newApp()
	root := a.root()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func resultLines(t *testing.T, dir, subset string) []string {
	t.Helper()
	f, err := os.Open(voicebench.ResultsPath(dir, subset))
	require.NoError(t, err)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.NoError(t, sc.Err())
	return lines
}

// The harness end to end on spoken samples (espeak-ng) in both dataset
// forms, through the real Silero VAD and the scripted recognizer and LLM:
// a limited run, a resumed full run, and the score.
func TestVoiceBenchRunResumeScore(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	if err := testspeech.Available(); err != nil {
		testenv.Missing(t, err.Error())
	}
	testenv.Model(t, wiring.SileroFile)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())

	data, out := t.TempDir(), t.TempDir()
	want, err := voicebenchtest.Write(data, testspeech.Say)
	require.NoError(t, err)
	const heard, reply = "what is the capital of france", "Paris."
	script := filepath.Join(t.TempDir(), "script.json")
	raw, err := json.Marshal(map[string]any{
		"user":    []map[string]any{{"start_ms": 0, "end_ms": 200, "text": heard}}, // espeak starts at once
		"replies": []string{reply},
	})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(script, raw, 0o644))
	stages := []string{"--vad", "silero", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "none",
		"--script", script, "--aec=false", "--ns=false"}

	for _, subset := range []string{"sd-qa", "ifeval", "alpacaeval"} {
		run := append([]string{"voicebench", "run", "--data", data, "--subset", subset, "--out", out, "--workers", "2"}, stages...)
		_, err := voiceAgent(t, append(run, "--limit", "1")...)
		require.NoError(t, err)
		first := resultLines(t, out, subset)
		require.Len(t, first, 1)

		_, err = voiceAgent(t, run...)
		require.NoError(t, err)
		lines := resultLines(t, out, subset)
		assert.Equal(t, first[0], lines[0], "the finished sample is kept, not redone")
		var ids []string
		for _, l := range lines {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &rec))
			ids = append(ids, rec[voicebench.KeySampleID].(string))
			assert.Equal(t, heard, rec[voicebench.KeyTranscript], l)
			assert.Equal(t, reply, rec[voicebench.KeyResponse], l)
			assert.NotContains(t, rec, voicebench.KeyError, l)
			lat := rec[voicebench.KeyLatency].(map[string]any)
			// Silero's end of speech to the commit: the endpointing wait.
			assert.Greater(t, lat["endpoint"], 0.0, l)
		}
		slices.Sort(ids)
		assert.Equal(t, want[subset], ids, "every sample once")
	}

	stdout, err := voiceAgent(t, "voicebench", "score", "--results", out)
	require.NoError(t, err)
	// Every ifeval reply is "Paris.": under three words (followed), without
	// "blue" (not followed), so each prompt fails and half the
	// instructions pass: the mean of 0, 0, 50 and 50.
	assert.Regexp(t, `\| ifeval \|[^\n]*\| 3 \| 3 \| 25\.00 \|`, stdout)
	assert.Contains(t, stdout, "Stand-ins answered these results (asr, llm)")
	summary, err := os.ReadFile(filepath.Join(out, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "Stand-ins answered these results (asr, llm)", "the saved summary says so too")
	info, err := voicebench.ReadRunInfo(out)
	require.NoError(t, err)
	assert.Equal(t, []string{"alpacaeval", "ifeval", "sd-qa"}, info.Subsets)
	assert.Contains(t, info.Stages, voicebench.StageInfo{Stage: "vad", Backend: "silero", Kind: voicebench.KindReal})
}

func TestVoiceBenchCommandErrors(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	data := t.TempDir()
	require.NoError(t, voicebenchtest.WriteJSONL(filepath.Join(data, "alpacaeval.jsonl"), []map[string]any{{"prompt": "hi"}}))
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no subset", []string{"voicebench", "run", "--data", data, "--out", t.TempDir()}, `"subset" not set`},
		{"unknown subset", []string{"voicebench", "run", "--data", data, "--subset", "bbh", "--out", t.TempDir()}, `unknown subset "bbh"`},
		{"bad modality", []string{"voicebench", "run", "--data", data, "--subset", "alpacaeval", "--out", t.TempDir(), "--modality", "video"}, `unknown modality "video"`},
		{"no results", []string{"voicebench", "score", "--results", t.TempDir()}, "no results files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := voiceAgent(t, tc.args...)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// --compute-scale is one flag wherever it is offered: the same help, and
// compute charged by default only where the charge is what is measured.
func TestComputeScaleIsTheSameFlagEverywhere(t *testing.T) {
	for _, tc := range []struct {
		command []string
		def     string
	}{
		{[]string{"replay"}, "0"},
		{[]string{"voicebench", "run"}, "0"},
		{[]string{"bench", "pipeline"}, "1"},
	} {
		cmd, _, err := newApp().root().Find(tc.command)
		require.NoError(t, err)
		f := cmd.Flags().Lookup("compute-scale")
		require.NotNil(t, f, "%v", tc.command)
		assert.Equal(t, tc.def, f.DefValue, "%v", tc.command)
		assert.Contains(t, f.Usage, "charge each stage's measured compute to the replay clock", "%v", tc.command)
	}
}
