package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/voiceassistant/voice/internal/sdnotify"
)

// service tells systemd how `run` goes when it runs as a Type=notify
// service (docs/arm64.md): that it is loading, that it is ready once the
// models are loaded and the microphone is open, the pipeline loop's pets
// for the watchdog, and that it is stopping. Outside systemd
// ($NOTIFY_SOCKET unset) it sends nothing.
type service struct {
	n   *sdnotify.Notifier
	log *slog.Logger

	mu      sync.Mutex // a signal calls stopping on a goroutine of its own
	stopped bool
	// endWatch ends the watchdog's goroutine and waits for it; nil
	// while none runs.
	endWatch func()
}

func newService(log *slog.Logger) (*service, error) {
	n, err := sdnotify.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("systemd's environment: %w", err)
	}
	s := &service{n: n, log: log}
	s.send(sdnotify.Status("loading models"))
	return s, nil
}

// send reports a failure but goes on: the session itself is not at
// fault, and a watchdog that hears nothing restarts it anyway.
func (s *service) send(states ...string) {
	if err := s.n.Notify(states...); err != nil {
		s.log.Warn("systemd was not told the service's state", "err", err)
	}
}

// alive is pipeline.Config.Alive.
func (s *service) alive() { s.n.Alive() }

// listening says the agent is ready and starts petting the watchdog, at
// half its timeout as systemd advises, for as long as the pipeline's loop
// goes round; ctx's end, or stopping, ends it. A session stopping
// already is not ready.
func (s *service) listening(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.send(sdnotify.Ready, sdnotify.Status("listening"))
	timeout := s.n.WatchdogTimeout()
	if timeout == 0 {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(timeout / 2)
		defer tick.Stop()
		if err := s.n.Watch(ctx, tick.C); err != nil {
			s.log.Warn("systemd's watchdog is no longer petted: it will restart the service", "err", err)
		}
	}()
	s.endWatch = func() { cancel(); <-done }
}

// stopping says so, once, as soon as the session ends: what follows
// (closing the models) is not the hang the watchdog looks for, and
// systemd stops watching a service that says it is stopping. A second
// call waits for the first to finish.
func (s *service) stopping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.stopped = true
	if s.endWatch != nil {
		s.endWatch()
	}
	s.send(sdnotify.Stopping)
}
