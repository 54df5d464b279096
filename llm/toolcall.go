package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The markers around a tool call in a reply, as Qwen3's chat template
// asks the model for them (llm/mnn/testdata/qwen3_chat_template.jinja:
// "return a json object with function name and arguments within
// <tool_call></tool_call> XML tags") and renders them back in history.
const (
	ToolCallOpen  = "<tool_call>"
	ToolCallClose = "</tool_call>"
)

// ToolCall is one call the model made: {"name": ..., "arguments": {...}}
// between the markers.
type ToolCall struct {
	Name string
	// Arguments is a JSON object ({} where the model gave none).
	Arguments json.RawMessage
	// Err says why the call could not be read (bad JSON, no name); Name
	// and Arguments are then what could be read, if anything.
	Err error
}

// CallFilter takes a reply as it streams and separates what is to be
// said from the tool calls in it, which are never spoken or shown: a
// marker split over many pieces is held back until it is known to be one
// or not.
type CallFilter struct {
	held  string // text that may be the start of a marker
	in    bool   // inside a call: held is its body so far
	calls []ToolCall
}

// Push takes the next piece of the reply and returns the text that is
// now known to be speech.
func (f *CallFilter) Push(piece string) string {
	f.held += piece
	var speech strings.Builder
	for {
		if f.in {
			body, rest, closed := strings.Cut(f.held, ToolCallClose)
			if !closed {
				return speech.String()
			}
			f.calls = append(f.calls, ParseToolCall(body))
			f.held, f.in = rest, false
			continue
		}
		before, rest, open := strings.Cut(f.held, ToolCallOpen)
		if open {
			speech.WriteString(before)
			f.held, f.in = rest, true
			continue
		}
		keep := partialMarker(f.held, ToolCallOpen)
		speech.WriteString(f.held[:len(f.held)-keep])
		f.held = f.held[len(f.held)-keep:]
		return speech.String()
	}
}

// Flush ends the reply: text held as a possible marker is speech after
// all, and a call the reply ended inside of (the model stopped before
// its closing marker) is read as far as it goes.
func (f *CallFilter) Flush() string {
	held := f.held
	f.held = ""
	if f.in {
		f.in = false
		f.calls = append(f.calls, ParseToolCall(held))
		return ""
	}
	return held
}

// Calls are the tool calls read so far, in order.
func (f *CallFilter) Calls() []ToolCall { return f.calls }

// partialMarker is the length of the longest end of s that is a proper
// start of marker.
func partialMarker(s, marker string) int {
	for n := min(len(s), len(marker)-1); n > 0; n-- {
		if strings.HasSuffix(s, marker[:n]) {
			return n
		}
	}
	return 0
}

// ParseToolCall reads the body of a tool call. Arguments given as a JSON
// string holding an object (as some models write them) are taken as that
// object.
func ParseToolCall(body string) ToolCall {
	var raw struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &raw); err != nil {
		return ToolCall{Err: fmt.Errorf("a tool call that is not JSON: %w", err)}
	}
	call := ToolCall{Name: raw.Name, Arguments: json.RawMessage("{}")}
	if raw.Name == "" {
		call.Err = errors.New("a tool call without a name")
		return call
	}
	args := bytes.TrimSpace(raw.Arguments)
	var quoted string
	if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &quoted) == nil {
		args = bytes.TrimSpace([]byte(quoted))
	}
	switch {
	case len(args) == 0 || bytes.Equal(args, []byte("null")):
	case args[0] == '{' && json.Valid(args):
		call.Arguments = json.RawMessage(args)
	default:
		call.Err = fmt.Errorf("tool call %s: arguments %s are not a JSON object", raw.Name, args)
	}
	return call
}
