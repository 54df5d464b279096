package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/pipeline/event"
)

// Status is what the window's state indicator shows: the pipeline's state
// while a session runs, Idle (the zero value) otherwise.
type Status string

const (
	Idle         Status = ""
	Listening    Status = "listening"
	UserSpeaking Status = "user speaking"
	Thinking     Status = "thinking"
	Speaking     Status = "speaking"
	Interrupted  Status = "interrupted"
)

func (s Status) String() string {
	if s == Idle {
		return "idle"
	}
	return string(s)
}

var statusOf = map[event.State]Status{
	event.StateListening:    Listening,
	event.StateUserSpeaking: UserSpeaking,
	event.StateThinking:     Thinking,
	event.StateSpeaking:     Speaking,
	event.StateInterrupted:  Interrupted,
}

// Role says who spoke an entry of the conversation.
type Role string

const (
	User      Role = "user"
	Assistant Role = "assistant"
	// Tool is a small line for a tool the reply called: its name and
	// result, or why it failed.
	Tool Role = "tool"
)

// Entry is one turn of the conversation as shown.
type Entry struct {
	Role Role
	Turn int
	// At is when the entry began, in the session's audio time: the user's
	// turn when it was committed, the reply at its first words.
	At   time.Duration
	Text string
	// Streaming is set while the reply is being generated.
	Streaming bool
	// Interrupted replies were cut (by the user or the session's end);
	// Text is what was heard.
	Interrupted bool
}

// Stage is one bar of the latency panel.
type Stage struct {
	Name string
	MS   float64
}

// Model is the window's state, fed by pipeline events and the controller,
// and free of any GUI so it can be tested alone. It is not safe for
// concurrent use: the app touches it on the UI thread only.
//
// Apply folds the event stream into it and keeps no life of a reply of its
// own: the pipeline says each reply's moves (reply_state), and the model
// shows what they say.
type Model struct {
	Status  Status
	Entries []Entry
	// Partial is the live transcript of the user's current speech.
	Partial string
	// Level is the capture level in [0, 1] (see levelOf).
	Level float64
	// UserVoice is set while the VAD hears speech.
	UserVoice bool
	// Turns are the latency figures of finished turns, in order.
	Turns []event.TurnMetrics
	// Err is the last error that ended or troubled the session; Notice a
	// warning that did not stop it.
	Err, Notice string
	// Models is the models panel: each stage's model, present or not.
	Models []ModelRow
	// Download is the progress of a model download, nil when none runs;
	// DownloadErr why the last one failed.
	Download    *DownloadProgress
	DownloadErr string
	// StartBlocked is set when a session could not start for want of
	// models: a download then starts it once they are in.
	StartBlocked bool

	// sounding is the turn whose reply plays (playback_start until
	// playback_stop or the reply's end), paused the turn whose reply the
	// user's voice paused (barge_in_pending until barge_in_resumed or the
	// reply's end); 0 for none. They are kept by turn because another
	// turn's reply can end meanwhile (a speculation dropped while the user
	// talks over a reply that plays on).
	sounding, paused int
}

// DownloadProgress is the state of a running download.
type DownloadProgress struct {
	Label    string
	Fraction float64
}

// AssistantVoice is whether a reply is heard: playing and not paused for
// the user.
func (m *Model) AssistantVoice() bool { return m.sounding != 0 && m.sounding != m.paused }

// Apply updates the model with one pipeline event.
func (m *Model) Apply(e event.Event) {
	switch e.Type {
	case event.EvState:
		if s, ok := statusOf[e.State]; ok {
			m.Status = s
		}
	case event.EvSpeechStart:
		m.UserVoice = true
	case event.EvSpeechEnd:
		m.UserVoice = false
	case event.EvPartial:
		m.Partial = e.Text
	case event.EvTurnCommit:
		m.commit(e)
		m.Partial = ""
	case event.EvLLMPiece:
		m.reply(e.Turn, e.At).Text += e.Text
	case event.EvLLMDone:
		// A cancelled reply keeps what was heard, not what was generated.
		if r := m.existingReply(e.Turn); r != nil && !r.Interrupted {
			r.Text, r.Streaming = e.Text, false
		}
	case event.EvReplyState:
		m.replyMoved(e)
	case event.EvToolResult, event.EvToolError:
		m.toolUsed(e)
	case event.EvPlaybackStart:
		m.sounding = e.Turn
	case event.EvPlaybackStop:
		m.replyQuiet(e.Turn)
	case event.EvBargeInPending:
		m.paused = e.Turn
	case event.EvBargeInResumed:
		m.paused = 0
	case event.EvTurnMetrics:
		if e.Metrics != nil {
			m.Turns = append(m.Turns, *e.Metrics)
		}
	case event.EvError:
		m.Err = oneLine(e.Err)
	}
}

