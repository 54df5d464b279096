// Package llm holds what the pipeline needs to talk to a language model:
// the conversation, the history that keeps only what the user heard, and
// generation statistics. The MNN backend lives in llm/mnn.
package llm

import (
	"encoding/json"
	"time"
)

// Role of a message in a chat.
type Role string

const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	// Tool is a tool's result, answering the tool calls of the assistant
	// message before it (chat templates render it as their tool
	// message: Qwen3's as <tool_response> in a user turn).
	Tool Role = "tool"
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

// ToolSpec is a tool as the model is told of it: the function a chat
// template renders into its tools list ({"type": "function", "function":
// {"name", "description", "parameters"}}, as Hugging Face's
// apply_chat_template takes them).
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is a JSON schema object: {"type": "object",
	// "properties": {...}, "required": [...]}.
	Parameters json.RawMessage `json:"parameters"`
}

// ToolUser is a generator that can be told which tools the model may call:
// they go into every prompt after the call (the chat template's tools),
// none for nil.
type ToolUser interface {
	SetTools(tools []ToolSpec) error
}
