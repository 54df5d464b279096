package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/pipeline"
)

func state(s pipeline.State) pipeline.Event {
	return pipeline.Event{Type: pipeline.EvState, State: s}
}

func metrics(turn int, m pipeline.TurnMetrics) pipeline.Event {
	return pipeline.Event{Type: pipeline.EvTurnMetrics, Turn: turn, Metrics: &m}
}

// demoEvents is the event stream of the demo conversation (as
// `voice-agent replay test/testdata/demo.wav` with the doubles prints it),
// cut at interesting points by the table below.
var demoEvents = []pipeline.Event{
	state(pipeline.StateListening),
	{Type: pipeline.EvSpeechStart},
	state(pipeline.StateUserSpeaking),
	{Type: pipeline.EvPartial, Text: "what"},
	{Type: pipeline.EvPartial, Text: "what is the weather"},
	{Type: pipeline.EvSpeechEnd},
	state(pipeline.StateListening),
	{Type: pipeline.EvFinal, Turn: 1, Text: "what is the weather like today"},
	{Type: pipeline.EvTurnCommit, Turn: 1, Text: "what is the weather like today"},
	state(pipeline.StateThinking),
	{Type: pipeline.EvLLMPiece, Turn: 1, Text: "It"},
	{Type: pipeline.EvLLMPiece, Turn: 1, Text: " is sunny"},
	{Type: pipeline.EvPlaybackStart, Turn: 1},
	state(pipeline.StateSpeaking), // 13 events
	{Type: pipeline.EvLLMPiece, Turn: 1, Text: " and warm today."},
	{Type: pipeline.EvLLMDone, Turn: 1, Text: "It is sunny and warm today."},
	{Type: pipeline.EvSpeechStart},
	{Type: pipeline.EvPartial, Text: "and"},
	metrics(1, pipeline.TurnMetrics{EndpointingMS: 700, ASRMS: 0, FirstTokenMS: 120, FirstAudioMS: 240, EndToEndMS: 1060, Interrupted: true,
		Path: &pipeline.PathMS{Endpointing: 700, FirstToken: 120, FirstAudio: 240}}),
	{Type: pipeline.EvBargeIn, Turn: 1, Text: "It is sunny"},
	state(pipeline.StateInterrupted), // 21 events
	state(pipeline.StateUserSpeaking),
	{Type: pipeline.EvPartial, Text: "and tomorrow"},
	{Type: pipeline.EvSpeechEnd},
	{Type: pipeline.EvTurnCommit, Turn: 2, Text: "and tomorrow"},
	{Type: pipeline.EvLLMPiece, Turn: 2, Text: "Rain."},
	{Type: pipeline.EvPlaybackStart, Turn: 2},
	{Type: pipeline.EvLLMDone, Turn: 2, Text: "Rain."},
	{Type: pipeline.EvPlaybackStop, Turn: 2},
	metrics(2, pipeline.TurnMetrics{EndpointingMS: 700, FirstTokenMS: 100, FirstAudioMS: 160, PlaybackStart: 1, EndToEndMS: 980,
		Path: &pipeline.PathMS{Endpointing: 700, FirstToken: 100, FirstAudio: 160, Playback: 20}}),
	state(pipeline.StateListening), // 31 events
}

func TestModelApply(t *testing.T) {
	tests := []struct {
		name           string
		events         int // how many of demoEvents
		status         Status
		transcript     string
		partial        string
		userVoice      bool
		assistantVoice bool
		lastTurn       []Stage
	}{
		{"partial transcript while the user speaks", 5, UserSpeaking, "", "what is the weather", true, false, nil},
		{"commit clears the partial", 9, Listening, "You: what is the weather like today\n", "", false, false, nil},
		{"reply streams as it is generated", 13, Thinking,
			"You: what is the weather like today\nAssistant: It is sunny …\n", "", false, true, nil},
		{"the done event replaces the streamed text", 16,
			Speaking, "You: what is the weather like today\nAssistant: It is sunny and warm today.\n", "", false, true, nil},
		{"barge-in cuts the reply to what was heard", 21, Interrupted,
			"You: what is the weather like today\nAssistant: It is sunny [interrupted]\n", "and", true, false,
			[]Stage{{"endpointing", 700}, {"ASR final", 0}, {"first token", 120}, {"first audio", 240}, {"playback", 0}}},
		{"whole conversation", len(demoEvents), Listening,
			"You: what is the weather like today\nAssistant: It is sunny [interrupted]\nYou: and tomorrow\nAssistant: Rain.\n", "", false, false,
			[]Stage{{"endpointing", 700}, {"ASR final", 0}, {"first token", 100}, {"first audio", 160}, {"playback", 20}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Model
			for _, e := range demoEvents[:tc.events] {
				m.Apply(e)
			}
			assert.Equal(t, tc.status, m.Status)
			assert.Equal(t, tc.transcript, m.Transcript())
			assert.Equal(t, tc.partial, m.Partial)
			assert.Equal(t, tc.userVoice, m.UserVoice, "user voice")
			assert.Equal(t, tc.assistantVoice, m.AssistantVoice, "assistant voice")
			assert.Equal(t, tc.lastTurn, m.LastTurn())
		})
	}
}

