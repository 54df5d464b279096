package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"sync"

	"github.com/voiceassistant/voice/pipeline"
)

// eventPrinter shows events: JSON lines on stdout with --json, otherwise
// the conversation and milestones through the logger.
type eventPrinter struct {
	mu   sync.Mutex
	json *json.Encoder
	log  *slog.Logger
}

func newEventPrinter(asJSON bool, stdout io.Writer, log *slog.Logger) *eventPrinter {
	p := &eventPrinter{log: log}
	if asJSON {
		p.json = json.NewEncoder(stdout)
	}
	return p
}

func (p *eventPrinter) print(e pipeline.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json != nil {
		_ = p.json.Encode(e)
		return
	}
	at := slog.Duration("at", e.At)
	switch e.Type {
	case pipeline.EvTurnCommit:
		p.log.Info("user", at, "turn", e.Turn, "text", e.Text)
	case pipeline.EvLLMDone:
		p.log.Info("assistant", at, "turn", e.Turn, "text", e.Text)
	case pipeline.EvBargeIn:
		p.log.Info("barge-in", at, "turn", e.Turn, "heard", e.Text)
	case pipeline.EvBargeInPending:
		p.log.Info("paused for the user", at, "turn", e.Turn)
	case pipeline.EvBargeInResumed:
		p.log.Info("resumed: not an interruption", at, "turn", e.Turn, "heard", e.Text)
	case pipeline.EvTurnMetrics:
		m := e.Metrics
		p.log.Info("latency", "turn", e.Turn, "end_to_end_ms", m.EndToEndMS, "endpointing_ms", m.EndpointingMS,
			"first_token_ms", m.FirstTokenMS, "first_audio_ms", m.FirstAudioMS, "interrupted", m.Interrupted)
	case pipeline.EvError:
		p.log.Error("pipeline", at, "error", e.Err)
	case pipeline.EvState:
		p.log.Debug("state", at, "state", e.State)
	default:
		p.log.Debug(string(e.Type), at, "text", e.Text)
	}
}
