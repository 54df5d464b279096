package pipeline

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// Speculation: the reply to a turn starts at the user's first pause, from
// the transcript so far, while the endpointing policy is still deciding
// whether the turn is over. Everything it produces is held back: its events
// until the turn is committed, its audio at a gate in front of the player.
// If the turn is committed with the transcript it answered, the reply goes
// on as the turn's response, already some way in (a hit). If the user goes
// on, or the transcript changes, it is cancelled (a miss): nothing of it was
// played or shown, it never entered the history, and a generator that rolls
// back (RollsBack) leaves no trace of it for the next reply.

// Rollbacker is implemented by generators that can say whether a cancelled
// generation leaves their state as if it had never run (an engine with a
// KV cache rolls it back to the conversation the next call shares). The
// pipeline speculates only with such a generator.
type Rollbacker interface {
	RollsBack() bool
}

func rollsBack(g Generator) bool {
	r, ok := g.(Rollbacker)
	return ok && r.RollsBack()
}

// answers reports whether a reply to the transcript spoken answers the
// final one: a recognizer may close its final transcript with punctuation
// its partials lack (X-ASR ends it with a full stop, and says a question
// mark only once the next words come), which changes nothing the reply
// was given.
func answers(spoken, final string) bool {
	trim := func(s string) string {
		return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })
	}
	return trim(spoken) == trim(final)
}

// Reasons for a miss.
const (
	missSpeechResumed = "speech_resumed"
	missTranscript    = "transcript_changed"
	missSessionEnd    = "session_end"
	missFailed        = "failed"
)

// speculate starts, keeps or drops the speculative reply after a capture
// frame of the open turn t, given whether the VAD hears a pause.
func (p *Pipeline) speculate(t *userTurn, pausing bool) {
	if s := p.spec; s != nil {
		switch {
		case !answers(s.transcript, t.transcript()):
			p.dropSpeculation(missTranscript)
		case t.speaking && !pausing:
			p.dropSpeculation(missSpeechResumed)
		default:
			return
		}
	}
	quiet := pausing || !t.speaking
	text := t.transcript()
	if !p.speculates || !quiet || t.over || p.resp != nil || text == "" {
		return
	}
	at := p.now()
	r := p.startResponse(TurnMetrics{}, p.cfg.History.WithUser(text), p.turnNo+1, text)
	p.spec = r
	p.emit(Event{Type: EvSpeculationStart, At: at, Text: r.transcript})
}

// dropSpeculation cancels the speculative reply: a miss.
func (p *Pipeline) dropSpeculation(reason string) {
	s := p.spec
	p.spec = nil
	s.cancel()
	if !s.ended {
		p.stopping++
	}
	e := Event{Type: EvSpeculationMiss, At: p.clk.Now(), Text: s.transcript, Reason: reason}
	if reason == missFailed {
		s.mu.Lock()
		e.Err = s.err.Error()
		s.mu.Unlock()
	}
	p.emit(e)
}

// adoptSpeculation makes the speculative reply the response to the turn
// just committed with the transcript it answered: a hit. Its held events
// go out now, and its audio may play.
func (p *Pipeline) adoptSpeculation(m TurnMetrics) {
	r := p.spec
	p.spec = nil
	p.resp = r
	p.emit(Event{Type: EvSpeculationHit, At: m.ASRFinal, Turn: r.turn, Text: r.transcript})
	r.mu.Lock()
	r.metrics.SpeechEnd, r.metrics.Commit, r.metrics.ASRFinal = m.SpeechEnd, m.Commit, m.ASRFinal
	r.metrics.Speculated = true
	r.metrics.Compute = m.Compute
	r.committed = m.Commit
	held := r.held
	r.held, r.speculative = nil, false
	// Under r.mu, so that the response's own events cannot overtake the
	// ones it held back. They are published now, and stamped so, to keep
	// the stream in time order (the turn's metrics keep when the first
	// token and audio came).
	for _, e := range held {
		e.At = max(e.At, m.ASRFinal)
		p.emit(e)
	}
	r.mu.Unlock()
	r.openGate()
	if r.ended {
		// It finished while waiting (a reply without audio).
		p.responseEnded(r)
	}
}

// respond publishes an event of response r, or holds it back while r is
// speculative.
func (p *Pipeline) respond(r *response, e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.speculative {
		r.held = append(r.held, e)
		return
	}
	p.emit(e)
}

// awaitCommit blocks a speculative response's audio until its turn is
// committed (or it is cancelled), sleeping on the clock meanwhile so a
// replay's time goes on.
func (p *Pipeline) awaitCommit(ctx context.Context, r *response) error {
	if r.gate == nil {
		return ctx.Err()
	}
	if r.gate.Err() == nil {
		_ = p.clk.Sleep(r.gate, gateWait)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// With compute on the clock the commit is decided once the listening
	// path has caught up: nothing plays before then either.
	r.mu.Lock()
	committed := r.committed
	r.mu.Unlock()
	return p.catchUp(ctx, committed)
}

// gateWait bounds a wait at the gate; the fallback silence commits or
// drops every speculation long before.
const gateWait = time.Hour
