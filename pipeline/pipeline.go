package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/vad"
)

// duckGain is the level of a reply ducked under the user's voice (-12 dB):
// still followable, no longer competing.
const duckGain = 0.25

// Pipeline is one conversation session: it listens (listen.go), decides
// when the user's turn is over, and starts, adopts, interrupts and plays
// out the replies (package reply) to it.
type Pipeline struct {
	cfg     Config
	clk     clock.Clock
	player  *audio.Player
	events  *event.Queue
	stages  stages
	charger *compute.Charger
	replies reply.Session

	// Everything below is owned by Run's goroutine.
	ctx    context.Context // the session's; replies derive from it
	listen listener
	barge  *arbiter
	// micOpen is when, in half duplex, the microphone is listened to
	// again after the assistant went quiet.
	micOpen    time.Duration
	state      State // moved only by setState, as stateTransitions allows
	turnStates fsm.Machine[State]
	turnNo     int
	resp       *reply.Reply // the current reply: being generated or played
	spec       *reply.Reply // a speculative reply to the open turn
	speculates bool         // Config.Speculate, with a generator that rolls back
	stopping   int          // cut replies whose goroutines have not ended
	done       chan *reply.Reply
	ahead      prefillAhead

	mu      sync.Mutex
	metrics []TurnMetrics
}

// New checks the configuration and returns a pipeline ready to Run.
func New(cfg Config) (*Pipeline, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{
		cfg:    cfg,
		clk:    cfg.Clock,
		player: cfg.Device.Player(),
		events: event.NewQueue(),
		done:   make(chan *reply.Reply, 4),
		ahead:  noPrefillAhead(),
		// A speculative reply must leave no trace when it is dropped.
		speculates: cfg.Speculate && rollsBack(cfg.LLM),
	}
	var err error
	if p.charger, err = compute.New(cfg.Clock, cfg.measureCompute, cfg.ComputeScale, &p.listen); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	p.stages = wireStages(cfg, p.charger)
	p.listen = listener{
		cfg: &p.cfg, clk: cfg.Clock, stages: &p.stages, charger: p.charger, emit: p.emit,
		machine: fsm.New("listening", phaseTransitions, p.illegal),
		history: newRecentAudio(cfg.PreRoll + time.Second),
		finals:  make(chan *earlyFinal),
	}
	p.replies = reply.Session{
		Clock: cfg.Clock, Player: p.player, LLM: p.stages.llm, NewChunker: cfg.NewChunker, TTS: p.stages.tts,
		Emit: p.emit, Report: p.illegal, Ended: p.done,
	}
	p.barge = newArbiter(cfg.BargeIn, p.illegal)
	p.turnStates = fsm.New("turn", stateTransitions, p.illegal)
	return p, nil
}

// illegal reports a state transition no table allows, which is a bug: the
// session goes on, in the state it was in.
func (p *Pipeline) illegal(err error) {
	p.emit(Event{Type: EvError, At: p.clk.Now(), Err: err.Error()})
}

// Events is the session's event stream, closed after Run returns. It must
// be drained: events are queued without bound rather than dropped.
func (p *Pipeline) Events() <-chan Event { return p.events.Out() }

// Metrics returns the metrics of the turns finished so far.
func (p *Pipeline) Metrics() []TurnMetrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.metrics)
}

// Run processes capture frames until the device stops or ctx is done. It
// returns the device's error, or the first stage error that ends the
// session; a cancelled ctx is not an error.
func (p *Pipeline) Run(ctx context.Context) (err error) {
	p.ctx = ctx
	defer p.events.Close()
	defer p.shutdown()
	frames := p.cfg.Device.Frames()
	p.setState(StateListening, 0)
	for {
		var at time.Duration
		select {
		case <-ctx.Done():
			return nil
		case r := <-p.done:
			p.replyGone(r)
		case e := <-p.listen.finals:
			at, err = p.clk.Now(), p.earlyFinalIn(e)
		case <-p.cfg.Interrupt:
			if p.resp != nil {
				p.bargeIn(ReasonStopKey)
			}
		case f, ok := <-frames:
			if !ok {
				return p.cfg.Device.Err()
			}
			at, err = f.Stop(), p.frame(ctx, f)
		}
		p.clk.Release()
		if err != nil {
			p.emit(Event{Type: EvError, At: at, Err: err.Error()})
			return err
		}
	}
}

// shutdown cancels whatever is still responding and waits for its
// goroutines, so Run never returns with stages still running.
func (p *Pipeline) shutdown() {
	if p.spec != nil {
		p.dropSpeculation(reply.MissSessionEnd)
	}
	if p.resp != nil {
		p.cancelResponse()
	}
	for p.stopping > 0 || p.listen.finishing > 0 {
		select {
		case r := <-p.done:
			p.replyGone(r)
		case <-p.listen.finals:
			p.listen.finishing--
		}
		p.clk.Release()
	}
	p.stopPrefillAhead(true)
}

