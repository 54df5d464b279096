package main

import (
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/control"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
)

// fakeAgent is a control socket whose handler keeps the commands and
// refuses a say of "fail".
type fakeAgent struct {
	path string
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
	return f
}

func (f *fakeAgent) last() control.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[len(f.got)-1]
}

func TestCtlRoundTrip(t *testing.T) {
	agent := newFakeAgent(t)
	for _, tc := range []struct {
		args []string
		want control.Command
		out  string
	}{
		{[]string{"talk", "start"}, control.Command{Op: control.OpTalkStart}, ""},
		{[]string{"say", "Your", "meeting", "starts", "now."}, control.Command{Op: control.OpSay, Text: "Your meeting starts now."}, ""},
		{[]string{"say", "会议现在开始。"}, control.Command{Op: control.OpSay, Text: "会议现在开始。"}, ""},
		{[]string{"status"}, control.Command{Op: control.OpStatus}, `{"state":"listening"}` + "\n"},
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
	onEvent, cmds, closeControl, err := serveControl(control.Config{Socket: path}, func(e event.Event) { printed = append(printed, e) }, slog.New(slog.DiscardHandler))
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
