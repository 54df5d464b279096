package app

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/pipeline/event"
)

func state(s event.State) event.Event {
	return event.Event{Type: event.EvState, State: s}
}

func metrics(turn int, m event.TurnMetrics) event.Event {
	return event.Event{Type: event.EvTurnMetrics, Turn: turn, Metrics: &m}
}

func replyState(turn int, s event.ReplyState, text string) event.Event {
	return event.Event{Type: event.EvReplyState, Turn: turn, Reply: s, Text: text}
}

// demoEvents is the event stream of the demo conversation (as
// `voice-agent replay test/testdata/demo.wav` with the stand-ins prints
// it), cut at interesting points by the table below and TestUIScriptedConversation.
var demoEvents = []event.Event{
	state(event.StateListening),
	{Type: event.EvSpeechStart},
	state(event.StateUserSpeaking),
	{Type: event.EvPartial, Text: "what"},
	{Type: event.EvPartial, Text: "what is the weather"}, // 5: the user speaks
	{Type: event.EvSpeechEnd},
	state(event.StateListening),
	{Type: event.EvFinal, Turn: 1, Text: "what is the weather like today"},
	{Type: event.EvTurnCommit, Turn: 1, Text: "what is the weather like today"},
	replyState(1, event.ReplyCurrent, ""),
	state(event.StateThinking),
	{Type: event.EvLLMPiece, Turn: 1, Text: "It"},
	{Type: event.EvLLMPiece, Turn: 1, Text: " is sunny"},
	{Type: event.EvPlaybackStart, Turn: 1}, // 14: the reply streams and plays
	state(event.StateSpeaking),
	{Type: event.EvLLMPiece, Turn: 1, Text: " and warm today."},
	{Type: event.EvLLMDone, Turn: 1, Text: "It is sunny and warm today."},
	{Type: event.EvSpeechStart},
	{Type: event.EvPartial, Text: "and"},
	metrics(1, event.TurnMetrics{EndpointingMS: 700, ASRMS: 0, FirstTokenMS: 120, FirstAudioMS: 240, EndToEndMS: 1060, Interrupted: true,
		Path: &event.PathMS{Endpointing: 700, FirstToken: 120, FirstAudio: 240}}),
	replyState(1, event.ReplyCancelled, "It is sunny"),
	{Type: event.EvBargeIn, Turn: 1, Text: "It is sunny"},
	state(event.StateInterrupted), // 23: the user interrupted
	state(event.StateUserSpeaking),
	{Type: event.EvPartial, Text: "and tomorrow"},
	{Type: event.EvSpeechEnd},
	{Type: event.EvTurnCommit, Turn: 2, Text: "and tomorrow"},
	replyState(2, event.ReplyCurrent, ""),
	{Type: event.EvLLMPiece, Turn: 2, Text: "Rain."},
	{Type: event.EvPlaybackStart, Turn: 2},
	{Type: event.EvLLMDone, Turn: 2, Text: "Rain."},
	{Type: event.EvPlaybackStop, Turn: 2},
	replyState(2, event.ReplyDone, ""),
	metrics(2, event.TurnMetrics{EndpointingMS: 700, FirstTokenMS: 100, FirstAudioMS: 160, PlaybackStart: 1, EndToEndMS: 980,
		Path: &event.PathMS{Endpointing: 700, FirstToken: 100, FirstAudio: 160, Playback: 20}}),
	state(event.StateListening),
}

// The cut points of demoEvents.
const (
	demoUserSpeaks  = 5
	demoReplyPlays  = 14
	demoInterrupted = 23
)

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
		{"partial transcript while the user speaks", demoUserSpeaks, UserSpeaking, "", "what is the weather", true, false, nil},
		{"commit clears the partial", 9, Listening, "You: what is the weather like today\n", "", false, false, nil},
		{"reply streams as it is generated", demoReplyPlays, Thinking,
			"You: what is the weather like today\nAssistant: It is sunny …\n", "", false, true, nil},
		{"the done event replaces the streamed text", demoReplyPlays + 3,
			Speaking, "You: what is the weather like today\nAssistant: It is sunny and warm today.\n", "", false, true, nil},
		{"a cancelled reply is cut to what was heard", demoInterrupted, Interrupted,
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
			assert.Equal(t, tc.assistantVoice, m.AssistantVoice(), "assistant voice")
			assert.Equal(t, tc.lastTurn, m.LastTurn())
		})
	}
}