// frame runs the listening side on one capture frame.
func (p *Pipeline) frame(ctx context.Context, f audio.Frame) error {
	l := &p.listen
	l.history.add(f)
	if p.cfg.HalfDuplex.Enabled && (p.resp != nil || f.Start() < p.micOpen) {
		// The microphone hears the assistant now: let none of it reach the
		// VAD. (The pre-roll kept in history reaches back only to when the
		// assistant went quiet.)
		f.Samples = make([]float32, len(f.Samples))
	}
	heard, err := p.stages.vad.Process(f)
	if err != nil {
		return fmt.Errorf("vad: %w", err)
	}
	for _, ev := range heard.Events {
		if err := p.vadEvent(ev, f); err != nil {
			return err
		}
	}
	if t := l.turn; t != nil {
		if err := l.listen(f, heard); err != nil {
			return err
		}
		if p.barge.pending() {
			p.arbitrate(f.Stop())
		} else {
			p.speculate(heard.Pausing)
			if err := l.finalEarly(p.ctx); err != nil {
				return fmt.Errorf("asr: %w", err)
			}
		}
		if l.turn == t && !p.barge.pending() && l.phase != phaseFinalizing {
			reason, err := l.endpoint(ctx, f.Stop())
			if err != nil || reason == "" {
				return err
			}
			if err := p.commit(reason); err != nil {
				return err
			}
		}
	}
	p.trackPlayback()
	return nil
}

// vadEvent handles a speech boundary. Its event is stamped when the VAD
// reports it (a start is confirmed MinSpeech after it, an end MinSilence
// after), so the stream stays in time order; Pos is where the boundary
// lies, and the endpointing policy and the metrics count from there.
func (p *Pipeline) vadEvent(ev vad.Event, f audio.Frame) error {
	l := &p.listen
	now := p.clk.Now()
	switch ev.Kind {
	case vad.SpeechStart:
		p.emit(Event{Type: EvSpeechStart, At: now, Pos: ev.Pos})
		p.stopPrefillAhead(false)
		switch l.phase {
		case phaseIdle, phaseCommitted:
			if err := l.open(ev.Pos, f.Pos, p.continuing(ev.Pos)); err != nil {
				return err
			}
			if p.resp != nil {
				p.speechOverReply()
			}
		case phasePaused, phaseFinalizing:
			l.to(phaseSpeaking) // the open turn goes on
		}
		l.turn.ep.SpeechStart()
		if !p.barge.pending() {
			p.setState(StateUserSpeaking, now)
		}
	case vad.SpeechEnd:
		p.emit(Event{Type: EvSpeechEnd, At: now, Pos: ev.Pos})
		if l.turn == nil {
			return nil
		}
		l.speechEnded(audio.Mono16k.Duration(ev.Pos))
		if !p.barge.pending() {
			p.setState(StateListening, now)
		}
	}
	return nil
}

// commit ends the user's turn and starts the response to it, once the
// turn's early final, if one is being made, is in.
func (p *Pipeline) commit(reason turn.Reason) error {
	l := &p.listen
	t := l.turn
	if l.phase != phaseFinalizing {
		t.commitAt = l.now()
	}
	if e := t.early; e != nil && !e.ready {
		t.reason = reason
		l.to(phaseFinalizing)
		return nil
	}
	text, err := l.final()
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	finalAt := l.now()
	l.committedUntil = l.history.end
	sentence := t.sentence(text)
	if p.spec != nil {
		if reason := missAtCommit(p.spec, sentence); reason != "" {
			p.dropSpeculation(reason)
		}
	}
	if sentence == "" {
		// Speech without words (noise, a cough): nothing to answer.
		l.close(nil)
		p.emit(Event{Type: EvFinal, At: finalAt})
		return nil
	}
	p.turnNo++
	// A continuation that brought no words commits the sentence it
	// continued once more: its reply was dropped.
	said := cmp.Or(text, sentence)
	// A speculated reply answers the words as the partial had them,
	// without the final's closing punctuation: the history records what
	// the LLM was given, which its KV cache holds for the next turn.
	asked := sentence
	if p.spec != nil {
		asked = p.spec.Transcript()
	}
	l.close(&committed{turn: p.turnNo, text: said, sentence: asked, at: finalAt, audio: t.audio})
	// Both published once the final transcript is in (which, with compute
	// on the clock, is after the decision to commit: the metrics keep both).
	p.emit(Event{Type: EvFinal, At: finalAt, Turn: p.turnNo, Text: said})
	p.emit(Event{Type: EvTurnCommit, At: finalAt, Turn: p.turnNo, Text: said, Reason: string(reason)})
	p.cfg.History.AddUser(asked)
	p.setState(StateThinking, finalAt)
	m := TurnMetrics{SpeechEnd: t.speechEnd, Commit: t.commitAt, ASRFinal: finalAt}
	if p.charger != nil {
		listening := t.compute
		m.Compute = &listening
	}
	if p.spec != nil {
		p.adoptSpeculation(m)
	} else {
		p.startReply(m, p.cfg.History.Messages())
	}
	return nil
}

// startReply starts the current reply to conv.
func (p *Pipeline) startReply(m TurnMetrics, conv []llm.Message) {
	p.stopPrefillAhead(false)
	m.LLMStart = p.listen.now()
	p.resp = reply.Start(p.ctx, &p.replies, p.turnNo, conv, m)
}

