package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/control"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/tools"
)

// fakeAgent is a control socket whose handler keeps the commands and
// refuses a say of "fail".
type fakeAgent struct {
	path string
	srv  *control.Server
	mu   sync.Mutex
	got  []control.Command
}

func newFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{path: filepath.Join(t.TempDir(), "control.sock")}
	srv, err := control.Listen(f.path, control.HandlerFunc(func(_ context.Context, c control.Command) (any, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.got = append(f.got, c)
		switch {
		case c.Op == control.OpStatus:
			return status{State: event.StateListening}, nil
		case c.Text == "fail":
			return nil, errors.New("nothing to say it with")
		}
		return nil, nil
	}), control.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	f.srv = srv
	return f
}

func (f *fakeAgent) last() control.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[len(f.got)-1]
}

func TestCtlRoundTrip(t *testing.T) {
	agent := newFakeAgent(t)
	decl := filepath.Join(t.TempDir(), "camera.json")
	require.NoError(t, os.WriteFile(decl, []byte(`[{"name":"take_photo","description":"Takes a photo."}]`), 0o644))
	for _, tc := range []struct {
		args []string
		want control.Command
		out  string
	}{
		{[]string{"talk", "start"}, control.Command{Op: control.OpTalkStart}, ""},
		{[]string{"say", "Your", "meeting", "starts", "now."}, control.Command{Op: control.OpSay, Text: "Your meeting starts now."}, ""},
		{[]string{"say", "会议现在开始。"}, control.Command{Op: control.OpSay, Text: "会议现在开始。"}, ""},
		{[]string{"status"}, control.Command{Op: control.OpStatus}, `{"state":"listening"}` + "\n"},
		{[]string{"tools", decl}, control.Command{Op: control.OpTools, Tools: []control.ToolDecl{{Name: "take_photo", Description: "Takes a photo."}}}, ""},
		{[]string{"tool-result", "call-7", "A", "red", "bicycle."}, control.Command{Op: control.OpToolResult, Call: "call-7", Result: "A red bicycle."}, ""},
		{[]string{"tool-error", "call-8", "No", "camera."}, control.Command{Op: control.OpToolResult, Call: "call-8", ToolError: "No camera."}, ""},
	} {
		_, _, out := executed(t, append([]string{"ctl", "--socket", agent.path}, tc.args...)...)
		assert.Equal(t, tc.want, agent.last(), "%q", tc.args)
		assert.Equal(t, tc.out, out.String(), "%q", tc.args)
	}
}

func TestCtlErrors(t *testing.T) {
	agent := newFakeAgent(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"ctl", "--socket", agent.path, "say", "fail"}, "ctl say: nothing to say it with"},
		{[]string{"ctl", "--socket", agent.path, "tlak", "start"}, `unknown command "tlak"; commands: ` + control.Usage},
		{[]string{"ctl", "--socket", filepath.Join(t.TempDir(), "none"), "wake"}, "is voice-agent run going"},
		{[]string{"ctl", "wake"}, "ctl: no socket: give --socket, or set control.socket in the config"},
	} {
		root := newApp().root()
		root.SetOut(io.Discard)
		empty := filepath.Join(t.TempDir(), "empty.yaml")
		require.NoError(t, os.WriteFile(empty, nil, 0o644))
		root.SetArgs(append(tc.args, "--config", empty))
		assert.ErrorContains(t, root.Execute(), tc.err, "%q", tc.args)
	}
}

// TestControlOpsArePipelineOps: the socket's commands convert to the
// pipeline's one for one, status (answered in cmd) aside.
func TestControlOpsArePipelineOps(t *testing.T) {
	var ops []pipeline.Op
	for _, args := range [][]string{{"talk", "start"}, {"talk", "stop"}, {"talk", "toggle"}, {"wake"}, {"mute"}, {"unmute"}, {"cancel"}, {"say", "hi"}} {
		c, err := control.ParseArgs(args)
		require.NoError(t, err)
		ops = append(ops, pipeline.Op(c.Op))
	}
	assert.Equal(t, pipeline.Ops, ops)
	assert.False(t, slices.Contains(pipeline.Ops, pipeline.Op(control.OpStatus)))
}

