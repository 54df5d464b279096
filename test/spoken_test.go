package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/testenv"
)

// spoken records parts with espeak-ng as name.wav and writes name.json,
// the script the doubles follow: each spoken part an utterance the
// scripted recognizer hears (and after which the scripted turn detector
// says "complete"), and the LLM's replies, first token and speed.
func spoken(t *testing.T, name string, replies []string, firstTokenMS, tokensPerSecond float64, parts ...testspeech.Part) (wav, script string) {
	t.Helper()
	if err := testspeech.Available(); err != nil {
		testenv.Missing(t, err.Error())
	}
	pcm, spans, err := testspeech.Splice(parts...)
	require.NoError(t, err)
	dir := t.TempDir()
	wav = filepath.Join(dir, name+".wav")
	require.NoError(t, audio.WriteWAV(wav, audio.Mono16k, pcm, audio.PCM16))
	type user struct {
		StartMS float64 `json:"start_ms"`
		EndMS   float64 `json:"end_ms"`
		Text    string  `json:"text"`
	}
	s := struct {
		User            []user   `json:"user"`
		Replies         []string `json:"replies"`
		FirstTokenMS    float64  `json:"first_token_ms"`
		TokensPerSecond float64  `json:"tokens_per_second,omitempty"`
	}{Replies: replies, FirstTokenMS: firstTokenMS, TokensPerSecond: tokensPerSecond}
	for _, sp := range spans {
		s.User = append(s.User, user{StartMS: float64(sp.Start.Milliseconds()), EndMS: float64(sp.End.Milliseconds()), Text: sp.Text})
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	script = filepath.Join(dir, name+".json")
	require.NoError(t, os.WriteFile(script, data, 0o644))
	return wav, script
}
