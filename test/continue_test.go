package test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio/testspeech"
	"github.com/voiceassistant/voice/internal/testenv"
)

// One spoken sentence with two pauses in it (espeak-ng, real Silero), and
// a scripted turn detector that calls each pause complete, as a detector
// sometimes does (bug: eight words became three commits, the words before
// each pause committed twice). Every word is committed once, in order,
// and the turn is continued at each pause.
func TestSentenceWithPausesCommitsEachWordOnce(t *testing.T) {
	testenv.Model(t, "silero_vad_v5.onnx")
	pieces := []string{"can you tell me", "about the weather", "in paris tomorrow"}
	// Each piece its own scripted utterance: the detector says "complete"
	// in the pause after it.
	parts := []testspeech.Part{{Silence: 500 * time.Millisecond}}
	for i, p := range pieces {
		if i > 0 {
			parts = append(parts, testspeech.Part{Silence: 350 * time.Millisecond})
		}
		parts = append(parts, testspeech.Part{Text: p})
	}
	parts = append(parts, testspeech.Part{Silence: 4 * time.Second})
	wav, script := spoken(t, "sentence", []string{"Let me look that up for you."}, 150, 0, parts...)
	r := replayTalk(t, binary, wav, script)
	t.Logf("commits %q, %d continued", r.commits, r.continued)
	require.Greater(t, len(r.commits), 1, "the detector called a pause inside the sentence complete")
	assert.Equal(t, strings.Fields(strings.Join(pieces, " ")), strings.Fields(r.commits[len(r.commits)-1]),
		"the last commit is the sentence, every word once, in order (commits %q)", r.commits)
	assert.Equal(t, len(r.commits)-1, r.continued, "each early commit continued (commits %q)", r.commits)
	assert.Len(t, r.voiceToVoice, 1, "one turn: the replies dropped for the continuations have no metrics")
}
