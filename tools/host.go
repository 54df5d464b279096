package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/voiceassistant/voice/llm"
)

// MaxHostTools is how many tools the host may declare: every tool's
// description and schema go into every prompt, and a prompt the size of a
// host's whole API would cost each reply its prefill on the device.
const MaxHostTools = 32

// maxToolName is the longest name a tool may have: OpenAI's limit for a
// function's name, which chat templates and hosts built against that API
// already keep to.
const maxToolName = 64

// HostCall is a call of one of the host's tools, for the host to run and
// answer (HostTools.Answer), or, with Cancelled, word that the call with
// that ID is no longer waited for: the user interrupted the reply that made
// it, or the host took too long. A host that has not acted on it yet should
// not, and its answer to it now is refused.
type HostCall struct {
	ID   string
	Name string
	// Arguments is the JSON object the model wrote (unset for Cancelled).
	Arguments json.RawMessage
	Cancelled bool
}

// HostTools are the tools that the host around the assistant declares
// (take_photo, battery_level, navigate): the model sees them in reg beside
// the built-in ones, and a call of one goes to the host through send and
// waits for the host's answer. They stay declared until the host declares
// others or withdraws them, whether or not a host is connected: a call
// while none is fails at once (where send says so), and the model can say
// so, which it could not of a tool it was never told of. It is safe for
// concurrent use.
type HostTools struct {
	reg     *Registry
	send    func(HostCall) error
	timeout time.Duration

	mu      sync.Mutex
	calls   int64 // calls made, for the next call's ID
	pending map[string]chan hostAnswer
}

// hostAnswer is the host's answer to a call: its result, or why it failed.
type hostAnswer struct{ result, errText string }

// NewHostTools makes the host's tools for reg: a call of one is sent with
// send (which must not wait on the host's answer), and one the host does not
// answer within timeout fails.
func NewHostTools(reg *Registry, send func(HostCall) error, timeout time.Duration) *HostTools {
	return &HostTools{reg: reg, send: send, timeout: timeout, pending: map[string]chan hostAnswer{}}
}

