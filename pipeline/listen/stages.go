package listen

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/vad"
)

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

// Forker is implemented by recognizers that can copy the utterance so far.
type Forker interface {
	Fork() (Finalizer, error)
}

// Finalizer is a copy of a recognizer's utterance: FinalizeAfter gives
// the final transcript it would have if it ended now, and runs while the
// recognizer goes on listening, until its context is done. Close releases
// it.
type Finalizer interface {
	QuietFinalizer
	Close() error
}

// Stages are the listening side's stages. Turn is optional (without it the
// endpointer commits on silence); Quiet and Fork are the recognizer's
// optional faces, nil where it has none.
type Stages struct {
	VAD   VAD
	ASR   ASR
	Turn  TurnDetector
	Quiet QuietFinalizer
	Fork  Forker
}

// History is the conversation as the listening side writes it: the user's
// messages (llm.History).
type History interface {
	AddUser(text string) (kept string)
	TakeBackUser(text string) bool
}
