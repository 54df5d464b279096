// Package event is the vocabulary a session speaks in: the events it
// publishes, the states a user sees, and a turn's metrics and compute.
// It sits below the pipeline and the reply, which both publish in it.
package event

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/voiceassistant/voice/llm"
)

// State is what the assistant is doing, as a user would describe it.
type State string

const (
	StateListening    State = "listening"
	StateUserSpeaking State = "user_speaking"
	StateThinking     State = "thinking"
	StateSpeaking     State = "speaking"
	StateInterrupted  State = "interrupted"
)

// ReplyState is where a reply is in its life (package reply's table,
// docs/ARCHITECTURE.md): published as reply_state on every move, so a
// front end shows a reply by folding these events and keeps no lifecycle
// of its own.
type ReplyState string

const (
	// ReplySpeculative answers a turn not yet committed: nothing of it is
	// shown until it becomes current, and it may be dropped unseen.
	ReplySpeculative ReplyState = "speculative"
	// ReplyCurrent is the response to the turn Turn: its pieces, chunks
	// and playback follow.
	ReplyCurrent ReplyState = "current"
	// ReplyDropped was withdrawn unheard (a speculation miss, or a turn the
	// user went on with): whatever was shown of it goes, and nothing more
	// of it is published.
	ReplyDropped ReplyState = "dropped"
	// ReplyCancelled was cut by the user or the session's end; Text is what
	// the user heard of it.
	ReplyCancelled ReplyState = "cancelled"
	// ReplyDone has played out.
	ReplyDone ReplyState = "done"
)

// EventType names an event in the stream.
type EventType string

const (
	EvState         EventType = "state"
	EvSpeechStart   EventType = "speech_start"
	EvSpeechEnd     EventType = "speech_end"
	EvPartial       EventType = "partial"
	EvFinal         EventType = "final"
	EvTurnCommit    EventType = "turn_commit"
	EvLLMPiece      EventType = "llm_piece"
	EvLLMDone       EventType = "llm_done"
	EvTTSChunk      EventType = "tts_chunk"
	EvPlaybackStart EventType = "playback_start"
	EvPlaybackStop  EventType = "playback_stop"
	// EvBargeInPending: the user's voice started during a reply, which
	// is paused (or ducked) while the pipeline decides.
	EvBargeInPending EventType = "barge_in_pending"
	// EvBargeIn: a confirmed interruption; the reply is cancelled and Text
	// is what the user heard of it. Reason is ReasonStopKey when the
	// user's stop key did it (pipeline.Config.Interrupt), empty for speech.
	EvBargeIn EventType = "barge_in"
	// EvBargeInResumed: the sound was not an interruption; the reply plays
	// on from where it paused.
	EvBargeInResumed EventType = "barge_in_resumed"
	// EvSpeechIgnored: a sound over a reply that ended without words that
	// make it a turn (barge-in off, or a reply that ended meanwhile).
	EvSpeechIgnored EventType = "speech_ignored"
	// EvTurnContinued: the user went on right after turn Turn was
	// committed (Text), before its reply had been heard for long: the
	// reply is dropped (reply_state) and the speech continues that turn,
	// which is committed again, as the same Turn, with the whole sentence
	// (pipeline.Config.Continue).
	EvTurnContinued EventType = "turn_continued"
	// EvSpeculationStart: a reply to Text (the transcript so far) started
	// at the user's pause, before the turn is committed; its events are
	// held back until then.
	EvSpeculationStart EventType = "speculation_start"
	// EvSpeculationHit: the turn was committed with the transcript the
	// speculative reply answers, which goes on as the turn's response.
	EvSpeculationHit EventType = "speculation_hit"
	// EvSpeculationMiss: the user went on or the transcript changed
	// (Reason); the speculative reply was cancelled unheard and unshown.
	EvSpeculationMiss EventType = "speculation_miss"
	// EvReplyState: the reply to turn Turn moved to state Reply (Reason:
	// why a reply was dropped or cancelled).
	EvReplyState EventType = "reply_state"
	// EvToolCall: the reply to turn Turn calls a tool (Tool: its name and
	// arguments), once its turn is committed; a speculated reply's call
	// waits for that, and a dropped one's never runs.
	EvToolCall EventType = "tool_call"
	// EvToolResult: the tool answered (Tool.Result, Tool.MS); the model
	// is given the result and speaks the answer.
	EvToolResult EventType = "tool_result"
	// EvToolError: the call could not be read, named no tool, or the tool
	// failed (Err); the reply apologizes instead.
	EvToolError   EventType = "tool_error"
	EvTurnMetrics EventType = "turn_metrics"
	EvError       EventType = "error"
)