// commit shows a committed user turn: a new entry, or, for a turn the user
// went on with (committed again under its number), the whole sentence.
func (m *Model) commit(e event.Event) {
	for i := len(m.Entries) - 1; i >= 0; i-- {
		if u := &m.Entries[i]; u.Role == User && u.Turn == e.Turn {
			u.Text = e.Text
			return
		}
	}
	m.Entries = append(m.Entries, Entry{Role: User, Turn: e.Turn, At: e.At, Text: e.Text})
}

// replyMoved shows a reply's move: a dropped one goes, whatever was shown
// of it; a cancelled one is cut to what was heard.
func (m *Model) replyMoved(e event.Event) {
	switch e.Reply {
	case event.ReplySpeculative, event.ReplyCurrent:
		return // its pieces show it
	case event.ReplyDropped:
		// Whatever of the reply was shown goes, tool lines included.
		m.Entries = slices.DeleteFunc(m.Entries, func(x Entry) bool { return x.Role != User && x.Turn == e.Turn })
	case event.ReplyCancelled:
		r := m.reply(e.Turn, e.At)
		r.Text, r.Streaming, r.Interrupted = e.Text, false, true
	}
	// Any other move ends the reply.
	m.replyQuiet(e.Turn)
}

// replyQuiet notes that turn's reply is heard no more.
func (m *Model) replyQuiet(turn int) {
	if m.sounding == turn {
		m.sounding = 0
	}
	if m.paused == turn {
		m.paused = 0
	}
}

// toolUsed shows a tool the reply called as a line of its own: the
// tool's name, and its result or why it failed.
func (m *Model) toolUsed(e event.Event) {
	if e.Tool == nil {
		return // the loop's limit: the apology that follows says it
	}
	text := e.Tool.Name + " → " + oneLine(e.Tool.Result)
	if e.Type == event.EvToolError {
		text = e.Tool.Name + " ✗ " + oneLine(e.Err)
	}
	m.Entries = append(m.Entries, Entry{Role: Tool, Turn: e.Turn, At: e.At, Text: text})
}

// reply returns the assistant entry of turn, creating it (streaming, as
// of at) if it does not exist yet.
func (m *Model) reply(turn int, at time.Duration) *Entry {
	if e := m.existingReply(turn); e != nil {
		return e
	}
	m.Entries = append(m.Entries, Entry{Role: Assistant, Turn: turn, At: at, Streaming: true})
	return &m.Entries[len(m.Entries)-1]
}

// existingReply returns the assistant entry of turn, nil if there is none.
func (m *Model) existingReply(turn int) *Entry {
	if i := m.replyIndex(turn); i >= 0 {
		return &m.Entries[i]
	}
	return nil
}

// replyIndex is the index of the assistant entry of turn, -1 if none.
func (m *Model) replyIndex(turn int) int {
	for i := len(m.Entries) - 1; i >= 0; i-- {
		if e := &m.Entries[i]; e.Role == Assistant && e.Turn == turn {
			return i
		}
	}
	return -1
}

// Started resets what belongs to one session when a new one starts.
func (m *Model) Started() {
	m.Status, m.Err, m.Notice, m.StartBlocked = Listening, "", "", false
}

// Stopped marks the session as over; err is why, if it failed.
func (m *Model) Stopped(err error) {
	m.Status, m.Partial, m.Level = Idle, "", 0
	m.UserVoice, m.sounding, m.paused = false, 0, 0
	for i := range m.Entries {
		m.Entries[i].Streaming = false
	}
	if err != nil {
		m.Err = shortError(err)
		if errors.Is(err, device.ErrOpen) {
			m.Err += "; Settings lists the devices that can be opened"
		}
	}
}

