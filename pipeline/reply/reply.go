// Package reply is one assistant reply: generation feeding synthesis
// feeding the player, under one context that a barge-in cancels, with
// its lifecycle on the reply itself. A reply is started current (the
// response to a committed turn) or speculative (to a turn not yet
// committed: its events are held and its audio waits at a gate until it
// is adopted), and ends dropped, cancelled or done:
//
//	speculative ─Adopt→ current ─Interrupt→ cancelled
//	            ─Drop→ dropped  ─PlayedOut→ done
//	                            ─Drop→ dropped (the user went on with its turn)
//
// The pipeline decides when; the reply owns what each move does, and
// publishes each (event.EvReplyState), so a front end follows a reply by
// its events alone.
package reply

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/tts/normalize"
)

// State is where a reply is in its life; each move is published as it
// happens (event.EvReplyState).
type State = event.ReplyState

const (
	// Speculative answers a turn not yet committed: its events are held
	// and its audio waits.
	Speculative = event.ReplySpeculative
	// Current is the response to the last committed turn, published and
	// played.
	Current = event.ReplyCurrent
	// Dropped was withdrawn unheard (a speculation miss, a turn the user
	// went on with): it is winding down, and nothing more of it is
	// published.
	Dropped = event.ReplyDropped
	// Cancelled was current and was cut (a barge-in, the session's end):
	// it is winding down, and its end is still published.
	Cancelled = event.ReplyCancelled
	// Done was current and has played out.
	Done = event.ReplyDone
)

// Transitions are a reply's legal moves (docs/ARCHITECTURE.md, a reply's
// table), "" being before it starts; dropped, cancelled and done are
// terminal.
var Transitions = map[State][]State{
	"":          {Speculative, Current},
	Speculative: {Current, Dropped},
	Current:     {Cancelled, Dropped, Done},
}

// Config is what every reply of a session shares, and the replies still
// running.
type Config struct {
	Clock  clock.Clock
	Player *audio.Player
	LLM    Generator
	// NewChunker makes each reply's chunker.
	NewChunker func() Chunker
	// TTS is nil for text-only replies.
	TTS  Synthesizer
	Emit func(event.Event)
	// Report takes an illegal transition, a bug (fsm.Machine).
	Report func(error)
	// Tools, if set, runs the tools the model calls: a reply then reads
	// its tool calls out of what the model writes (never spoken), runs
	// them and generates again with their results (ToolPolicy). Nil: a
	// reply is all speech, as the model wrote it.
	Tools Toolbox
	ToolPolicy
	// Ended receives each reply whose goroutines return while it is
	// speculative or current (the session plays it out), with the clock
	// hold of the last of them, which the receiver releases. A reply cut
	// before, which nobody waits for, releases its own.
	Ended chan<- *Reply

	running sync.WaitGroup
}

// Wait waits until the goroutines of every reply started with c have
// returned: the session's end, once it has cut them.
func (c *Config) Wait() { c.running.Wait() }

// Reply is one assistant turn. Its methods are for the goroutine that
// runs the session, unless they say otherwise.
type Reply struct {
	s       *Config
	gen     Generator // the session's LLM, or an announcement's text
	turn    int
	cancel  context.CancelFunc
	machine fsm.Machine[State]

	mu      sync.Mutex
	state   State // the reply's goroutines read it to hold or publish their events
	metrics event.TurnMetrics
	// reply is what the reply said as the model wrote it, tool calls left
	// out, across its rounds (tools.go).
	reply  strings.Builder
	spoken []spokenChunk
	// rounds are the reply's tool rounds that ran to their end, and
	// roundsSaid the length of reply when the last of them did: what
	// came before is in the rounds' own text.
	rounds     []llm.Message
	roundsSaid int
	// words is the reply's chunker, for its Join and Source, which keep
	// no state (the chunker itself is generation's).
	words   Chunker
	stats   llm.Stats
	compute event.StageCompute // generation and synthesis
	// handed are the stages that have handed over a result: what a stage
	// computed before its first is its part of compute-only latency.
	handed map[event.Stage]bool
	err    error

	// done is closed once the reply's goroutines are gone.
	done chan struct{}
	// announced is set for the host's text (Announce).
	announced bool

	// A speculative reply answers transcript before its turn is
	// committed: until then its events are held and its audio waits for
	// gate, which openGate ends.
	transcript string
	committed  time.Duration // when its turn was committed (under mu)
	held       []event.Event
	gate       context.Context
	openGate   context.CancelFunc

	// lang is the language of the reply's latest words, the
	// conversation's before it has any (the synthesis goroutine's own):
	// it reads what has no words near it.
	lang normalize.Language
}