// TestRunServesControl: with control.socket set, run's event handling
// sends every event to the socket's clients as --json prints it, a
// command reaches the session as a pipeline command and is answered with
// what the session says of it, and status is the last state.
func TestRunServesControl(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	var printed []event.Event
	onEvent, cmds, closeControl, err := serveControl(control.Config{Socket: path}, nil, func(e event.Event) { printed = append(printed, e) }, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, closeControl()) }()
	c, err := control.Dial(t.Context(), path)
	require.NoError(t, err)
	defer c.Close()

	a, err := c.Do(t.Context(), control.Command{Op: control.OpStatus})
	require.NoError(t, err)
	assert.JSONEq(t, `{"state":"starting"}`, string(a.Data))

	e := event.Event{Type: event.EvState, State: event.StateSpeaking}
	onEvent(e)
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(e))
	assert.JSONEq(t, want.String(), string(<-c.Events()), "the event as --json prints it")
	assert.Equal(t, []event.Event{e}, printed)
	a, err = c.Do(t.Context(), control.Command{Op: control.OpStatus})
	require.NoError(t, err)
	assert.JSONEq(t, `{"state":"speaking"}`, string(a.Data))

	for _, tc := range []struct {
		cmd  control.Command
		done error
	}{
		{control.Command{Op: control.OpTalkStart}, nil},
		{control.Command{Op: control.OpSay, Text: "电池电量低。"}, nil},
		{control.Command{Op: control.OpSay, Text: "Battery low."}, errors.New("say: the session has ended")},
	} {
		answered := make(chan error)
		go func() {
			_, err := c.Do(t.Context(), tc.cmd)
			answered <- err
		}()
		got := <-cmds
		assert.Equal(t, pipeline.Op(tc.cmd.Op), got.Op)
		assert.Equal(t, tc.cmd.Text, got.Text)
		got.Done <- tc.done
		if err := <-answered; tc.done != nil {
			assert.EqualError(t, err, tc.done.Error())
		} else {
			assert.NoError(t, err)
		}
	}
}

// TestCtlEventsPrintsToolCalls: ctl --events prints a call of the host's
// tools, and its cancellation, by their keys, beside the events.
func TestCtlEventsPrintsToolCalls(t *testing.T) {
	agent := newFakeAgent(t)
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	root := newApp().root()
	root.SetOut(w)
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	root.SetArgs([]string{"ctl", "--socket", agent.path, "status", "--events", "--config", empty})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	lines := bufio.NewReader(r)
	line := func() string {
		l, err := lines.ReadString('\n')
		require.NoError(t, err)
		return l
	}
	assert.JSONEq(t, `{"state":"listening"}`, line(), "status's answer: ctl is connected")
	require.NoError(t, agent.srv.SendToolCall(control.ToolCall{ID: "call-7", Name: "take_photo", Arguments: json.RawMessage(`{"flash":true}`)}))
	assert.JSONEq(t, `{"tool_call":{"id":"call-7","name":"take_photo","arguments":{"flash":true}}}`, line())
	require.NoError(t, agent.srv.SendToolCall(control.ToolCall{ID: "call-7", Name: "take_photo", Cancelled: true}))
	assert.JSONEq(t, `{"tool_cancel":{"id":"call-7","name":"take_photo"}}`, line())
	cancel()
	go io.Copy(io.Discard, r) // whatever ctl writes on its way out
	assert.NoError(t, <-done)
	w.Close()
}

// hostAgent serves the control socket as run does, with host tools of the
// given timeout in reg.
func hostAgent(t *testing.T, reg *tools.Registry, timeout time.Duration) (path string, host *tools.HostTools) {
	path = filepath.Join(t.TempDir(), "control.sock")
	_, _, closeControl, err := serveControl(control.Config{Socket: path}, func(send func(tools.HostCall) error) *tools.HostTools {
		host = tools.NewHostTools(reg, send, timeout)
		return host
	}, func(event.Event) {}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, closeControl()) })
	return path, host
}

// builtinTool is one of the assistant's own tools.
type builtinTool struct{}

