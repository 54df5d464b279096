package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tools"
)

// builtin is a tool of the assistant's own.
type builtin struct{ name string }

func (b builtin) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: b.name, Description: "built in", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (b builtin) Call(context.Context, json.RawMessage) (string, error) { return b.name + " done", nil }

// host is the far end of send: the calls it is sent, in order.
type host struct {
	calls chan tools.HostCall
	err   error // send's, if set
}

func newHost() *host { return &host{calls: make(chan tools.HostCall, 64)} }

func (h *host) send(c tools.HostCall) error {
	if h.err != nil {
		return h.err
	}
	h.calls <- c
	return nil
}

var photo = llm.ToolSpec{
	Name:        "take_photo",
	Description: "Takes a photo with the glasses' camera.",
	Parameters:  json.RawMessage(`{"type": "object", "properties": {"flash": {"type": "boolean"}}}`),
}

func names(specs []llm.ToolSpec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestDeclareChecksTheSpecs(t *testing.T) {
	reg := &tools.Registry{}
	reg.Add(builtin{"timer"})
	h := tools.NewHostTools(reg, newHost().send, time.Second)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo}))
	many := make([]llm.ToolSpec, tools.MaxHostTools+1)
	for i := range many {
		many[i] = llm.ToolSpec{Name: fmt.Sprintf("t%d", i), Description: "d"}
	}
	for _, tc := range []struct {
		name string
		spec llm.ToolSpec
		err  string
	}{
		{"no name", llm.ToolSpec{Description: "d"}, `tool 1: name "": a tool's name is 1 to 64 letters, digits, _ and -`},
		{"space in name", llm.ToolSpec{Name: "take photo", Description: "d"}, `name "take photo"`},
		{"dot in name", llm.ToolSpec{Name: "camera.take", Description: "d"}, `name "camera.take"`},
		{"long name", llm.ToolSpec{Name: strings.Repeat("a", 65), Description: "d"}, "1 to 64 letters"},
		{"no description", llm.ToolSpec{Name: "battery_level", Description: " "}, "tool battery_level has no description"},
		{"parameters an array", llm.ToolSpec{Name: "navigate", Description: "d", Parameters: json.RawMessage(`[]`)}, `tool navigate: its parameters are the JSON schema of an object, {"type":"object","properties":{...}}, not []`},
		{"parameters of a string", llm.ToolSpec{Name: "navigate", Description: "d", Parameters: json.RawMessage(`{"type":"string"}`)}, "the JSON schema of an object"},
		{"parameters without a type", llm.ToolSpec{Name: "navigate", Description: "d", Parameters: json.RawMessage(`{"properties":{}}`)}, "the JSON schema of an object"},
		{"parameters not JSON", llm.ToolSpec{Name: "navigate", Description: "d", Parameters: json.RawMessage(`{"type":`)}, "the JSON schema of an object"},
		{"a built-in's name", llm.ToolSpec{Name: "timer", Description: "d"}, "tool timer: the assistant has a tool of that name already; name the host's otherwise"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, h.Declare([]llm.ToolSpec{tc.spec}), tc.err)
		})
	}
	assert.EqualError(t, h.Declare([]llm.ToolSpec{photo, photo}), "tool take_photo is declared twice")
	assert.EqualError(t, h.Declare(many), "33 tools; the host may declare at most 32, since every one goes into every prompt")

	specs := reg.Specs()
	assert.Equal(t, []string{"timer", "take_photo"}, names(specs), "a refused declaration changes nothing")
	assert.Equal(t, builtin{"timer"}.Spec(), specs[0], "the built-in keeps its own")
	assert.Equal(t, `{"type":"object","properties":{"flash":{"type":"boolean"}}}`, string(specs[1].Parameters), "compacted for the prompt")
}

func TestDeclareReplacesTheHostsToolsInOneChange(t *testing.T) {
	reg := &tools.Registry{}
	reg.Add(builtin{"timer"})
	var seen [][]string
	reg.OnChange(func(specs []llm.ToolSpec) { seen = append(seen, names(specs)) })
	h := tools.NewHostTools(reg, newHost().send, time.Second)

	require.NoError(t, h.Declare([]llm.ToolSpec{photo, {Name: "battery_level", Description: "The glasses' battery, in percent."}}))
	require.NoError(t, h.Declare([]llm.ToolSpec{{Name: "navigate", Description: "Starts navigation on the phone."}}))
	reg.Add(builtin{"note"})
	h.Withdraw()
	h.Withdraw() // nothing left to withdraw: no change
	assert.Equal(t, [][]string{
		{"timer"},
		{"timer", "take_photo", "battery_level"},
		{"timer", "navigate"},
		{"timer", "navigate", "note"},
		{"timer", "note"},
	}, seen)

	require.NoError(t, h.Declare([]llm.ToolSpec{{Name: "battery_level", Description: "d"}}))
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(reg.Specs()[2].Parameters), "a tool without parameters takes none")
	require.NoError(t, h.Declare(nil))
	assert.Equal(t, []string{"timer", "note"}, names(reg.Specs()), "an empty declaration withdraws")
}

// call calls name in reg on a goroutine of its own; the result comes on
// the channel.
func call(ctx context.Context, reg *tools.Registry, name, args string) <-chan result {
	out := make(chan result, 1)
	go func() {
		s, err := reg.Call(ctx, name, json.RawMessage(args))
		out <- result{s, err}
	}()
	return out
}

type result struct {
	text string
	err  error
}

