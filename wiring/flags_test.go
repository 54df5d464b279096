package wiring

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/tts/moss"
)

// InEffect gives a setting left to its engine's default that default, and
// keeps a setting given.
func TestInEffect(t *testing.T) {
	set := DefaultStages()
	set.LLMThreads, set.LLMMaxTokens, set.VADThreads, set.TurnThreads, set.ASRThreads, set.TTSThreads, set.Voice = 3, 64, 2, 2, 2, 2, "Ava"
	for _, tc := range []struct {
		name  string
		in    Stages
		check func(t *testing.T, s Stages)
	}{
		{"defaults", DefaultStages(), func(t *testing.T, s Stages) {
			for _, n := range []int{s.LLMThreads, s.LLMMaxTokens, s.VADThreads, s.TurnThreads, s.ASRThreads, s.TTSThreads} {
				assert.Positive(t, n)
			}
			assert.Equal(t, onnxThreads, s.ASRThreads)
			assert.Equal(t, llmMaxTokens, s.LLMMaxTokens)
			assert.LessOrEqual(t, s.LLMThreads, 4)
			assert.Equal(t, moss.DefaultVoice, s.Voice)
		}},
		{"given", set, func(t *testing.T, s Stages) { assert.Equal(t, set, s) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.in.InEffect()
			tc.check(t, s)
			assert.Equal(t, s, s.InEffect(), "settled")
		})
	}
}

// --barge-in takes the word after it as its value, as the docs write it:
// with an optional value it left `off` to the command, which took it for
// a second recording.
func TestBargeInFlagTakesTheNextWord(t *testing.T) {
	s := DefaultStages()
	f := pflag.NewFlagSet("replay", pflag.ContinueOnError)
	s.AddFlags(f, ConversationFlags)
	require.NoError(t, f.Parse([]string{"IN.wav", "--barge-in", "off"}))
	assert.Equal(t, pipeline.InterruptOff, s.BargeIn.Mode)
	assert.Equal(t, []string{"IN.wav"}, f.Args())
}
