// Package pipeline runs a conversation: capture frames flow through VAD,
// ASR and the endpointing policy; each committed user turn starts a
// response (generation, chunking, synthesis, playback) owned by one child
// context, which barge-in cancels as a whole.
//
// Interfaces for every stage are defined here, where they are consumed;
// implementations live in the stage packages and are wired together by
// wiring. This package imports only the policies it runs (the
// VAD's speech state machine, the endpointing policy), never a model.
package pipeline

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/vad"
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

// VAD detects speech in the capture stream.
type VAD interface {
	Process(f audio.Frame) (vad.Result, error)
	Reset()
}

// ASR is a streaming recognizer for one utterance at a time.
type ASR interface {
	// Accept feeds audio and returns the current partial transcript.
	Accept(f audio.Frame) (partial string, err error)
	// Finalize flushes the utterance and returns its final transcript.
	Finalize() (string, error)
	// Reset starts a new utterance.
	Reset()
}

// QuietFinalizer is implemented by recognizers that pad the end of an
// utterance to push its last words through (X-ASR): told how much of the
// audio they were given came after the speech, they pad only the rest.
type QuietFinalizer interface {
	FinalizeAfter(ctx context.Context, quiet time.Duration) (string, error)
}

// TurnDetector estimates whether the user has finished their turn from the
// turn's audio (16 kHz mono).
type TurnDetector interface {
	Predict(ctx context.Context, pcm []float32) (complete float64, err error)
}

// The reply's stages, defined where a reply consumes them (reply).
type (
	Generator   = reply.Generator
	Chunker     = reply.Chunker
	Synthesizer = reply.Synthesizer
)
