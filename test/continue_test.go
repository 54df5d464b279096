package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/internal/testspeech"
)

// One spoken sentence with two pauses in it (espeak-ng, real Silero), and
// a scripted turn detector that calls each pause complete, as a detector
// sometimes does (bug: eight words became three commits, the words before
// each pause committed twice). Every word is committed once, in order,
// and the turn is continued at each pause.
func TestSentenceWithPausesCommitsEachWordOnce(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	if err := testspeech.Available(); err != nil {
		testenv.Missing(t, err.Error())
	}
	pieces := []string{"can you tell me", "about the weather", "in paris tomorrow"}
	parts := []testspeech.Part{{Silence: 500 * time.Millisecond}}
	for i, p := range pieces {
		if i > 0 {
			parts = append(parts, testspeech.Part{Silence: 350 * time.Millisecond})
		}
		parts = append(parts, testspeech.Part{Text: p})
	}
	parts = append(parts, testspeech.Part{Silence: 4 * time.Second})
	pcm, spans, err := testspeech.Splice(parts...)
	require.NoError(t, err)
	dir := t.TempDir()
	wav := filepath.Join(dir, "sentence.wav")
	require.NoError(t, audio.WriteWAV(wav, audio.Mono16k, pcm, audio.PCM16))
	type user struct {
		StartMS float64 `json:"start_ms"`
		EndMS   float64 `json:"end_ms"`
		Text    string  `json:"text"`
	}
	script := struct {
		User         []user   `json:"user"`
		Replies      []string `json:"replies"`
		FirstTokenMS float64  `json:"first_token_ms"`
	}{Replies: []string{"Let me look that up for you."}, FirstTokenMS: 150}
	for _, sp := range spans {
		// Each piece its own scripted utterance: the detector says
		// "complete" in the pause after it.
		script.User = append(script.User, user{StartMS: float64(sp.Start.Milliseconds()), EndMS: float64(sp.End.Milliseconds()), Text: sp.Text})
	}
	data, err := json.Marshal(script)
	require.NoError(t, err)
	scriptPath := filepath.Join(dir, "sentence.json")
	require.NoError(t, os.WriteFile(scriptPath, data, 0o644))

	events := filepath.Join(dir, "events.jsonl")
	_, stderr, err := agent(t, "replay", wav, "--events", events, "--vad", "silero", "--asr", "scripted", "--turn", "scripted",
		"--llm", "scripted", "--tts", "tone", "--script", scriptPath)
	require.NoError(t, err, stderr)
	raw, err := os.ReadFile(events)
	require.NoError(t, err)
	var commits []string
	continued := 0
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		switch e.Type {
		case "turn_commit":
			commits = append(commits, e.Text)
		case "turn_continued":
			continued++
		}
	}
	t.Logf("commits %q, %d continued", commits, continued)
	require.Greater(t, len(commits), 1, "the detector called a pause inside the sentence complete")
	assert.Equal(t, strings.Fields(strings.Join(pieces, " ")), strings.Fields(strings.Join(commits, " ")),
		"every word committed once, in order (commits %q)", commits)
	assert.Equal(t, len(commits)-1, continued, "each early commit continued (commits %q)", commits)
}
