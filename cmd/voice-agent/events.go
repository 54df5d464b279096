package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/voiceassistant/voice/pipeline/event"
)

// eventPrinter shows events: JSON lines on stdout with --json, otherwise
// the conversation and milestones through the logger; and JSON lines to
// any event files.
type eventPrinter struct {
	json *jsonLines   // stdout, with --json
	outs []*jsonLines // stdout with --json, and the event files
	log  *slog.Logger
}

func newEventPrinter(asJSON bool, stdout io.Writer, log *slog.Logger) *eventPrinter {
	p := &eventPrinter{log: log}
	if asJSON {
		p.json = newJSONLines(stdout, "stdout")
		p.outs = append(p.outs, p.json)
	}
	return p
}

// logTo also writes every event to a new file at path; close ends it,
// reporting a failed write or close. Call it before watch.
func (p *eventPrinter) logTo(path string) (close func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("events: %w", err)
	}
	p.outs = append(p.outs, newJSONLines(f, path))
	return f.Close, nil
}

// watch is ctx, cancelled with the error as its cause when an event cannot
// be written: the run stops rather than go on with a stream that has lost
// events, which whoever reads it could not tell from a quiet session.
func (p *eventPrinter) watch(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, o := range p.outs {
		o.watch(cancel)
	}
	return ctx, func() { cancel(nil) }
}

// Err is the first failed write to each output, or nil.
func (p *eventPrinter) Err() error {
	var errs []error
	for _, o := range p.outs {
		errs = append(errs, o.Err())
	}
	return errors.Join(errs...)
}

func (p *eventPrinter) print(e event.Event) {
	for _, o := range p.outs {
		o.write(e)
	}
	if p.json != nil {
		return
	}
	at := slog.Duration("at", e.At)
	switch e.Type {
	case event.EvTurnCommit:
		p.log.Info("user", at, "turn", e.Turn, "text", e.Text)
	case event.EvLLMDone:
		// Logged when the reply's text is complete, which is after its
		// audio started: the key says so, lest it pass for the reply's start.
		p.log.Info("assistant", slog.Duration("text_done_at", e.At), "turn", e.Turn, "text", e.Text)
	case event.EvBargeIn:
		p.log.Info("barge-in", at, "turn", e.Turn, "heard", e.Text)
	case event.EvBargeInPending:
		p.log.Info("paused for the user", at, "turn", e.Turn)
	case event.EvBargeInResumed:
		p.log.Info("resumed: not an interruption", at, "turn", e.Turn, "heard", e.Text)
	case event.EvTurnContinued:
		// Said here, at Info, for the reply it drops: the turn's next
		// "user" line has the whole sentence, and no "assistant" line
		// follows for the reply dropped.
		p.log.Info("turn continued: its reply is dropped", at, "turn", e.Turn)
	case event.EvReplyState:
		p.replyState(e)
	case event.EvTurnMetrics:
		// The parts as they fell on the path, which add up to the total:
		// a speculated reply's own first-token and first-audio times
		// overlap the endpointing wait, so a part is what was left of its
		// stage after the one before, and is named path_* so as not to
		// pass for the stage's own figure (first_token_ms in the events).
		m := e.Metrics
		args := []any{"turn", e.Turn, "end_to_end_ms", m.EndToEndMS}
		for _, part := range m.Path.Parts() { // nil Path: no parts
			args = append(args, "path_"+part.Name+"_ms", part.MS)
		}
		p.log.Info("latency", append(args, "speculated", m.Speculated, "interrupted", m.Interrupted)...)
	case event.EvToolCall:
		p.log.Info("tool call", at, "turn", e.Turn, "tool", e.Tool.Name, "arguments", string(e.Tool.Arguments))
	case event.EvToolResult:
		p.log.Info("tool result", at, "turn", e.Turn, "tool", e.Tool.Name, "ms", e.Tool.MS, "result", e.Tool.Result)
	case event.EvToolError:
		p.log.Warn("tool failed", at, "turn", e.Turn, "error", e.Err)
	case event.EvError:
		p.log.Error("pipeline", at, "error", e.Err)
	case event.EvState:
		p.log.Debug("state", at, "state", e.State)
	default:
		p.log.Debug(string(e.Type), at, "text", e.Text)
	}
}

// replyState logs a reply's move at Debug: the lines at Info say what a
// reader needs of it (a commit, a barge-in and what was heard, a
// continuation, the reply's text), and a speculation dropped unseen is no
// news. Its text is left out: a dropped reply's was never heard.
func (p *eventPrinter) replyState(e event.Event) {
	args := []any{slog.Duration("at", e.At), "turn", e.Turn, "state", e.Reply}
	if e.Reason != "" {
		args = append(args, "reason", e.Reason)
	}
	p.log.Debug("reply", args...)
}

// jsonLines writes events as JSON lines to one output. The first failed
// write is kept (and stops the run it watches); later events are dropped,
// since a stream with a hole in it is no record.
type jsonLines struct {
	mu   sync.Mutex
	enc  *json.Encoder
	name string
	err  error
	stop context.CancelCauseFunc
}

func newJSONLines(w io.Writer, name string) *jsonLines {
	return &jsonLines{enc: json.NewEncoder(w), name: name}
}

// watch has stop called with the first failed write.
func (l *jsonLines) watch(stop context.CancelCauseFunc) {
	l.mu.Lock()
	l.stop = stop
	failed := l.err
	l.mu.Unlock()
	if failed != nil {
		stop(failed)
	}
}

func (l *jsonLines) write(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if err := l.enc.Encode(e); err != nil {
		l.err = fmt.Errorf("events: writing to %s: %w; the events from %v on are lost", l.name, err, e.At)
		if l.stop != nil {
			l.stop(l.err)
		}
	}
}

// Err is the first failed write, or nil.
func (l *jsonLines) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