// A sound that pauses the reply silences the assistant's indicator until
// the reply resumes.
func TestModelPauseAndResume(t *testing.T) {
	var m Model
	for _, tc := range []struct {
		e     pipeline.Event
		voice bool
	}{
		{pipeline.Event{Type: pipeline.EvPlaybackStart, Turn: 1}, true},
		{pipeline.Event{Type: pipeline.EvBargeInPending, Turn: 1}, false},
		{pipeline.Event{Type: pipeline.EvBargeInResumed, Turn: 1}, true},
		{pipeline.Event{Type: pipeline.EvBargeInPending, Turn: 1}, false},
		{pipeline.Event{Type: pipeline.EvBargeIn, Turn: 1, Text: "Hi"}, false},
		{pipeline.Event{Type: pipeline.EvBargeInPending, Turn: 2}, false}, // before any audio
		{pipeline.Event{Type: pipeline.EvBargeInResumed, Turn: 2}, false},
	} {
		m.Apply(tc.e)
		assert.Equal(t, tc.voice, m.AssistantVoice, "after %s", tc.e.Type)
	}
}

func TestModelLateDoneKeepsInterruption(t *testing.T) {
	// The generator may finish after the barge-in; its full text must not
	// replace what the user heard.
	var m Model
	for _, e := range []pipeline.Event{
		{Type: pipeline.EvTurnCommit, Turn: 1, Text: "hi"},
		{Type: pipeline.EvLLMPiece, Turn: 1, Text: "Hello there"},
		{Type: pipeline.EvBargeIn, Turn: 1, Text: "Hello"},
		{Type: pipeline.EvLLMPiece, Turn: 1, Text: ", friend"},
		{Type: pipeline.EvLLMDone, Turn: 1, Text: "Hello there, friend"},
	} {
		m.Apply(e)
	}
	assert.Equal(t, "You: hi\nAssistant: Hello [interrupted]\n", m.Transcript())
}

// A turn the user went on from (turn_continued) is one sentence on screen,
// English or Chinese, and its dropped reply is not shown, late pieces
// included.
func TestModelContinuedTurn(t *testing.T) {
	for _, tc := range []struct {
		first, rest, whole string
	}{
		{"can you tell me", "about the weather", "can you tell me about the weather"},
		{"请告诉我", "明天的天气", "请告诉我明天的天气"},
	} {
		var m Model
		for _, e := range []pipeline.Event{
			{Type: pipeline.EvTurnCommit, Turn: 1, Text: tc.first},
			{Type: pipeline.EvLLMPiece, Turn: 1, Text: "Let"},
			{Type: pipeline.EvPlaybackStart, Turn: 1},
			{Type: pipeline.EvBargeInPending, Turn: 1},
			{Type: pipeline.EvTurnContinued, Turn: 1, Text: tc.first},
			{Type: pipeline.EvLLMPiece, Turn: 1, Text: " me"},
			{Type: pipeline.EvLLMDone, Turn: 1, Text: "Let me"},
			{Type: pipeline.EvTurnCommit, Turn: 2, Text: tc.rest},
			{Type: pipeline.EvLLMPiece, Turn: 2, Text: "Sure."},
		} {
			m.Apply(e)
		}
		assert.Equal(t, "You: "+tc.whole+"\nAssistant: Sure. …\n", m.Transcript(), "the reply still streaming")
		assert.False(t, m.AssistantVoice)
	}
}

func TestModelSummary(t *testing.T) {
	asked := func(n int) []Entry {
		var out []Entry
		for i := range n {
			out = append(out, Entry{Role: User, Turn: i + 1}, Entry{Role: Assistant, Turn: i + 1})
		}
		return out
	}
	played := func(ms float64) pipeline.TurnMetrics { return pipeline.TurnMetrics{PlaybackStart: 1, EndToEndMS: ms} }
	tests := []struct {
		name    string
		entries []Entry
		turns   []pipeline.TurnMetrics
		want    string
	}{
		{"none", nil, nil, "0 turns, no replies played yet"},
		// The first reply plays: its figures are not in yet, the turn is.
		{"first reply playing", asked(1), nil, "1 turn"},
		{"interrupted before playback", asked(1), []pipeline.TurnMetrics{{Interrupted: true}}, "1 turn, no replies played yet"},
		{"one turn played", asked(1), []pipeline.TurnMetrics{played(900)}, "1 turn (0 interrupted)  end-to-end p50 900 ms  p95 900 ms"},
		{"second reply playing", asked(2), []pipeline.TurnMetrics{played(900)}, "2 turns (0 interrupted)  end-to-end p50 900 ms  p95 900 ms"},
		{"p50 and p95", asked(3), []pipeline.TurnMetrics{
			played(900), played(1000), {PlaybackStart: 1, EndToEndMS: 2000, Interrupted: true},
		}, "3 turns (1 interrupted)  end-to-end p50 1000 ms  p95 2000 ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Model{Entries: tc.entries, Turns: tc.turns}
			assert.Equal(t, tc.want, m.SummaryText())
		})
	}
}

func TestModelLifecycle(t *testing.T) {
	var m Model
	m.Apply(pipeline.Event{Type: pipeline.EvTurnCommit, Turn: 1, Text: "hi"})
	m.Apply(pipeline.Event{Type: pipeline.EvLLMPiece, Turn: 1, Text: "Hel"})
	m.Apply(pipeline.Event{Type: pipeline.EvError, Err: "llm: out of memory"})
	assert.Equal(t, "llm: out of memory", m.Err)

	m.Stopped(errors.New("device unplugged"))
	assert.Equal(t, Idle, m.Status)
	assert.Equal(t, "device unplugged", m.Err)
	assert.Equal(t, "You: hi\nAssistant: Hel\n", m.Transcript(), "a stopped session streams no more")

	m.Started()
	assert.Equal(t, Listening, m.Status)
	assert.Empty(t, m.Err)
	assert.Len(t, m.Entries, 2, "the conversation outlives a restart")

	m.Clear()
	assert.Empty(t, m.Transcript())
	assert.Empty(t, m.Turns)
}
