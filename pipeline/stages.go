// Package pipeline runs a conversation: capture frames flow through the
// listening side (package listen: VAD, ASR and the endpointing policy);
// each committed user turn starts a reply (package reply: generation,
// chunking, synthesis, playback) owned by one child context, which
// barge-in cancels as a whole.
//
// The stages' interfaces are defined where they are consumed, in listen
// and reply, and named here for the session's Config; implementations live
// in the stage packages and are wired together by wiring. This package
// imports only the policies it runs (the VAD's speech state machine, the
// endpointing policy), never a model.
package pipeline

import (
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
)

// Device is a duplex audio device as the pipeline sees it.
//
// Each frame received from Frames carries one hold on the session clock
// (a no-op live); the pipeline releases it once it has reacted to the
// frame, which is what lets a virtual clock run replays deterministically.
type Device interface {
	// Frames delivers 16 kHz mono capture frames with stream positions and
	// is closed when the device stops.
	Frames() <-chan audio.Frame
	// Player is the playback queue feeding the device.
	Player() *audio.Player
	// Err says why Frames was closed; nil for a normal end.
	Err() error
}

// The listening side's stages (listen) and a reply's (reply).
type (
	VAD            = listen.VAD
	ASR            = listen.ASR
	QuietFinalizer = listen.QuietFinalizer
	TurnDetector   = listen.TurnDetector
	Forker         = listen.Forker
	Finalizer      = listen.Finalizer
	Generator      = reply.Generator
	Chunker        = reply.Chunker
	Synthesizer    = reply.Synthesizer
	Toolbox        = reply.Toolbox
)