func TestACallGoesToTheHostAndItsAnswerCompletesIt(t *testing.T) {
	reg := &tools.Registry{}
	hst := newHost()
	h := tools.NewHostTools(reg, hst.send, time.Minute)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo, {Name: "battery_level", Description: "d"}}))

	done := call(t.Context(), reg, "take_photo", `{"flash":true}`)
	c := <-hst.calls
	assert.Equal(t, tools.HostCall{ID: "call-1", Name: "take_photo", Arguments: json.RawMessage(`{"flash":true}`)}, c)
	require.NoError(t, h.Answer(c.ID, "a photo of a red bicycle", ""))
	assert.Equal(t, result{"a photo of a red bicycle", nil}, <-done)
	assert.EqualError(t, h.Answer(c.ID, "again", ""), `no tool call "call-1" is waiting for an answer: it was answered already, cancelled or timed out, or never made`)
	assert.ErrorContains(t, h.Answer("call-99", "", "x"), `no tool call "call-99" is waiting`)

	done = call(t.Context(), reg, "battery_level", `{}`)
	c = <-hst.calls
	assert.Equal(t, "call-2", c.ID, "each call has an id of its own")
	require.NoError(t, h.Answer(c.ID, "", "the battery gauge is not answering"))
	r := <-done
	assert.EqualError(t, r.err, "tool battery_level failed on the host: the battery gauge is not answering")

	// A withdrawn tool's call under way is still answered.
	done = call(t.Context(), reg, "take_photo", `{}`)
	c = <-hst.calls
	h.Withdraw()
	require.NoError(t, h.Answer(c.ID, "done", ""))
	assert.Equal(t, result{"done", nil}, <-done)
	assert.Empty(t, hst.calls, "no cancellation of an answered call")
}

func TestAHostThatAnswersAtOnceIsHeard(t *testing.T) {
	reg := &tools.Registry{}
	var h *tools.HostTools
	// The answer comes before send returns.
	h = tools.NewHostTools(reg, func(c tools.HostCall) error { return h.Answer(c.ID, "82%", "") }, time.Minute)
	require.NoError(t, h.Declare([]llm.ToolSpec{{Name: "battery_level", Description: "d"}}))
	got, err := reg.Call(t.Context(), "battery_level", nil)
	require.NoError(t, err)
	assert.Equal(t, "82%", got)
}

func TestACallTheHostDoesNotAnswerInTimeFailsAndIsCancelled(t *testing.T) {
	reg := &tools.Registry{}
	hst := newHost()
	h := tools.NewHostTools(reg, hst.send, 20*time.Millisecond)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo}))
	start := time.Now()
	_, err := reg.Call(t.Context(), "take_photo", json.RawMessage(`{}`))
	assert.EqualError(t, err, "the host did not answer tool take_photo within 20ms")
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	c := <-hst.calls
	assert.Equal(t, tools.HostCall{ID: "call-1", Name: "take_photo", Cancelled: true}, <-hst.calls, "the host is told to drop it")
	assert.ErrorContains(t, h.Answer(c.ID, "too late", ""), `no tool call "call-1" is waiting`)
}

func TestACancelledCallIsCancelledToTheHost(t *testing.T) {
	reg := &tools.Registry{}
	hst := newHost()
	h := tools.NewHostTools(reg, hst.send, time.Minute)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo}))
	ctx, cancel := context.WithCancel(t.Context())
	done := call(ctx, reg, "take_photo", `{}`)
	c := <-hst.calls
	cancel() // the user interrupted the reply
	r := <-done
	assert.ErrorIs(t, r.err, context.Canceled)
	assert.EqualError(t, r.err, "tool take_photo: context canceled")
	assert.Equal(t, tools.HostCall{ID: c.ID, Name: "take_photo", Cancelled: true}, <-hst.calls)
	assert.ErrorContains(t, h.Answer(c.ID, "late", ""), "is waiting")

	// A reply interrupted before the call sends nothing.
	_, err := reg.Call(ctx, "take_photo", nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, hst.calls)
}

func TestACallThatCannotBeSentFailsAtOnce(t *testing.T) {
	reg := &tools.Registry{}
	hst := newHost()
	hst.err = errors.New("no client is connected")
	h := tools.NewHostTools(reg, hst.send, time.Minute)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo}))
	_, err := reg.Call(t.Context(), "take_photo", nil)
	assert.EqualError(t, err, "tool take_photo: the call did not reach the host: no client is connected")
	assert.ErrorContains(t, h.Answer("call-1", "", "x"), "is waiting", "the call is not left waiting")
}

// TestConcurrentCallsEachGetTheirOwnAnswer: many calls at once, answered
// out of order, while the host declares again; each gets the answer to
// its own id.
func TestConcurrentCallsEachGetTheirOwnAnswer(t *testing.T) {
	reg := &tools.Registry{}
	hst := newHost()
	h := tools.NewHostTools(reg, hst.send, time.Minute)
	require.NoError(t, h.Declare([]llm.ToolSpec{photo}))
	const n = 50
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got, err := reg.Call(t.Context(), "take_photo", json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
			assert.NoError(t, err)
			assert.Equal(t, fmt.Sprintf(`{"n":%d} answered`, i), got)
		})
	}
	var calls []tools.HostCall
	for range n {
		calls = append(calls, <-hst.calls)
		if len(calls)%10 == 0 {
			assert.NoError(t, h.Declare([]llm.ToolSpec{photo}))
		}
	}
	for i := len(calls) - 1; i >= 0; i-- {
		wg.Go(func() { assert.NoError(t, h.Answer(calls[i].ID, string(calls[i].Arguments)+" answered", "")) })
	}
	wg.Wait()
}