// Start starts the reply to conv as turn number turn, with the turn's
// metrics so far; m.LLMStart is when, which the listening path may still
// be catching up to (compute.CatchUp).
func Start(ctx context.Context, s *Config, turn int, conv []llm.Message, m event.TurnMetrics) *Reply {
	r := newReply(s, turn, conv, m, Current, m.LLMStart)
	r.run(ctx, conv)
	return r
}

// Announce starts a current reply that says text, as turn number turn of
// the assistant's own (the host's say: a notification), at at: no LLM,
// and no user turn before it. It plays, and is cut, as any reply.
func Announce(ctx context.Context, s *Config, turn int, text string, at time.Duration) *Reply {
	r := newReply(s, turn, nil, event.TurnMetrics{LLMStart: at}, Current, at)
	r.gen, r.announced = announcement(text), true
	r.run(ctx, nil)
	return r
}

// announcement is a generator that says its text, as one piece.
type announcement string

func (a announcement) Generate(ctx context.Context, _ []llm.Message, emit func(string) error) (llm.Stats, error) {
	if err := emit(string(a)); err != nil {
		return llm.Stats{}, err
	}
	return llm.Stats{}, ctx.Err()
}

// Announced says whether the reply says the host's text, answering no
// user turn: it has no latency to report.
func (r *Reply) Announced() bool { return r.announced }

// Speculate starts a speculative reply to transcript (the user's words so
// far, conv's last message), which holds its events and audio back until
// Adopt.
func Speculate(ctx context.Context, s *Config, turn int, conv []llm.Message, transcript string, at time.Duration) *Reply {
	r := newReply(s, turn, conv, event.TurnMetrics{LLMStart: at}, Speculative, at)
	r.transcript = transcript
	r.run(ctx, conv)
	return r
}

func newReply(s *Config, turn int, conv []llm.Message, m event.TurnMetrics, st State, at time.Duration) *Reply {
	r := &Reply{s: s, gen: s.LLM, turn: turn, metrics: m, lang: conversationLanguage(conv), done: make(chan struct{}),
		machine: fsm.New("reply", Transitions, s.Report), handed: map[event.Stage]bool{}}
	r.mu.Lock()
	r.moveLocked(st, event.Event{At: at})
	r.mu.Unlock()
	return r
}

// moveLocked is the one place a reply's state changes, as Transitions
// allows, and publishes the move: e says when, and why (Reason) or what
// was heard (Text). r.mu is held, so that no event of the reply's own
// overtakes it.
func (r *Reply) moveLocked(to State, e event.Event) bool {
	if !r.machine.Move(&r.state, to) {
		return false
	}
	e.Type, e.Turn, e.Reply = event.EvReplyState, r.turn, to
	r.s.Emit(e)
	return true
}

// is says whether the reply is in state s.
func (r *Reply) is(s State) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == s
}

// Turn is the user turn the reply answers.
func (r *Reply) Turn() int { return r.turn }

// Transcript is what a speculative reply answers.
func (r *Reply) Transcript() string { return r.transcript }

