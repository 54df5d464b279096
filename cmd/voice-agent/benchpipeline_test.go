package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/bench"
)

// The report says where each underrun fell: between chunks (the next
// began late) or inside one (synthesized slower than it played).
func TestBenchPipelineSaysWhereUnderrunsFell(t *testing.T) {
	var out bytes.Buffer
	printBench(&out, bench.PipelineResult{Underruns: 9, UnderrunGaps: []bench.UnderrunGap{
		{Reply: 3, Chunk: 1, Chunks: 3, AtMS: 462, GapMS: 80, Between: true},
		{Reply: 7, Chunk: 2, Chunks: 2, AtMS: 2250, GapMS: 10},
	}})
	for _, want := range []string{
		"underruns after a reply's first audio: 9",
		"dry 80 ms in reply 3, 0.46 s into its audio, after chunk 1 of 3 (the next began late)",
		"dry 10 ms in reply 7, 2.25 s into its audio, inside chunk 2 of 2 (synthesized slower than it played)",
	} {
		assert.Contains(t, out.String(), want)
	}
}

// The report says how often the assistant guessed, and why the
// speculated replies it dropped were dropped.
func TestBenchPipelineCountsTheGuesses(t *testing.T) {
	var out bytes.Buffer
	printBench(&out, bench.PipelineResult{Guesses: bench.Guesses{Speculations: 5, Hits: 2,
		Dropped: map[string]int{"transcript_changed": 1, "speech_resumed": 2}, Continuations: 1, BargeIns: 3}})
	assert.Contains(t, out.String(), "guesses: 5 speculations, 2 hits, dropped speech_resumed 2, transcript_changed 1; 1 continuations (committed too early), 3 barge-ins")
}

// Compute-only latency is given beside voice to voice.
func TestBenchPipelineGivesComputeOnly(t *testing.T) {
	var out bytes.Buffer
	printBench(&out, bench.PipelineResult{VoiceToVoice: bench.Percentiles{P50: 900, P95: 1200}, ComputeOnly: bench.Percentiles{P50: 310, P95: 420},
		Compute: map[string]bench.Percentiles{"llm_first_token": {P50: 180, P95: 240}}})
	assert.Contains(t, out.String(), "voice to voice: p50 900 ms, p95 1200 ms; compute only (no endpointing wait, buffering or queueing): p50 310 ms, p95 420 ms")
	assert.Contains(t, out.String(), "  llm_first_token       180.0    240.0")
}

// Every bench command's JSON says which commit it measured, on what
// machine and when, for cmd/perfdoc to head its tables with.
func TestBenchJSONSaysWhereItWasMeasured(t *testing.T) {
	// The demo's words, said at once: the LLM's tests run in no time.
	fast := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(fast, []byte(`{"user": [{"start_ms": 500, "end_ms": 2295, "text": "what is the weather like today"}],
		"replies": ["It is sunny."], "first_token_ms": 1, "tokens_per_second": 100000}`), 0o644))
	script := []string{"--script", fast, "--json"}
	doubles := append([]string{"--vad", "energy", "--asr", "scripted", "--turn", "none", "--llm", "scripted", "--tts", "tone"}, script...)
	llm := append([]string{"--llm", "scripted"}, script...)
	for _, args := range [][]string{
		append([]string{"bench", "pipeline", "../../test/testdata/demo.wav"}, doubles...),
		append([]string{"bench", "stages", "../../test/testdata/demo.wav"}, doubles...),
		append([]string{"bench", "llm", "--runs", "1"}, llm...),
		append([]string{"bench", "llm", "--conversation", "2"}, llm...),
	} {
		t.Run(strings.Join(args[:3], " "), func(t *testing.T) {
			before := time.Now().UTC().Truncate(time.Second)
			_, _, out := executed(t, args...)
			var res struct{ Measured bench.Measured }
			require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
			assert.Equal(t, buildCommit(), res.Measured.Commit)
			assert.Contains(t, res.Measured.Machine, fmt.Sprintf("%d cores, %s/%s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH))
			assert.WithinRange(t, res.Measured.Date, before, time.Now().UTC())
		})
	}
}