// The assistant's indicator is on while a reply plays and the user's
// voice has not paused it; the end of another turn's reply (a speculation
// dropped while the user talks over one that plays on) leaves it on.
func TestModelAssistantVoice(t *testing.T) {
	var m Model
	for _, tc := range []struct {
		e     event.Event
		voice bool
	}{
		{event.Event{Type: event.EvPlaybackStart, Turn: 1}, true},
		{event.Event{Type: event.EvBargeInPending, Turn: 1}, false},
		{event.Event{Type: event.EvBargeInResumed, Turn: 1}, true},
		{replyState(2, event.ReplySpeculative, ""), true},
		{replyState(2, event.ReplyDropped, ""), true},
		{event.Event{Type: event.EvBargeInPending, Turn: 1}, false},
		{replyState(1, event.ReplyCancelled, "Hi"), false},
		{event.Event{Type: event.EvBargeIn, Turn: 1, Text: "Hi"}, false},
		{event.Event{Type: event.EvBargeInPending, Turn: 2}, false}, // before any audio
		{event.Event{Type: event.EvBargeInResumed, Turn: 2}, false},
		{event.Event{Type: event.EvPlaybackStart, Turn: 2}, true},
		{event.Event{Type: event.EvPlaybackStop, Turn: 2}, false},
		{replyState(2, event.ReplyDone, ""), false},
		// Paused, then dropped for a continuation: silent, and the next
		// reply to the same turn sounds again.
		{event.Event{Type: event.EvPlaybackStart, Turn: 3}, true},
		{event.Event{Type: event.EvBargeInPending, Turn: 3}, false},
		{replyState(3, event.ReplyDropped, ""), false},
		{event.Event{Type: event.EvPlaybackStart, Turn: 3}, true},
	} {
		m.Apply(tc.e)
		assert.Equal(t, tc.voice, m.AssistantVoice(), "after %s %s of turn %d", tc.e.Type, tc.e.Reply, tc.e.Turn)
	}
	m.Stopped(nil)
	assert.False(t, m.AssistantVoice(), "a stopped session is silent")
}

// conversation is a language's words for the streams below.
type conversation struct {
	lang                 string
	first, whole         string // a turn the user went on with, and its sentence
	dropped, reply, rest string // a reply dropped after its first piece; the next one; the rest of the reply generated
}

var conversations = []conversation{
	{"English", "can you tell me", "can you tell me about the weather", "Let me", "Sure.", " It is sunny."},
	{"Chinese", "请告诉我", "请告诉我明天的天气", "让我想想", "好的。", "明天是晴天。"},
}

// continued is the stream of a turn the user went on with, as the
// pipeline publishes it: the reply shown so far is dropped, the turn is
// committed again under its number with the whole sentence, and its
// new reply plays out.
func (c conversation) continued() []event.Event {
	return []event.Event{
		{Type: event.EvTurnCommit, Turn: 1, Text: c.first},
		replyState(1, event.ReplyCurrent, ""),
		{Type: event.EvLLMPiece, Turn: 1, Text: c.dropped},
		{Type: event.EvPlaybackStart, Turn: 1},
		{Type: event.EvBargeInPending, Turn: 1},
		{Type: event.EvTurnContinued, Turn: 1, Text: c.first},
		replyState(1, event.ReplyDropped, "continued"),
		{Type: event.EvTurnCommit, Turn: 1, Text: c.whole},
		replyState(1, event.ReplyCurrent, ""),
		{Type: event.EvLLMPiece, Turn: 1, Text: c.reply},
		{Type: event.EvPlaybackStart, Turn: 1},
		{Type: event.EvLLMDone, Turn: 1, Text: c.reply},
		{Type: event.EvPlaybackStop, Turn: 1},
		replyState(1, event.ReplyDone, ""),
		metrics(1, event.TurnMetrics{PlaybackStart: 1, EndToEndMS: 900}),
	}
}

// A turn the user went on with is one entry with the whole sentence,
// answered by the second reply only, and counts as one turn, not as a
// barge-in.
func TestModelContinuedTurn(t *testing.T) {
	for _, c := range conversations {
		t.Run(c.lang, func(t *testing.T) {
			var m Model
			for _, e := range c.continued() {
				m.Apply(e)
			}
			assert.Equal(t, "You: "+c.whole+"\nAssistant: "+c.reply+"\n", m.Transcript())
			assert.Equal(t, 0, m.Summary().Interrupted)
			assert.Equal(t, "1 turn (0 interrupted)  end-to-end p50 900 ms  p95 900 ms", m.SummaryText())
		})
	}
}

// Nothing of a dropped reply is shown from its drop on, though its first
// piece was; a speculative reply dropped unseen leaves no entry.
func TestModelDroppedReplyNeverShown(t *testing.T) {
	for _, c := range conversations {
		speculated := []event.Event{
			{Type: event.EvTurnCommit, Turn: 1, Text: c.whole},
			replyState(2, event.ReplySpeculative, ""),
			replyState(2, event.ReplyDropped, "transcript changed"),
			{Type: event.EvTurnCommit, Turn: 2, Text: c.first},
		}
		for name, events := range map[string][]event.Event{"continued": c.continued(), "speculated": speculated} {
			t.Run(c.lang+" "+name, func(t *testing.T) {
				var m Model
				dropped := false
				for _, e := range events {
					m.Apply(e)
					dropped = dropped || e.Reply == event.ReplyDropped
					if dropped {
						assert.NotContains(t, m.Transcript(), c.dropped, "after %s %s", e.Type, e.Reply)
						assert.NotContains(t, m.Transcript(), "Assistant: \n", "an empty entry after %s %s", e.Type, e.Reply)
					}
				}
			})
		}
	}
}