// Adopt makes a speculative reply the response to the turn just
// committed with the transcript it answered: a hit. m holds the turn's
// milestones up to its final transcript. The held events go out now, and
// the audio may play.
func (r *Reply) Adopt(m event.TurnMetrics) {
	r.mu.Lock()
	if !r.moveLocked(Current, event.Event{At: m.ASRFinal}) {
		r.mu.Unlock()
		return
	}
	r.s.Emit(event.Event{Type: event.EvSpeculationHit, At: m.ASRFinal, Turn: r.turn, Text: r.transcript})
	r.metrics.SpeechEnd, r.metrics.Commit, r.metrics.ASRFinal = m.SpeechEnd, m.Commit, m.ASRFinal
	r.metrics.Speculated = true
	r.metrics.Compute = m.Compute
	r.committed = m.Commit
	held := r.held
	r.held = nil
	// Under r.mu, so that the reply's own events cannot overtake the ones
	// it held back. They are published now, and stamped so, to keep the
	// stream in time order (the turn's metrics keep when the first token
	// and audio came).
	for _, e := range held {
		e.At = max(e.At, m.ASRFinal)
		r.s.Emit(e)
	}
	r.mu.Unlock()
	r.openGate()
}

// Reasons a reply is dropped: a speculative one missed, or the user went
// on with the turn a current one answered.
const (
	// MissSpeechResumed: the user went on speaking after the pause.
	MissSpeechResumed = "speech_resumed"
	// MissTranscript: the transcript the reply answers changed (a later
	// partial, the early final, the final at the commit).
	MissTranscript = "transcript_changed"
	// MissFailed: the reply failed before its turn was committed; the
	// turn's own response may yet succeed.
	MissFailed = "failed"
	// MissSessionEnd: the session ended first.
	MissSessionEnd = "session_end"
	// DropContinued: the user went on with the turn the current reply
	// answered, before it had been heard for long (listen.Continuation).
	DropContinued = "turn_continued"
)

// Reasons a current reply is cancelled.
const (
	CutBargeIn    = "barge_in"
	CutStopKey    = event.ReasonStopKey
	CutSessionEnd = "session_end"
)

// Drop withdraws a reply unheard, for one of the reasons above: a
// speculative one (a miss, published as such) or a current one at most a
// word of which was played (a continuation), whose audio is flushed.
// Nothing of it is published after. A reply over already stays as it is.
func (r *Reply) Drop(reason string) {
	r.mu.Lock()
	was := r.state
	if (was != Speculative && was != Current) || !r.moveLocked(Dropped, event.Event{At: r.s.Clock.Now(), Reason: reason}) {
		r.mu.Unlock()
		return
	}
	failure := r.err
	r.mu.Unlock()
	r.cancel()
	if was == Current {
		r.s.Player.Flush()
		return
	}
	e := event.Event{Type: event.EvSpeculationMiss, At: r.s.Clock.Now(), Text: r.transcript, Reason: reason}
	if reason == MissFailed {
		e.Err = failure.Error()
	}
	r.s.Emit(e)
}

// Interrupt cuts the current reply for reason: cancelled first so no more
// audio can be queued, then the player flushed so the next device period
// is silent. It returns what the user heard of it, as spoken and as
// written after its tool rounds (Heard, Said); a reply not current is
// left as it is, and heard nothing more.
func (r *Reply) Interrupt(reason string) (spoken, written string) {
	if !r.is(Current) {
		return "", ""
	}
	r.cancel()
	spoken, written = r.Heard(r.s.Player.Flush())
	written = r.afterRounds(written)
	r.mu.Lock()
	r.metrics.Interrupted = true
	r.moveLocked(Cancelled, event.Event{At: r.s.Clock.Now(), Reason: reason, Text: spoken})
	r.mu.Unlock()
	return spoken, written
}

// Done is closed once the reply's goroutines have returned.
func (r *Reply) Done() <-chan struct{} { return r.done }

