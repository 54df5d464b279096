// Package llm holds what the pipeline needs to talk to a language model:
// the conversation, the history that keeps only what the user heard, and
// generation statistics. The MNN backend lives in llm/mnn.
package llm

import "time"

// Role of a message in a chat.
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Interrupted marks an assistant reply cut short by barge-in; Content
	// then holds only the part that was played.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Stats reports one generation.
type Stats struct {
	PromptTokens int `json:"prompt_tokens"`
	// CachedTokens of the prompt were in the engine's KV cache already
	// (the conversation so far) and were not prefilled again.
	CachedTokens    int           `json:"cached_tokens,omitempty"`
	GeneratedTokens int           `json:"generated_tokens"`
	Prefill         time.Duration `json:"prefill_ns"`
	Decode          time.Duration `json:"decode_ns"`
	// FirstToken is the time from the call to the reply's first token
	// (the prefill and one decode step), where the engine says; its text
	// may come a token or more later (a character cut across tokens).
	FirstToken time.Duration `json:"first_token_ns,omitempty"`
}
