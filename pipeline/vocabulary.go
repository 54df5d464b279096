package pipeline

import "github.com/voiceassistant/voice/pipeline/event"

// The session's vocabulary (events, states, metrics) is package event's,
// below both the pipeline and a reply; these names keep it where a
// session's user looks for it.
type (
	Event        = event.Event
	EventType    = event.EventType
	State        = event.State
	TurnMetrics  = event.TurnMetrics
	PathMS       = event.PathMS
	Summary      = event.Summary
	StageCompute = event.StageCompute
)

const (
	StateListening    = event.StateListening
	StateUserSpeaking = event.StateUserSpeaking
	StateThinking     = event.StateThinking
	StateSpeaking     = event.StateSpeaking
	StateInterrupted  = event.StateInterrupted

	EvState            = event.EvState
	EvSpeechStart      = event.EvSpeechStart
	EvSpeechEnd        = event.EvSpeechEnd
	EvPartial          = event.EvPartial
	EvFinal            = event.EvFinal
	EvTurnCommit       = event.EvTurnCommit
	EvLLMPiece         = event.EvLLMPiece
	EvLLMDone          = event.EvLLMDone
	EvTTSChunk         = event.EvTTSChunk
	EvPlaybackStart    = event.EvPlaybackStart
	EvPlaybackStop     = event.EvPlaybackStop
	EvBargeInPending   = event.EvBargeInPending
	EvBargeIn          = event.EvBargeIn
	EvBargeInResumed   = event.EvBargeInResumed
	EvSpeechIgnored    = event.EvSpeechIgnored
	EvTurnContinued    = event.EvTurnContinued
	EvSpeculationStart = event.EvSpeculationStart
	EvSpeculationHit   = event.EvSpeculationHit
	EvSpeculationMiss  = event.EvSpeculationMiss
	EvReplyState       = event.EvReplyState
	EvToolCall         = event.EvToolCall
	EvToolResult       = event.EvToolResult
	EvToolError        = event.EvToolError
	EvTurnMetrics      = event.EvTurnMetrics
	EvError            = event.EvError

	ReasonStopKey = event.ReasonStopKey
)

var (
	Summarize  = event.Summarize
	Percentile = event.Percentile
)