// ReasonStopKey is a barge-in's reason when the stop key did it.
const ReasonStopKey = "stop_key"

// Event is one entry of the session's event stream, consumed by the GUI,
// the CLI's --json output, the replay harness and tests. Which fields are
// set depends on Type.
type Event struct {
	Type EventType `json:"type"`
	// At is the audio time the event happened, and events come in At
	// order: an event known only later (a speech boundary the VAD
	// confirms after its minimum speech or silence, a speculated reply's
	// pieces held until the commit) is stamped when it is published, and
	// says when it happened in its own fields (Pos, the turn's metrics).
	At time.Duration `json:"-"`
	// Turn numbers user turns from 1; a response belongs to its turn.
	Turn  int   `json:"turn,omitempty"`
	State State `json:"state,omitempty"`
	// Reply is a reply's state (reply_state).
	Reply ReplyState `json:"reply,omitempty"`
	Text  string     `json:"text,omitempty"`
	// Pos is a stream position in 16 kHz samples (speech boundaries).
	Pos     int64        `json:"pos,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Stats   *llm.Stats   `json:"llm_stats,omitempty"`
	Metrics *TurnMetrics `json:"metrics,omitempty"`
	Err     string       `json:"error,omitempty"`
	Tool    *ToolUse     `json:"tool,omitempty"`
}

// ToolUse is a tool call in the event stream.
type ToolUse struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result,omitempty"`
	// MS is how long the tool ran, in audio time (tool_result, tool_error).
	MS float64 `json:"ms,omitempty"`
}

// MarshalJSON adds the audio time in milliseconds.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		AtMS float64 `json:"at_ms"`
		plain
	}{ms(e.At), plain(e)})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Queue is an unbounded FIFO between the pipeline and whoever reads
// events, so a slow consumer (a GUI repaint, a pipe) never stalls audio
// processing and no event is dropped.
type Queue struct {
	mu     sync.Mutex
	queue  []Event
	last   time.Duration // the latest At published
	wake   chan struct{}
	closed bool
	out    chan Event
}

// Out is the stream, closed once Close was called and the queue is
// delivered.
func (q *Queue) Out() <-chan Event { return q.out }

// NewQueue starts the queue's forwarder.
func NewQueue() *Queue {
	q := &Queue{wake: make(chan struct{}, 1), out: make(chan Event, 64)}
	go q.forward()
	return q
}

// Emit publishes e, stamped no earlier than the events before it: a
// response's goroutines stamp their events when they happen and publish
// them a moment later, and with compute on the clock another goroutine's
// event can be published in between. The stream stays in time order, as
// Event.At promises; the turn's metrics keep the exact times.
func (q *Queue) Emit(e Event) {
	q.mu.Lock()
	if !q.closed {
		e.At = max(e.At, q.last)
		q.last = e.At
		q.queue = append(q.queue, e)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Close ends the stream once queued events are delivered.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *Queue) forward() {
	defer close(q.out)
	for {
		q.mu.Lock()
		batch, closed := q.queue, q.closed
		q.queue = nil
		q.mu.Unlock()
		for _, e := range batch {
			q.out <- e
		}
		if closed && len(batch) == 0 {
			return
		}
		if len(batch) == 0 {
			<-q.wake
		}
	}
}