// Declare makes specs the host's tools, in place of those it declared
// before, in one change of the registry (the model never sees a registry
// with neither). A spec without parameters takes none. A name of a tool
// that is not the host's (a built-in one) is refused, as is a bad spec;
// either way the host's tools stay as they were. Calls under way still
// wait for their answers: the host that declares again is the one that
// answers them.
func (h *HostTools) Declare(specs []llm.ToolSpec) error {
	if len(specs) > MaxHostTools {
		return fmt.Errorf("%d tools; the host may declare at most %d, since every one goes into every prompt", len(specs), MaxHostTools)
	}
	add := make([]Tool, len(specs))
	seen := make(map[string]bool, len(specs))
	for i, s := range specs {
		s, err := checkSpec(s)
		if err != nil {
			return fmt.Errorf("tool %d: %w", i+1, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("tool %s is declared twice", s.Name)
		}
		seen[s.Name] = true
		add[i] = &hostTool{h: h, spec: s}
	}
	return h.reg.replace(h.owns, add)
}

// Withdraw removes the host's tools from the registry; calls under way are
// still answered.
func (h *HostTools) Withdraw() {
	h.reg.Remove(h.owns)
}

// owns says whether t is one of h's tools.
func (h *HostTools) owns(t Tool) bool {
	ht, ok := t.(*hostTool)
	return ok && ht.h == h
}

// checkSpec is s as the model is told of it, or why it cannot be a tool.
func checkSpec(s llm.ToolSpec) (llm.ToolSpec, error) {
	if !validName(s.Name) {
		return s, fmt.Errorf("name %q: a tool's name is 1 to %d letters, digits, _ and - (take_photo)", s.Name, maxToolName)
	}
	if strings.TrimSpace(s.Description) == "" {
		return s, fmt.Errorf("tool %s has no description; the model picks a tool by what its description says it does", s.Name)
	}
	params := bytes.TrimSpace(s.Parameters)
	if len(params) == 0 || string(params) == "null" {
		s.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		return s, nil
	}
	var schema struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(params, &schema); err != nil || schema.Type != "object" {
		return s, fmt.Errorf(`tool %s: its parameters are the JSON schema of an object, {"type":"object","properties":{...}}, not %.80s`, s.Name, params)
	}
	// Compact: the schema goes into every prompt as it is here.
	var compact bytes.Buffer
	if err := json.Compact(&compact, params); err != nil {
		return s, fmt.Errorf("tool %s: parameters: %w", s.Name, err)
	}
	s.Parameters = compact.Bytes()
	return s, nil
}

func validName(name string) bool {
	if name == "" || len(name) > maxToolName {
		return false
	}
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Answer completes the call id with the host's result, or, where errText is
// not empty, with the host's word that it failed. A call that is not
// waiting (answered already, cancelled, timed out, or never made) is an
// error, for the host that answered it.
func (h *HostTools) Answer(id, result, errText string) error {
	h.mu.Lock()
	ch, ok := h.pending[id]
	delete(h.pending, id)
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("no tool call %q is waiting for an answer: it was answered already, cancelled or timed out, or never made", id)
	}
	ch <- hostAnswer{result: result, errText: errText} // buffered, and only this answer is sent on it
	return nil
}

// call sends the host a call of its tool name and waits for its answer, for
// ctx, or for the timeout. A call given up on is cancelled to the host.
func (h *HostTools) call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		// The reply was interrupted already: the host need not take the
		// photo nobody will hear of.
		return "", fmt.Errorf("tool %s: %w", name, context.Cause(ctx))
	}
	ch := make(chan hostAnswer, 1)
	h.mu.Lock()
	h.calls++
	id := "call-" + strconv.FormatInt(h.calls, 10)
	// Waiting before it is sent: a host may answer before send returns.
	h.pending[id] = ch
	h.mu.Unlock()
	if err := h.send(HostCall{ID: id, Name: name, Arguments: args}); err != nil {
		h.forget(id)
		return "", fmt.Errorf("tool %s: the call did not reach the host: %w", name, err)
	}
	timer := time.NewTimer(h.timeout)
	defer timer.Stop()
	var gaveUp error
	select {
	case a := <-ch:
		return a.answer(name)
	case <-ctx.Done():
		gaveUp = fmt.Errorf("tool %s: %w", name, context.Cause(ctx))
	case <-timer.C:
		gaveUp = fmt.Errorf("the host did not answer tool %s within %s", name, h.timeout)
	}
	if !h.forget(id) {
		// The answer came as the wait ended, and the host was told it was
		// taken: it is.
		return (<-ch).answer(name)
	}
	// The host learns it need not act; a host that cannot be told (it
	// went away) has nothing to act on.
	_ = h.send(HostCall{ID: id, Name: name, Cancelled: true})
	return "", gaveUp
}

// forget stops waiting for the call id, saying whether it was still waited
// for (not answered).
func (h *HostTools) forget(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.pending[id]
	delete(h.pending, id)
	return ok
}

// answer is a as a tool's result for the model.
func (a hostAnswer) answer(name string) (string, error) {
	if a.errText != "" {
		return "", fmt.Errorf("tool %s failed on the host: %s", name, a.errText)
	}
	return a.result, nil
}

// hostTool is one of the host's tools in the registry.
type hostTool struct {
	h    *HostTools
	spec llm.ToolSpec
}

func (t *hostTool) Spec() llm.ToolSpec { return t.spec }

func (t *hostTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return t.h.call(ctx, t.spec.Name, args)
}

// replace removes the tools drop says to and adds add, in one change, unless
// one of add has the name of a tool that stays: then it changes nothing and
// says which.
func (r *Registry) replace(drop func(Tool) bool, add []Tool) error {
	r.mu.Lock()
	for _, t := range add {
		name := t.Spec().Name
		if i := r.index(name); i >= 0 && !drop(r.tools[i]) {
			r.mu.Unlock()
			return fmt.Errorf("tool %s: the assistant has a tool of that name already; name the host's otherwise", name)
		}
	}
	n := len(r.tools)
	kept := make([]Tool, 0, n+len(add))
	for _, t := range r.tools {
		if !drop(t) {
			kept = append(kept, t)
		}
	}
	if len(kept) == n && len(add) == 0 {
		r.mu.Unlock()
		return nil
	}
	r.tools = append(kept, add...)
	r.changedLocked()
	return nil
}
