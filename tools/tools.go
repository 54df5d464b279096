// Package tools is what the assistant can do besides talk: a registry of
// tools the model may call, each a name, a description and a JSON schema
// of its arguments, and the built-in ones that work offline: get_time
// (the time), timer (timers and alarms, set, listed or cancelled), note
// (notes remembered, recalled or forgotten), set_volume (the assistant's
// volume) and repeat_last_reply. Every tool's schema is in every prompt,
// so related things are one tool with an action, not a tool each. The host
// around the assistant adds its own through the control socket
// (HostTools). The reply that calls a tool runs it (package reply); this
// package only says what each does.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/voiceassistant/voice/llm"
)

// Tool is one thing the assistant can do.
type Tool interface {
	Spec() llm.ToolSpec
	// Call does it with args (a JSON object as the model wrote it,
	// checked only as JSON) and returns the result for the model, or why
	// it could not. It returns soon after ctx is cancelled: the user
	// interrupted the reply that called it.
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// ErrUnknown is the error of a call to a tool the registry does not have.
var ErrUnknown = errors.New("no such tool")

// Registry holds the tools the model may call. It is safe for concurrent
// use: the host declares its tools while a reply runs one.
type Registry struct {
	mu       sync.Mutex
	tools    []Tool
	onChange []func([]llm.ToolSpec)
	// told orders the listeners' calls as the changes: taken before mu
	// is let go, so that two changes racing (the host declaring while
	// the built-ins go in) cannot leave the model told of the older.
	told sync.Mutex
}

// Add adds tools, each replacing one of the same name.
func (r *Registry) Add(tools ...Tool) {
	r.mu.Lock()
	for _, t := range tools {
		name := t.Spec().Name
		if i := r.index(name); i >= 0 {
			r.tools[i] = t
		} else {
			r.tools = append(r.tools, t)
		}
	}
	r.changedLocked()
}

// Remove removes the tools drop says to, in one change.
func (r *Registry) Remove(drop func(Tool) bool) {
	r.mu.Lock()
	n := len(r.tools)
	r.tools = slices.DeleteFunc(r.tools, drop)
	if len(r.tools) == n {
		r.mu.Unlock()
		return
	}
	r.changedLocked()
}

// changedLocked tells the listeners of the tools as they now are, in the
// order of the changes, and unlocks.
func (r *Registry) changedLocked() {
	r.tellLocked(r.specsLocked(), slices.Clone(r.onChange))
}

// tellLocked unlocks mu and calls each listener with specs, after the
// calls of every change before.
func (r *Registry) tellLocked(specs []llm.ToolSpec, listeners []func([]llm.ToolSpec)) {
	r.told.Lock()
	defer r.told.Unlock()
	r.mu.Unlock()
	for _, f := range listeners {
		f(specs)
	}
}

// OnChange calls f with the tools now and after every change, in the
// order of the changes: what the model is told of (llm.ToolUser). f must
// not change the registry.
func (r *Registry) OnChange(f func([]llm.ToolSpec)) {
	r.mu.Lock()
	r.onChange = append(r.onChange, f)
	r.tellLocked(r.specsLocked(), []func([]llm.ToolSpec){f})
}

// Specs are the tools as the model is told of them, in the order added.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.specsLocked()
}

func (r *Registry) specsLocked() []llm.ToolSpec {
	specs := make([]llm.ToolSpec, len(r.tools))
	for i, t := range r.tools {
		specs[i] = t.Spec()
	}
	return specs
}

func (r *Registry) index(name string) int {
	return slices.IndexFunc(r.tools, func(t Tool) bool { return t.Spec().Name == name })
}

// Call runs the tool name with args.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	r.mu.Lock()
	i := r.index(name)
	var t Tool
	if i >= 0 {
		t = r.tools[i]
	}
	r.mu.Unlock()
	if t == nil {
		return "", fmt.Errorf("%w %q", ErrUnknown, name)
	}
	return t.Call(ctx, args)
}
