package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/voiceassistant/voice/control"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/tools"
)

// hostCommands is the control socket's Handler in `run`: it hands the
// commands to the session as pipeline commands, waiting until the session
// has acted, answers status from the last state event, and hands the
// host's tools and its answers to their calls to host.
type hostCommands struct {
	cmds chan pipeline.Command
	// host is the session's host tools, nil where it has no tools on.
	host  *tools.HostTools
	mu    sync.Mutex
	state event.State
}

func newHostCommands(host *tools.HostTools) *hostCommands {
	return &hostCommands{cmds: make(chan pipeline.Command), host: host, state: "starting"}
}

// errNoTools answers the tool commands of a session without tools.
var errNoTools = errors.New("this session has no tools on")

// status is status's answer.
type status struct {
	State event.State `json:"state"`
}

func (h *hostCommands) Handle(ctx context.Context, c control.Command) (any, error) {
	if c.Op == control.OpStatus {
		h.mu.Lock()
		defer h.mu.Unlock()
		return status{State: h.state}, nil
	}
	if c.Op == control.OpTools || c.Op == control.OpToolResult {
		return nil, h.tools(c)
	}
	// control's ops are named as the pipeline's (TestControlOpsArePipelineOps).
	done := make(chan error, 1)
	select {
	case h.cmds <- pipeline.Command{Op: pipeline.Op(c.Op), Text: c.Text, Done: done}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case err := <-done:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// tools declares the host's tools, or answers one of their calls.
func (h *hostCommands) tools(c control.Command) error {
	if h.host == nil {
		return errNoTools
	}
	if c.Op == control.OpToolResult {
		return h.host.Answer(c.Call, c.Result, c.ToolError)
	}
	if len(c.Tools) == 0 {
		h.host.Withdraw()
		return nil
	}
	specs := make([]llm.ToolSpec, len(c.Tools))
	for i, d := range c.Tools {
		specs[i] = llm.ToolSpec(d) // control's ToolDecl has ToolSpec's fields
	}
	return h.host.Declare(specs)
}

// seen keeps the state an event gives.
func (h *hostCommands) seen(e event.Event) {
	if e.Type == event.EvState {
		h.mu.Lock()
		h.state = e.State
		h.mu.Unlock()
	}
}

// hostToolsFunc makes the session's host tools (tools.NewHostTools, with
// the session's registry and timeout), whose calls go to the control
// socket's clients through send.
type hostToolsFunc func(send func(tools.HostCall) error) *tools.HostTools

// serveControl serves the control socket that cfg names, if any: it
// returns what to do with each event (print, and send to every client),
// the commands for the session, and close. Without a socket it is print
// alone. With newHostTools, the socket's clients declare the host's tools
// and answer their calls; without, those commands are refused.
func serveControl(cfg control.Config, newHostTools hostToolsFunc, print func(event.Event), log *slog.Logger) (onEvent func(event.Event), cmds <-chan pipeline.Command, close func() error, err error) {
	if cfg.Socket == "" {
		return print, nil, func() error { return nil }, nil
	}
	// The host tools send through the server, which hands its requests to
	// a handler that holds the host tools: the server is set once it
	// listens, and a call before that (none can be: no client has declared
	// a tool yet) finds no client to answer it.
	var srv atomic.Pointer[control.Server]
	var host *tools.HostTools
	if newHostTools != nil {
		host = newHostTools(func(c tools.HostCall) error {
			s := srv.Load()
			if s == nil {
				return control.ErrNoClient
			}
			return s.SendToolCall(control.ToolCall(c)) // control's ToolCall has HostCall's fields
		})
	}
	h := newHostCommands(host)
	s, err := control.Listen(cfg.Socket, h, control.Options{Group: cfg.Group})
	if err != nil {
		return nil, nil, nil, err
	}
	srv.Store(s)
	log.Info("control socket", "path", cfg.Socket)
	onEvent = func(e event.Event) {
		print(e)
		h.seen(e)
		if err := s.Broadcast(e); err != nil {
			log.Warn("control socket: an event was not sent", "type", e.Type, "error", err)
		}
	}
	return onEvent, h.cmds, s.Close, nil
}