// ended takes the news that the reply's goroutines have returned, on the
// last of them, which holds the clock: a current or cancelled reply
// publishes its end (and its error, if one ended it), held back while it
// is speculative. A reply the session may yet play out is handed to it
// with the hold; one cut before lets the hold go.
func (r *Reply) ended() {
	r.mu.Lock()
	now := r.s.Clock.Now()
	stats := r.stats
	end := []event.Event{{Type: event.EvLLMDone, At: now, Turn: r.turn, Text: r.reply.String(), Stats: &stats}}
	if err := r.err; err != nil && !errors.Is(err, context.Canceled) {
		end = append([]event.Event{{Type: event.EvError, At: now, Turn: r.turn, Err: err.Error()}}, end...)
	}
	state := r.state
	switch state {
	case Speculative:
		r.held = append(r.held, end...)
	case Current, Cancelled:
		for _, e := range end {
			r.s.Emit(e)
		}
	}
	close(r.done)
	r.mu.Unlock()
	if state == Speculative || state == Current {
		r.s.Ended <- r
	} else {
		r.s.Clock.Release()
	}
	r.s.running.Done()
}

// Failed says whether the reply ended (or is ending) on an error of its
// own, not a cancellation.
func (r *Reply) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err != nil && !errors.Is(r.err, context.Canceled)
}

// PlaybackStart is when the reply's first sample played, 0 until then.
func (r *Reply) PlaybackStart() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics.PlaybackStart
}

// Started publishes playback_start once the reply's first sample has
// played, and says when (true that once).
func (r *Reply) Started() (time.Duration, bool) {
	first, _, hasAudio := r.span()
	if !hasAudio || r.PlaybackStart() > 0 {
		return 0, false
	}
	at, ok := r.s.Player.DeviceTime(first)
	if !ok {
		return 0, false
	}
	r.mu.Lock()
	r.metrics.PlaybackStart = at
	r.mu.Unlock()
	r.s.Emit(event.Event{Type: event.EvPlaybackStart, At: at, Turn: r.turn})
	return at, true
}

// PlayedOut finishes a current reply once its goroutines are gone and its
// last sample has played, publishing playback_stop: ok, with when it went
// quiet, and whether it had audio.
func (r *Reply) PlayedOut() (at time.Duration, audible, ok bool) {
	select {
	case <-r.done:
	default:
		return 0, false, false
	}
	at = r.s.Clock.Now()
	_, end, audible := r.span()
	if audible {
		p := r.s.Player
		if p.Consumed() < end {
			return 0, false, false
		}
		at, _ = p.DeviceTime(end - 1)
		at += p.Format().Duration(1)
		r.s.Emit(event.Event{Type: event.EvPlaybackStop, At: at, Turn: r.turn})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return at, audible, r.moveLocked(Done, event.Event{At: at})
}

// Said is what the history keeps of a reply that is over, besides its
// tool rounds (Rounds): all of it, or, cut short by a barge-in or a
// failure, what the user heard as the model wrote it, marked interrupted
// so the next user message does not follow the last.
func (r *Reply) Said() (text string, interrupted bool) {
	r.mu.Lock()
	state, err := r.state, r.err
	r.mu.Unlock()
	if state == Done && err == nil {
		return r.afterRounds(r.text()), false
	}
	_, written := r.Heard(r.s.Player.Consumed())
	return r.afterRounds(written), true
}

// Metrics are the turn's metrics as they stand: final once the reply is
// over.
func (r *Reply) Metrics() event.TurnMetrics {
	r.mu.Lock()
	m := r.metrics
	m.Chunks = make([]event.ChunkSpan, 0, len(r.spoken))
	for _, c := range r.spoken {
		m.Chunks = append(m.Chunks, event.ChunkSpan{Text: c.text, Start: c.start, End: c.end})
	}
	if m.Compute != nil {
		c := *m.Compute
		c.Merge(r.compute, r.stats)
		m.Compute = &c
	}
	r.mu.Unlock()
	m.Derive()
	return m
}

// Spent takes the compute of the reply's stages (compute.Account); its
// goroutines call it. A stage's first call has what it computed up to its
// first result: the first token, the first chunk's first audio.
func (r *Reply) Spent(s event.Stage, d time.Duration) {
	r.mu.Lock()
	r.compute.Add(s, d)
	if !r.handed[s] {
		r.handed[s] = true
		r.compute.AddFirst(s, d)
	}
	r.mu.Unlock()
}

func (r *Reply) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reply.String()
}
