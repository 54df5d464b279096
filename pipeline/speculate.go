package pipeline

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
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

// speculation is the pipeline's speculative reply: whether there is one,
// and the one list of reasons it is dropped. Its states and transitions
// are docs/ARCHITECTURE.md's speculation table:
//
//	idle, adopted, dropped ─start→ running ─adopt→ adopted
//	                                       ─drop→ dropped
type speculation struct {
	enabled bool // Config.Speculate, with a generator that rolls back
	state   specState
	r       *response // while running
	machine machine[specState]
}

type specState int

const (
	specIdle specState = iota
	specRunning
	specAdopted
	specDropped
)

var specStateNames = [...]string{"idle", "running", "adopted", "dropped"}

func (s specState) String() string { return specStateNames[s] }

var specTransitions = map[specState][]specState{
	specIdle:    {specRunning},
	specRunning: {specAdopted, specDropped},
	specAdopted: {specRunning},
	specDropped: {specRunning},
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

// Reasons for a miss: every way a speculation is dropped.
const (
	// missSpeechResumed: the user went on speaking after the pause.
	missSpeechResumed = "speech_resumed"
	// missTranscript: the transcript the reply answers changed (a later
	// partial, the early final, the final at the commit).
	missTranscript = "transcript_changed"
	// missFailed: the reply failed before its turn was committed; the
	// turn's own response may yet succeed.
	missFailed = "failed"
	// missSessionEnd: the session ended first.
	missSessionEnd = "session_end"
)

// running is the speculative reply, or nil.
func (s *speculation) running() *response {
	if s.state != specRunning {
		return nil
	}
	return s.r
}

func (s *speculation) start(r *response) {
	if s.machine.move(&s.state, specRunning) {
		s.r = r
	}
}

// end moves to adopted or dropped and returns the reply.
func (s *speculation) end(to specState) *response {
	r := s.r
	if s.machine.move(&s.state, to) {
		s.r = nil
	}
	return r
}

// missAfterFrame is why the running reply no longer answers the open turn
// after a capture frame ("" if it still does): transcript is what a reply
// started now would answer.
func (s *speculation) missAfterFrame(transcript string, speaking, pausing bool) string {
	switch r := s.running(); {
	case r == nil:
		return ""
	case !answers(r.transcript, transcript):
		return missTranscript
	case speaking && !pausing:
		return missSpeechResumed
	}
	return ""
}

// missAtCommit is why the running reply cannot be the committed turn's
// response, whose final transcript is final ("" if it can).
func (s *speculation) missAtCommit(final string) string {
	switch r := s.running(); {
	case r == nil:
		return ""
	case !answers(r.transcript, final):
		return missTranscript
	case r.failed():
		return missFailed
	}
	return ""
}

// speculate starts, keeps or drops the speculative reply after a capture
// frame of the open turn t, given whether the VAD hears a pause.
func (p *Pipeline) speculate(t *userTurn, pausing bool) {
	words := t.transcript()
	text := t.sentence(words)
	if reason := p.spec.missAfterFrame(text, t.speaking, pausing); reason != "" {
		p.dropSpeculation(reason)
	}
	quiet := pausing || !t.speaking
	if !p.spec.enabled || p.spec.running() != nil || !quiet || p.barge.pending() || p.resp != nil || words == "" {
		return
	}
	at := p.now()
	r := p.startResponse(TurnMetrics{}, p.cfg.History.WithUser(text), p.turnNo+1, text)
	p.spec.start(r)
	p.emit(Event{Type: EvSpeculationStart, At: at, Text: r.transcript})
}

// dropSpeculation cancels the speculative reply: a miss.
func (p *Pipeline) dropSpeculation(reason string) {
	s := p.spec.end(specDropped)
	s.cast(roleDropped)
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
	r := p.spec.end(specAdopted)
	p.resp = r
	p.emit(Event{Type: EvSpeculationHit, At: m.ASRFinal, Turn: r.turn, Text: r.transcript})
	r.mu.Lock()
	r.metrics.SpeechEnd, r.metrics.Commit, r.metrics.ASRFinal = m.SpeechEnd, m.Commit, m.ASRFinal
	r.metrics.Speculated = true
	r.metrics.Compute = m.Compute
	r.committed = m.Commit
	held := r.held
	r.held, r.role = nil, roleCurrent
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
	switch r.role {
	case roleSpeculative:
		r.held = append(r.held, e)
	case roleDropped:
		// A miss: nothing of it is published.
	default:
		p.emit(e)
	}
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
