package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/voiceassistant/voice/control"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
)

// hostCommands is the control socket's Handler in `run`: it hands the
// commands to the session as pipeline commands, waiting until the session
// has acted, and answers status from the last state event.
type hostCommands struct {
	cmds  chan pipeline.Command
	mu    sync.Mutex
	state event.State
}

func newHostCommands() *hostCommands {
	return &hostCommands{cmds: make(chan pipeline.Command), state: "starting"}
}

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

// seen keeps the state an event gives.
func (h *hostCommands) seen(e event.Event) {
	if e.Type == event.EvState {
		h.mu.Lock()
		h.state = e.State
		h.mu.Unlock()
	}
}

// serveControl serves the control socket that cfg names, if any: it
// returns what to do with each event (print, and send to every client),
// the commands for the session, and close. Without a socket it is print
// alone.
func serveControl(cfg control.Config, print func(event.Event), log *slog.Logger) (onEvent func(event.Event), cmds <-chan pipeline.Command, close func() error, err error) {
	if cfg.Socket == "" {
		return print, nil, func() error { return nil }, nil
	}
	h := newHostCommands()
	srv, err := control.Listen(cfg.Socket, h, control.Options{Group: cfg.Group})
	if err != nil {
		return nil, nil, nil, err
	}
	log.Info("control socket", "path", cfg.Socket)
	onEvent = func(e event.Event) {
		print(e)
		h.seen(e)
		if err := srv.Broadcast(e); err != nil {
			log.Warn("control socket: an event was not sent", "type", e.Type, "error", err)
		}
	}
	return onEvent, h.cmds, srv.Close, nil
}
