//go:build !mnn

package mnn

import (
	"context"

	"github.com/voiceassistant/voice/llm"
)

// Built says whether this binary has the MNN engine.
const Built = false

// Version is empty: this binary has no MNN.
func Version() string { return "" }

// Model stands in for the MNN engine in builds without it.
type Model struct{}

// Open always fails: this binary was built without MNN.
func Open(Config) (*Model, error) { return nil, ErrNotBuilt }

func (*Model) Generate(context.Context, []llm.Message, func(string) error) (llm.Stats, error) {
	return llm.Stats{}, ErrNotBuilt
}

func (*Model) Prefill(context.Context, []llm.Message) (llm.Stats, error) {
	return llm.Stats{}, ErrNotBuilt
}

func (*Model) SetTools([]llm.ToolSpec) error { return ErrNotBuilt }

func (*Model) Close() error { return nil }