func (builtinTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "set_timer", Description: "Sets a timer.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func (builtinTool) Call(context.Context, json.RawMessage) (string, error) { return "set", nil }

// TestRunServesHostTools: a client declares the host's tools, which join
// the registry; the model's call of one reaches the client, and the
// client's answer is the call's result; a call the user interrupts is
// cancelled to the host; the empty declaration withdraws them; and a call
// with no client connected fails at once.
func TestRunServesHostTools(t *testing.T) {
	reg := &tools.Registry{}
	reg.Add(builtinTool{})
	path, _ := hostAgent(t, reg, time.Minute)
	c, err := control.Dial(t.Context(), path)
	require.NoError(t, err)

	_, err = c.Do(t.Context(), control.Command{Op: control.OpTools, Tools: []control.ToolDecl{{Name: "set_timer", Description: "d"}}})
	assert.EqualError(t, err, "tool set_timer: the assistant has a tool of that name already; name the host's otherwise")
	_, err = c.Do(t.Context(), control.Command{Op: control.OpTools, Tools: []control.ToolDecl{
		{Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type":"object","properties":{"flash":{"type":"boolean"}}}`)},
	}})
	require.NoError(t, err)
	assert.Equal(t, []llm.ToolSpec{builtinTool{}.Spec(), {Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type":"object","properties":{"flash":{"type":"boolean"}}}`)}}, reg.Specs())

	type result struct {
		text string
		err  error
	}
	callTool := func(ctx context.Context) <-chan result {
		out := make(chan result, 1)
		go func() {
			text, err := reg.Call(ctx, "take_photo", json.RawMessage(`{"flash":true}`))
			out <- result{text, err}
		}()
		return out
	}
	done := callTool(t.Context())
	call := <-c.ToolCalls()
	assert.Equal(t, control.ToolCall{ID: "call-1", Name: "take_photo", Arguments: json.RawMessage(`{"flash":true}`)}, call)
	_, err = c.Do(t.Context(), control.Command{Op: control.OpToolResult, Call: call.ID, Result: "A red bicycle."})
	require.NoError(t, err)
	assert.Equal(t, result{"A red bicycle.", nil}, <-done)
	_, err = c.Do(t.Context(), control.Command{Op: control.OpToolResult, Call: call.ID, Result: "again"})
	assert.ErrorContains(t, err, `no tool call "call-1" is waiting for an answer`)

	ctx, cancel := context.WithCancel(t.Context())
	done = callTool(ctx)
	call = <-c.ToolCalls()
	cancel() // the user interrupts the reply
	assert.ErrorIs(t, (<-done).err, context.Canceled)
	assert.Equal(t, control.ToolCall{ID: call.ID, Name: "take_photo", Cancelled: true}, <-c.ToolCalls())

	_, err = c.Do(t.Context(), control.Command{Op: control.OpTools})
	require.NoError(t, err)
	assert.Equal(t, []llm.ToolSpec{builtinTool{}.Spec()}, reg.Specs(), "withdrawn")

	_, err = c.Do(t.Context(), control.Command{Op: control.OpTools, Tools: []control.ToolDecl{{Name: "take_photo", Description: "Takes a photo."}}})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	// The server sees the client gone a moment after it hangs up; until
	// then a call goes to it, unanswered, and is given up on.
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		_, err := reg.Call(ctx, "take_photo", nil)
		return errors.Is(err, control.ErrNoClient)
	}, 5*time.Second, time.Millisecond, "with no client, a call fails at once")
}

func TestAHostToolCallTheHostDoesNotAnswerTimesOut(t *testing.T) {
	reg := &tools.Registry{}
	path, _ := hostAgent(t, reg, 50*time.Millisecond)
	c, err := control.Dial(t.Context(), path)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(t.Context(), control.Command{Op: control.OpTools, Tools: []control.ToolDecl{{Name: "battery_level", Description: "The battery, in percent."}}})
	require.NoError(t, err)
	_, err = reg.Call(t.Context(), "battery_level", nil)
	assert.EqualError(t, err, "the host did not answer tool battery_level within 50ms")
	call := <-c.ToolCalls()
	assert.Equal(t, control.ToolCall{ID: call.ID, Name: "battery_level", Cancelled: true}, <-c.ToolCalls(), "the host is told to drop it")
	_, err = c.Do(t.Context(), control.Command{Op: control.OpToolResult, Call: call.ID, Result: "82%"})
	assert.ErrorContains(t, err, "is waiting for an answer: it was answered already, cancelled or timed out")
}

func TestASessionWithoutToolsRefusesTheToolCommands(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	_, _, closeControl, err := serveControl(control.Config{Socket: path}, nil, func(event.Event) {}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, closeControl()) }()
	c, err := control.Dial(t.Context(), path)
	require.NoError(t, err)
	defer c.Close()
	for _, cmd := range []control.Command{
		{Op: control.OpTools, Tools: []control.ToolDecl{{Name: "take_photo", Description: "d"}}},
		{Op: control.OpTools},
		{Op: control.OpToolResult, Call: "call-1", Result: "x"},
	} {
		_, err := c.Do(t.Context(), cmd)
		assert.EqualError(t, err, "this session has no tools on", "%s", cmd.Op)
	}
	_, err = c.Do(t.Context(), control.Command{Op: control.OpStatus})
	assert.NoError(t, err)
}