// A cancelled reply keeps what the user heard: the whole text generated,
// which comes after, does not replace it.
func TestModelCancelledKeepsWhatWasHeard(t *testing.T) {
	for _, c := range conversations {
		t.Run(c.lang, func(t *testing.T) {
			var m Model
			for _, e := range []event.Event{
				{Type: event.EvTurnCommit, Turn: 1, Text: c.whole},
				replyState(1, event.ReplyCurrent, ""),
				{Type: event.EvLLMPiece, Turn: 1, Text: c.reply},
				{Type: event.EvPlaybackStart, Turn: 1},
				{Type: event.EvLLMPiece, Turn: 1, Text: c.rest},
				replyState(1, event.ReplyCancelled, c.reply),
				{Type: event.EvBargeIn, Turn: 1, Text: c.reply},
				{Type: event.EvLLMDone, Turn: 1, Text: c.reply + c.rest},
				metrics(1, event.TurnMetrics{PlaybackStart: 1, EndToEndMS: 900, Interrupted: true}),
			} {
				m.Apply(e)
			}
			assert.Equal(t, "You: "+c.whole+"\nAssistant: "+c.reply+" [interrupted]\n", m.Transcript())
			assert.Equal(t, "1 turn (1 interrupted)  end-to-end p50 900 ms  p95 900 ms", m.SummaryText())
		})
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
	played := func(ms float64) event.TurnMetrics { return event.TurnMetrics{PlaybackStart: 1, EndToEndMS: ms} }
	tests := []struct {
		name    string
		entries []Entry
		turns   []event.TurnMetrics
		want    string
	}{
		{"none", nil, nil, "0 turns, no replies played yet"},
		// The first reply plays: its figures are not in yet, the turn is.
		{"first reply playing", asked(1), nil, "1 turn"},
		{"interrupted before playback", asked(1), []event.TurnMetrics{{Interrupted: true}}, "1 turn, no replies played yet"},
		{"one turn played", asked(1), []event.TurnMetrics{played(900)}, "1 turn (0 interrupted)  end-to-end p50 900 ms  p95 900 ms"},
		{"second reply playing", asked(2), []event.TurnMetrics{played(900)}, "2 turns (0 interrupted)  end-to-end p50 900 ms  p95 900 ms"},
		{"p50 and p95", asked(3), []event.TurnMetrics{
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
	m.Apply(event.Event{Type: event.EvTurnCommit, Turn: 1, Text: "hi"})
	m.Apply(event.Event{Type: event.EvLLMPiece, Turn: 1, Text: "Hel"})
	m.Apply(event.Event{Type: event.EvError, Err: "llm: out of memory"})
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

// A tool the reply called is a small line of its own between the user's
// turn and the answer, in either language; a dropped reply takes its
// tool lines with it.
func TestModelToolLine(t *testing.T) {
	for _, tc := range []struct {
		lang, ask, result, answer string
	}{
		{"English", "what time is it", `{"time":"14:05"}`, "It is 14:05."},
		{"Chinese", "现在几点了", `{"time":"14:05"}`, "现在是十四点零五分。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			var m Model
			for _, e := range []event.Event{
				{Type: event.EvTurnCommit, Turn: 1, Text: tc.ask},
				replyState(1, event.ReplyCurrent, ""),
				{Type: event.EvToolCall, Turn: 1, Tool: &event.ToolUse{Name: "get_time", Arguments: []byte("{}")}},
				{Type: event.EvToolResult, Turn: 1, Tool: &event.ToolUse{Name: "get_time", Result: tc.result, MS: 2}},
				{Type: event.EvLLMPiece, Turn: 1, Text: tc.answer},
				{Type: event.EvLLMDone, Turn: 1, Text: tc.answer},
				{Type: event.EvTurnCommit, Turn: 2, Text: tc.ask},
				replyState(2, event.ReplyCurrent, ""),
				{Type: event.EvToolCall, Turn: 2, Tool: &event.ToolUse{Name: "take_photo"}},
				{Type: event.EvToolError, Turn: 2, Tool: &event.ToolUse{Name: "take_photo"}, Err: "camera busy"},
			} {
				m.Apply(e)
			}
			assert.Equal(t, "You: "+tc.ask+"\nTool: get_time → "+tc.result+"\nAssistant: "+tc.answer+
				"\nYou: "+tc.ask+"\nTool: take_photo ✗ camera busy\n", m.Transcript())
			assert.Equal(t, Tool, m.Entries[1].Role)

			m.Apply(replyState(2, event.ReplyDropped, "turn_continued"))
			assert.NotContains(t, m.Transcript(), "take_photo")
			assert.Contains(t, m.Transcript(), "get_time", "the other turn's line stays")
		})
	}
}
