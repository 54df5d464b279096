package pipeline

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

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
	cancel context.CancelFunc
	done   chan struct{}
	// latest holds the newest conversation to prefill, replacing one the
	// worker has not taken.
	latest chan aheadConv
	// busy is set while the worker prefills.
	busy *atomic.Bool
}

// aheadConv is a conversation for the worker; held says it holds the
// clock until the worker takes it.
type aheadConv struct {
	conv []llm.Message
	held bool
}

func noPrefillAhead() prefillAhead {
	done := make(chan struct{})
	close(done)
	return prefillAhead{cancel: func() {}, done: done}
}

// remember puts the reply as the user heard it into the history, and,
// unless the user is speaking, prefills the conversation's next prompt
// while the assistant is idle.
func (p *Pipeline) remember(text string, interrupted bool) {
	if dropped := p.cfg.History.AddAssistant(text, interrupted); dropped > 0 {
		slog.Info("history trimmed after the reply; its new start is prefilled while the assistant is idle", "dropped_messages", dropped)
	}
	if t := p.turn; t == nil || !t.speaking {
		p.prefillNext(p.cfg.History.Messages())
	}
}

// prefillNext hands conv to the prefill worker, starting one if none is
// running.
func (p *Pipeline) prefillNext(conv []llm.Message) {
	pf, ok := p.cfg.LLM.(Prefiller)
	if !ok {
		return
	}
	if p.ahead.latest == nil {
		ctx, cancel := context.WithCancel(p.ctx)
		previous, done := p.ahead.done, make(chan struct{})
		p.ahead = prefillAhead{cancel: cancel, done: done, latest: make(chan aheadConv, 1), busy: new(atomic.Bool)}
		go p.prefillWorker(ctx, pf, p.ahead, previous)
	}
	// A conversation handed to a waiting worker holds the clock until the
	// worker takes it, so that a replay hands it over as a live session
	// would, before the audio goes on; the prefill itself runs beside the
	// clock, and one handed to a busy worker waits beside it too. (The
	// worker is marked busy before it gives back the hold of what it
	// took, so it is seen busy from then on.)
	next := aheadConv{conv: conv}
	select {
	case old := <-p.ahead.latest: // not taken yet: conv replaces it, and takes its hold
		next.held = old.held
	default:
		if !p.ahead.busy.Load() {
			p.clk.Hold()
			next.held = true
		}
	}
	p.ahead.latest <- next
}

func (p *Pipeline) prefillWorker(ctx context.Context, pf Prefiller, ahead prefillAhead, previous <-chan struct{}) {
	defer close(ahead.done)
	<-previous // one at a time, and the session's end waits for the last only
	release := func(c aheadConv) {
		if c.held {
			p.clk.Release()
		}
	}
	for {
		select {
		case <-ctx.Done():
			select {
			case c := <-ahead.latest:
				release(c)
			default:
			}
			return
		case c := <-ahead.latest:
			ahead.busy.Store(true)
			release(c)
			conv := c.conv
			start := time.Now()
			st, err := pf.Prefill(ctx, conv)
			switch {
			case err == nil:
				slog.Debug("prefilled the next prompt's start while idle", "tokens", st.PromptTokens, "cached", st.CachedTokens, "took", time.Since(start))
			case ctx.Err() == nil:
				// The next reply prefills what this did not.
				slog.Warn("prefill while idle failed", "err", err)
			}
			ahead.busy.Store(false)
		}
	}
}

// stopPrefillAhead cancels the prefill worker; wait waits for it to end.
func (p *Pipeline) stopPrefillAhead(wait bool) {
	p.ahead.cancel()
	p.ahead.latest = nil
	if wait {
		<-p.ahead.done
	}
}