// Clear forgets the conversation and its latency figures.
func (m *Model) Clear() {
	m.Entries, m.Turns, m.Partial = nil, nil, ""
}

// StageNames are the latency panel's stages, in LastTurn's order.
var StageNames = []string{"endpointing", "ASR final", "first token", "first audio", "playback"}

// LastTurn is the latency panel's bar: the voice to voice of the last turn
// whose reply played, part by part as it fell after the speech ended
// (event.PathMS), so the parts add up to it. A reply speculated at the
// user's pause has its first token and audio ready during the endpointing
// wait: those parts are then short, or nothing.
func (m *Model) LastTurn() []Stage {
	t := m.lastPlayed()
	if t == nil {
		return nil
	}
	parts := t.Path.Parts()
	stages := make([]Stage, len(StageNames))
	for i, name := range StageNames {
		stages[i] = Stage{name, parts[i].MS}
	}
	return stages
}

// LastTurnText is the line under the bar: the parts, their sum, and
// whether the reply was speculated.
func (m *Model) LastTurnText() string {
	t := m.lastPlayed()
	switch {
	case t == nil && m.userTurns() > 0:
		return "Last turn: figures once its reply has played"
	case t == nil:
		return "Last turn: none yet"
	}
	var parts []string
	for _, s := range m.LastTurn() {
		parts = append(parts, fmt.Sprintf("%s %.0f", s.Name, s.MS))
	}
	text := fmt.Sprintf("Last turn: %.0f ms = %s", t.EndToEndMS, strings.Join(parts, " + "))
	if t.Speculated {
		text += " (speculated: its first words were ready by the end of the turn)"
	}
	return text
}

// lastPlayed is the last turn whose reply played, or nil.
func (m *Model) lastPlayed() *event.TurnMetrics {
	for i := len(m.Turns) - 1; i >= 0; i-- {
		if m.Turns[i].Path != nil {
			return &m.Turns[i]
		}
	}
	return nil
}

// Summary is the session's latency distribution.
func (m *Model) Summary() event.Summary { return event.Summarize(m.Turns) }

// SummaryText is the p50/p95 line of the latency panel. A turn is
// counted from the user's words in the conversation, so the first is one
// while its reply plays (its figures come when the reply is over).
func (m *Model) SummaryText() string {
	s := m.Summary()
	n := max(s.Turns, m.userTurns())
	turns := fmt.Sprintf("%d turns", n)
	if n == 1 {
		turns = "1 turn"
	}
	switch {
	case len(s.P50) > 0:
		return fmt.Sprintf("%s (%d interrupted)  end-to-end p50 %.0f ms  p95 %.0f ms",
			turns, s.Interrupted, s.P50["end_to_end"], s.P95["end_to_end"])
	case n > s.Turns:
		return turns // the first reply plays: the last turn's line says when figures come
	}
	return turns + ", no replies played yet"
}

// userTurns is how many turns the user has taken in the conversation.
func (m *Model) userTurns() int {
	n := 0
	for _, e := range m.Entries {
		if e.Role == User {
			n++
		}
	}
	return n
}

// Transcript is the conversation as text, one entry a line, the way the
// window shows it; tests and --dump compare it.
func (m *Model) Transcript() string {
	var b strings.Builder
	for _, e := range m.Entries {
		b.WriteString(e.Line())
		b.WriteByte('\n')
	}
	return b.String()
}

// Header is the line above an entry in the conversation: who, when in the
// session, and whether the reply was cut.
func (e Entry) Header() string {
	who := e.who()
	s := int(e.At / time.Second)
	h := fmt.Sprintf("%s · %d:%02d", who, s/60, s%60)
	switch {
	case e.Interrupted:
		h += " · interrupted"
	case e.Streaming:
		h += " · …"
	}
	return h
}

// Line is an entry as one line of text (Transcript, Dump).
func (e Entry) Line() string {
	who := e.who()
	line := who + ": " + e.Text
	switch {
	case e.Interrupted:
		line += " [interrupted]"
	case e.Streaming:
		line += " …"
	}
	return line
}

// who names who an entry is from.
func (e Entry) who() string {
	switch e.Role {
	case Assistant:
		return "Assistant"
	case Tool:
		return "Tool"
	}
	return "You"
}
