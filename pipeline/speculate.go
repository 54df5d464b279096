package pipeline

import (
	"context"
	"strings"
	"unicode"

	"github.com/voiceassistant/voice/pipeline/reply"
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

// missAfterFrame is why the speculative reply r no longer answers the
// open turn after a capture frame ("" if it still does): transcript is
// what a reply started now would answer.
func missAfterFrame(r *reply.Reply, transcript string, speaking, pausing bool) string {
	switch {
	case !answers(r.Transcript(), transcript):
		return reply.MissTranscript
	case speaking && !pausing:
		return reply.MissSpeechResumed
	}
	return ""
}

// missAtCommit is why the speculative reply r cannot be the committed
// turn's response, whose final transcript is final ("" if it can).
func missAtCommit(r *reply.Reply, final string) string {
	switch {
	case !answers(r.Transcript(), final):
		return reply.MissTranscript
	case r.Failed():
		return reply.MissFailed
	}
	return ""
}

// speculate starts, keeps or drops the speculative reply after a capture
// frame of the open turn, given whether the VAD hears a pause.
func (p *Pipeline) speculate(ctx context.Context, pausing bool) {
	l := p.listen
	words, text := l.Words()
	if p.spec != nil {
		if reason := missAfterFrame(p.spec, text, l.Speaking(), pausing); reason != "" {
			p.spec.Drop(reason)
			p.spec = nil
		}
	}
	quiet := pausing || !l.Speaking()
	// No reply is going on (speech over one waits for the barge-in
	// decision, which needs a reply to decide about).
	if !p.speculates || p.spec != nil || !quiet || p.resp != nil || words == "" {
		return
	}
	p.ahead.stop(false)
	at := l.Now()
	p.spec = reply.Speculate(ctx, &p.replies, l.NextTurn(), p.cfg.History.WithUser(text), text, at)
	p.events.Emit(Event{Type: EvSpeculationStart, At: at, Text: text})
}
