package reply

import (
	"context"
	"encoding/json"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tts/normalize"
)

// Generator streams a reply to a conversation.
type Generator interface {
	// Generate calls emit for each text piece in order, and returns when
	// the reply is done or ctx is cancelled (then between tokens).
	Generate(ctx context.Context, conv []llm.Message, emit func(piece string) error) (llm.Stats, error)
}

// Chunker cuts a streamed reply into speakable chunks.
type Chunker interface {
	Push(piece string) []string
	Flush() []string
	// Join puts chunks back together as text (no spaces between Chinese
	// chunks), for the part of a reply the user heard.
	Join(chunks []string) string
	// Source is the start of reply (as the model wrote it) that says
	// heard (a Join of its first chunks, the last maybe cut short), or
	// false when none says exactly that.
	Source(reply, heard string) (string, bool)
}

// Synthesizer turns a chunk of text into audio, incrementally.
type Synthesizer interface {
	// Format of the samples passed to emit.
	Format() audio.Format
	// Synthesize calls emit with audio as it is produced and stops between
	// frames when ctx is cancelled. lang is the language of the reply's
	// latest words (normalize.Detect), which reads the numbers and symbols
	// that have no words near them ("3/4" in a Chinese reply is 四分之三).
	Synthesize(ctx context.Context, text string, lang normalize.Language, emit func(samples []float32) error) error
}

// Toolbox runs the tools the model calls (tools.Registry).
type Toolbox interface {
	// Call runs the tool name with args (a JSON object) and returns its
	// result for the model; it returns soon after ctx is cancelled.
	Call(ctx context.Context, name string, args json.RawMessage) (string, error)
}
