package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
)

// Prefiller is implemented by generators that can run into their cache,
// while the assistant is idle, what the next reply's prompt starts with:
// the conversation up to the user's next words, or up to the end of its
// last user message, which the next prompt may extend
// (mnn.Model.Prefill). A reply then prefills only the end of the user's
// turn, even after the history was trimmed or where the template renders
// past replies otherwise than the one it generated into.
type Prefiller interface {
	Prefill(ctx context.Context, conv []llm.Message) (llm.Stats, error)
}

// prefillAhead prefills the conversation's next prompt while the
// assistant is idle: after a reply, until the user speaks. The listening
// path then has the cores (on two, a prefill beside the recognizer
// doubled its p95 in the replayed conversation), and a speculative reply
// prefills the user's words at their first pause. The user's speech, the
// next response (the engine is the reply's again within one of its
// batches) and the session's end cancel it, and what it ran stays
// cached; the session's end waits for it.
type prefillAhead struct {
	pf     Prefiller // nil: the generator cannot
	clk    clock.Clock
	cancel context.CancelFunc
	done   chan struct{}
}

func newPrefillAhead(g Generator, clk clock.Clock) *prefillAhead {
	pf, _ := g.(Prefiller)
	done := make(chan struct{})
	close(done)
	return &prefillAhead{pf: pf, clk: clk, cancel: func() {}, done: done}
}

// remember puts the reply into the history, its tool rounds whole and its
// words as the user heard them, and, unless a user turn is open (speech,
// or the pause the endpointing and the final transcript work through),
// prefills the conversation's next prompt while the assistant is idle.
// With a turn open no idle spell follows, so the history is trimmed only
// past its whole budget (llm.History.AddAssistantBusy).
func (p *Pipeline) remember(ctx context.Context, rounds []llm.Message, text string, interrupted bool) {
	p.cfg.History.AddToolRounds(rounds)
	if p.listen.Open() {
		if dropped := p.cfg.History.AddAssistantBusy(text, interrupted); dropped > 0 {
			slog.Info("history trimmed past its budget while the user speaks; the next reply prefills its new start", "dropped_messages", dropped)
		}
		return
	}
	if dropped := p.cfg.History.AddAssistant(text, interrupted); dropped > 0 {
		slog.Info("history trimmed after the reply; its new start is prefilled while the assistant is idle", "dropped_messages", dropped)
	}
	p.ahead.start(ctx, p.cfg.History.Messages())
}

// start prefills conv in the background, once the prefill before it has
// ended. It holds the clock until its goroutine runs, so that a replay
// hands conv over as a live session would, before the audio goes on; the
// prefill itself runs beside the clock.
func (a *prefillAhead) start(ctx context.Context, conv []llm.Message) {
	if a.pf == nil {
		return
	}
	a.stop(false)
	ctx, cancel := context.WithCancel(ctx)
	previous, done := a.done, make(chan struct{})
	a.cancel, a.done = cancel, done
	a.clk.Hold()
	go func() {
		defer close(done)
		<-previous // one at a time, and the session's end waits for the last only
		a.clk.Release()
		start := time.Now()
		st, err := a.pf.Prefill(ctx, conv)
		switch {
		case err == nil:
			slog.Debug("prefilled the next prompt's start while idle", "tokens", st.PromptTokens, "cached", st.CachedTokens, "took", time.Since(start))
		case ctx.Err() == nil:
			// The next reply prefills what this did not.
			slog.Warn("prefill while idle failed", "err", err)
		}
	}()
}

// stop cancels the prefill; wait waits for it to end.
func (a *prefillAhead) stop(wait bool) {
	a.cancel()
	if wait {
		<-a.done
	}
}
