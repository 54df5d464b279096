package pipeline

import (
	"strings"
	"unicode"
	"unicode/utf8"

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

// JoinWords joins two stretches of one sentence (a turn and the words
// that continue it): with a space, unless the join falls next to a script
// written without spaces (Chinese).
func JoinWords(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	last, _ := utf8.DecodeLastRuneInString(a)
	first, _ := utf8.DecodeRuneInString(b)
	if unspaced(last) || unspaced(first) {
		return a + b
	}
	return a + " " + b
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
func (p *Pipeline) speculate(pausing bool) {
	l := &p.listen
	words := l.turn.transcript()
	text := l.turn.sentence(words)
	if p.spec != nil {
		if reason := missAfterFrame(p.spec, text, l.speaking(), pausing); reason != "" {
			p.dropSpeculation(reason)
		}
	}
	quiet := pausing || !l.speaking()
	// No reply is going on (speech over one waits for the barge-in
	// decision, which needs a reply to decide about).
	if !p.speculates || p.spec != nil || !quiet || p.resp != nil || words == "" {
		return
	}
	p.stopPrefillAhead(false)
	at := l.now()
	p.spec = reply.Speculate(p.ctx, &p.replies, p.turnNo+1, p.cfg.History.WithUser(text), text, at)
	p.emit(Event{Type: EvSpeculationStart, At: at, Text: text})
}

// dropSpeculation cancels the speculative reply: a miss.
func (p *Pipeline) dropSpeculation(reason string) {
	r := p.spec
	p.spec = nil
	r.Drop(reason)
	if !r.Ended() {
		p.stopping++
	}
}

// adoptSpeculation makes the speculative reply the response to the turn
// just committed with the transcript it answered: a hit.
func (p *Pipeline) adoptSpeculation(m TurnMetrics) {
	r := p.spec
	p.spec, p.resp = nil, r
	r.Adopt(m)
	if r.Ended() {
		// It finished while waiting (a reply without audio).
		p.replyGone(r)
	}
}
