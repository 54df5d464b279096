package bench

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/wiring"
)

const demo = "../test/testdata/demo.wav"

// doubles are every stage's stand-in, on the demo's script: no model
// is needed.
func doubles() wiring.Stages {
	s := wiring.DefaultStages()
	s.VAD, s.ASR, s.Turn, s.LLM, s.TTS = wiring.VADEnergy, wiring.ASRScripted, wiring.TurnNone, wiring.LLMScripted, wiring.TTSTone
	s.Script = "../test/testdata/demo.json"
	s.FrontEnd = wiring.FrontEnd{}
	return s
}

// With compute free the replay is the recording's own: every turn is
// answered, and the parts on the path add up to voice to voice.
func TestPipelineAnswersEveryTurnOfTheDemo(t *testing.T) {
	res, err := Pipeline(context.Background(), demo, doubles(), PipelineOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Turns)
	assert.Equal(t, 2, res.Answered)
	assert.Equal(t, map[string]string{"vad": "energy", "asr": "scripted", "turn": "none", "llm": "scripted", "tts": "tone"}, res.Stages)
	sum := 0.0
	for _, name := range VoiceToVoicePartNames {
		sum += res.VoiceToVoicePath[name]
	}
	assert.InDelta(t, res.VoiceToVoiceMean, sum, 0.01)
	assert.Positive(t, res.VoiceToVoice.P50)
	assert.Positive(t, res.PeakRSSBytes)
	g := res.Guesses
	assert.LessOrEqual(t, g.Hits, g.Speculations)
	assert.Equal(t, res.Speculated, g.Hits, "a turn answered by a speculated reply is a hit")
	dropped := 0
	for _, n := range g.Dropped {
		dropped += n
	}
	assert.Equal(t, g.Speculations, g.Hits+dropped, "every speculation hits or is dropped, once: the session's end drops the last")
	assert.GreaterOrEqual(t, g.Continuations, 0)
	assert.LessOrEqual(t, g.BargeIns, res.Answered, "a barge-in cuts a reply that played")
}

// With compute on the clock, each answered turn's compute-only latency
// is measured, and less than voice to voice, which waits for the
// endpointing policy besides.
func TestPipelineMeasuresComputeOnly(t *testing.T) {
	res, err := Pipeline(context.Background(), demo, doubles(), PipelineOptions{ComputeScale: 1})
	require.NoError(t, err)
	require.Equal(t, 2, res.Answered)
	assert.Positive(t, res.ComputeOnly.P50)
	assert.Less(t, res.ComputeOnly.P95, res.VoiceToVoice.P50)
	for _, part := range []string{"asr_final", "llm_first_token", "tts_first_audio"} {
		assert.Contains(t, res.Compute, part)
	}
}

// The LLM's tests are the two reply lengths and the turn test, each over
// the runs asked for.
func TestLLMRunsEachTest(t *testing.T) {
	res, err := LLM(context.Background(), doubles(), 2)
	require.NoError(t, err)
	require.Len(t, res.Tests, 2)
	assert.Equal(t, "pp512+tg128", res.Tests[0].Name)
	assert.Equal(t, "pp512+tg256", res.Tests[1].Name)
	for _, test := range res.Tests {
		assert.Equal(t, 2, test.Runs)
		assert.Positive(t, test.PromptTokens)
	}
	require.NotNil(t, res.Turn)
	assert.Equal(t, 2, res.Turn.Runs)
}

// A long conversation reports every turn, numbered from 1.
func TestConversationReportsEveryTurn(t *testing.T) {
	res, err := Conversation(context.Background(), doubles(), 3)
	require.NoError(t, err)
	require.Len(t, res.Turns, 3)
	for i, turn := range res.Turns {
		assert.Equal(t, i+1, turn.Turn)
		assert.Positive(t, turn.HistoryChars)
	}
}

// Stand-ins load no model: each stage is skipped, none measured.
func TestStagesSkipsTheDoubles(t *testing.T) {
	res, err := Stages(context.Background(), doubles(), demo, StagesOptions{Text: "Hello."})
	require.NoError(t, err)
	assert.Empty(t, res.Stages)
	assert.Subset(t, res.Skipped, []string{"vad", "asr", "turn", "llm", "tts"})
}

// A replay can keep the Go heap's profile at its peak, which go tool
// pprof reads.
func TestPipelineHeapProfile(t *testing.T) {
	var prof bytes.Buffer
	_, err := Pipeline(context.Background(), demo, doubles(), PipelineOptions{HeapProfile: &prof})
	require.NoError(t, err)
	p, err := profile.Parse(&prof)
	require.NoError(t, err)
	assert.NotEmpty(t, p.Sample)
}