// continuing is the committed turn that speech starting at stream
// position start may continue, or nil: it starts within Config.Continue's
// window of the commit, while the reply to it is still the one going on
// (the listening side is still phaseCommitted) and has been heard for
// less than MaxHeard when the speech began. The speech over the reply is
// decided on as any is (a cough, or the reply's own echo, lets it play
// on); once confirmed it continues the turn instead of interrupting it.
// With barge-in off no reply is cut, so no turn is continued.
func (p *Pipeline) continuing(start int64) *committed {
	c, cfg := p.listen.last, p.cfg.Continue
	if p.listen.phase != phaseCommitted || cfg.Window <= 0 || !p.barge.interrupts() {
		return nil
	}
	at := audio.Mono16k.Duration(start)
	if at-c.at > cfg.Window {
		return nil
	}
	if played := p.resp.PlaybackStart(); played > 0 && at-played >= cfg.MaxHeard {
		return nil
	}
	return c
}

// continueTurn drops the reply to the turn the open one goes on from,
// once its speech over it is confirmed, as a speculation miss is: the
// history keeps nothing of it (at most Continue.MaxHeard of it was heard,
// a word or two begun), and takes that turn's sentence back, to hold the
// whole sentence once, as one message, when the turn is committed.
func (p *Pipeline) continueTurn() {
	l := &p.listen
	c := l.turn.continues
	at := p.clk.Now()
	p.cutResponse()
	p.emit(Event{Type: EvTurnContinued, At: at, Turn: c.turn, Text: c.text})
	var prefix string
	if p.cfg.History.TakeBackUser(c.sentence) {
		prefix = c.sentence
	}
	l.continueWith(prefix)
	if !l.speaking() {
		p.setState(StateListening, at)
	}
}

// endResponse forgets the current response once it is over (played out,
// failed or cancelled). Speech that overlapped it becomes a turn of its
// own, unless it has ended as a sound without words that count (a cough, a
// backchannel), which was a reaction to the reply, not a request.
func (p *Pipeline) endResponse(quietAt time.Duration) {
	l := &p.listen
	p.resp = nil
	l.replyOver()
	l.quietSince = max(l.quietSince, audio.Mono16k.Samples(quietAt))
	// A reply can end while paused or ducked for the user (its last
	// samples went in the fade, or it had none): the next one must not
	// start that way.
	p.player.Resume()
	if !p.barge.pending() {
		return
	}
	if p.barge.settle(l.turn.partial, l.speaking()) {
		return
	}
	p.emit(Event{Type: EvSpeechIgnored, At: max(p.clk.Now(), quietAt), Text: l.turn.partial})
	l.close(nil)
}

// replyGone handles a reply whose goroutines have all returned.
func (p *Pipeline) replyGone(r *reply.Reply) {
	switch r.Gone() {
	case reply.Speculative:
		// Finished before its turn was committed; adopted or dropped then.
	case reply.Dropped, reply.Cancelled:
		p.stopping--
	default:
		p.trackPlayback()
	}
}

// trackPlayback turns the player's progress into playback events and ends
// the response once its last sample has been played.
func (p *Pipeline) trackPlayback() {
	r := p.resp
	if r == nil {
		return
	}
	if at, ok := r.Started(); ok {
		p.setState(StateSpeaking, at)
	}
	at, audible, ok := r.PlayedOut()
	if !ok {
		return
	}
	if audible {
		p.micOpen = at + p.cfg.HalfDuplex.Tail
	}
	p.remember(r.Said())
	p.finishTurn(r, at)
	p.endResponse(at)
	if p.listen.speaking() {
		p.setState(StateUserSpeaking, at)
	} else {
		p.setState(StateListening, at)
	}
}

// finishTurn records and publishes a turn's metrics once it is over, at
// at (which may be just ahead of the clock: when the reply's last sample
// will have played).
func (p *Pipeline) finishTurn(r *reply.Reply, at time.Duration) {
	m := r.Metrics()
	p.mu.Lock()
	p.metrics = append(p.metrics, m)
	p.mu.Unlock()
	p.emit(Event{Type: EvTurnMetrics, At: at, Turn: r.Turn(), Metrics: &m})
}

// stateTransitions are the legal moves of the state a user sees
// (docs/ARCHITECTURE.md, the turn's table); "" is before the session.
var stateTransitions = map[State][]State{
	"":                {StateListening},
	StateListening:    {StateUserSpeaking, StateThinking},
	StateUserSpeaking: {StateListening, StateThinking, StateSpeaking, StateInterrupted},
	StateThinking:     {StateListening, StateUserSpeaking, StateSpeaking, StateInterrupted},
	StateSpeaking:     {StateListening, StateUserSpeaking, StateInterrupted},
	StateInterrupted:  {StateListening, StateUserSpeaking},
}

func (p *Pipeline) setState(s State, at time.Duration) {
	if s == p.state {
		return
	}
	if !p.turnStates.Move(&p.state, s) {
		return
	}
	p.emit(Event{Type: EvState, At: at, State: s})
}

func (p *Pipeline) emit(e Event) { p.events.Emit(e) }
