package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/vad"
)

// duckGain is the level of a reply ducked under the user's voice (-12 dB):
// still followable, no longer competing.
const duckGain = 0.25

// Pipeline is one conversation session: its listening side (package
// listen) hears the user's turns; the pipeline decides about speech over
// a reply, and starts, adopts, interrupts and plays out the replies
// (package reply) to the turns committed.
type Pipeline struct {
	cfg     Config
	clk     clock.Clock
	player  *audio.Player
	events  *event.Queue
	charger *compute.Charger
	replies reply.Config
	ended   chan *reply.Reply
	ahead   *prefillAhead

	// Everything below is owned by Run's goroutine.
	listen *listen.Listener
	barge  *arbiter
	// micOpen is when, in half duplex, the microphone is listened to
	// again after the assistant went quiet.
	micOpen    time.Duration
	state      State // moved only by setState, as stateTransitions allows
	turnStates fsm.Machine[State]
	muted      bool // the host closed the microphone (OpMute)
	need       Need // as Config.Need was last told
	says       announcements
	resp       *reply.Reply // the current reply: being generated or played
	spec       *reply.Reply // a speculative reply to the open turn
	speculates bool         // Config.Speculate, with a generator that rolls back

	mu      sync.Mutex
	metrics []TurnMetrics
}

// spentFunc is a compute.Account as a function.
type spentFunc func(event.Stage, time.Duration)

func (f spentFunc) Spent(s event.Stage, d time.Duration) { f(s, d) }

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
		ended:  make(chan *reply.Reply, 4),
		// A speculative reply must leave no trace when it is dropped.
		speculates: cfg.Speculate && rollsBack(cfg.LLM),
	}
	// A bug (a move no table allows) is published, and the session goes
	// on in the state it was in.
	illegal := func(err error) { p.events.Emit(Event{Type: EvError, At: p.clk.Now(), Err: err.Error()}) }
	var err error
	// The listening path's compute goes to its open turn.
	listening := spentFunc(func(s event.Stage, d time.Duration) { p.listen.Spent(s, d) })
	if p.charger, err = compute.New(cfg.Clock, cfg.measureCompute, cfg.ComputeScale, listening); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	stages := wireStages(cfg, p.charger)
	p.barge = newArbiter(cfg.BargeIn, illegal)
	continuation := cfg.Continue
	if !p.barge.interrupts() {
		continuation.Window = 0 // no reply is cut, so no turn is continued
	}
	p.listen = listen.New(listen.Config{
		Clock: cfg.Clock, Charger: p.charger, Stages: stages.listen, History: cfg.History,
		Emit: p.events.Emit, Report: illegal,
		Endpoint: cfg.Endpoint, PreRoll: cfg.PreRoll, TurnWindow: cfg.TurnWindow,
		HalfDuplex: cfg.HalfDuplex.Enabled, Continue: continuation, Activation: cfg.Activation,
	})
	p.replies = reply.Config{
		Clock: cfg.Clock, Player: p.player, LLM: stages.llm, NewChunker: cfg.NewChunker, TTS: stages.tts,
		Emit: p.events.Emit, Report: illegal, Ended: p.ended,
		Tools: cfg.Tools, ToolPolicy: cfg.ToolPolicy,
	}
	p.ahead = newPrefillAhead(cfg.LLM, cfg.Clock)
	p.turnStates = fsm.New("turn", stateTransitions, illegal)
	return p, nil
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
	defer p.events.Close()
	defer p.shutdown(ctx)
	frames := p.cfg.Device.Frames()
	notices := p.cfg.Notices
	p.setState(StateListening, 0)
	for {
		var at time.Duration
		select {
		case <-ctx.Done():
			return nil
		case r := <-p.ended:
			if r == p.resp {
				p.trackPlayback(ctx)
			}
		case e := <-p.listen.EarlyFinals():
			at, err = p.clk.Now(), p.earlyIn(ctx, e)
		case <-p.cfg.Interrupt:
			p.bargeIn(ctx, reply.CutStopKey)
		case c := <-p.cfg.Commands:
			at, err = p.clk.Now(), p.command(ctx, c)
		case text, ok := <-notices:
			if !ok {
				notices = nil // closed: no notice comes, and none holds the clock
				continue
			}
			at, err = p.clk.Now(), p.command(ctx, Command{Op: OpSay, Text: text})
		case f, ok := <-frames:
			if !ok {
				return p.cfg.Device.Err()
			}
			at, err = f.Stop(), p.frame(ctx, f)
		}
		// Told before the clock moves on: a replay's need has its time.
		need := NeedPrompt
		if p.resp == nil && p.spec == nil && len(p.says.texts) == 0 {
			switch {
			case p.listen.Idle():
				need = NeedPreRoll
			case !p.listen.Open():
				need = NeedListen
			}
		}
		if need != p.need && p.cfg.Need != nil {
			p.need = need
			p.cfg.Need(need)
		}
		p.clk.Release()
		if err != nil {
			p.events.Emit(Event{Type: EvError, At: at, Err: err.Error()})
			return err
		}
		if p.cfg.Alive != nil {
			p.cfg.Alive()
		}
	}
}

// shutdown cuts whatever is still responding and waits for every
// goroutine of the session, so Run never returns with stages running.
func (p *Pipeline) shutdown(ctx context.Context) {
	if p.spec != nil {
		p.spec.Drop(reply.MissSessionEnd)
	}
	p.cut(ctx, reply.CutSessionEnd)
	p.listen.Stop()
	p.replies.Wait()
	for len(p.ended) > 0 {
		<-p.ended // one that ended current just before it was cut
		p.clk.Release()
	}
	p.ahead.stop(true)
}

// frame runs the listening side on one capture frame and acts on what it
// heard.
func (p *Pipeline) frame(ctx context.Context, f audio.Frame) error {
	l := p.listen
	if l.Idle() {
		// Nothing listens until the talk button is pressed, or the host's
		// wake comes.
		l.Keep(f)
		p.trackPlayback(ctx)
		p.says.startNext(ctx, p)
		return nil
	}
	// Muted by the host, or in half duplex while the microphone hears the
	// assistant, the VAD hears silence.
	muted := p.muted || p.cfg.HalfDuplex.Enabled && (p.resp != nil || f.Start() < p.micOpen)
	heard, err := l.Hear(f, muted)
	if err != nil {
		return err
	}
	for _, ev := range heard.Events {
		if err := p.boundary(ev, f); err != nil {
			return err
		}
	}
	if l.Open() {
		switch heeded, err := l.Listen(f, heard); {
		case err != nil:
			return err
		case heeded == listen.TurnWoken:
			p.setState(StateUserSpeaking, p.clk.Now())
		case heeded != listen.TurnHeard:
			// Speech a wake session checks for its phrase, or has ruled out.
			p.trackPlayback(ctx)
			return nil
		}
		if p.barge.pending() {
			p.arbitrate(ctx, f.Stop())
		} else {
			p.speculate(ctx, heard.Pausing)
			if err := l.FinalEarly(ctx); err != nil {
				return err
			}
		}
		if l.Open() && !p.barge.pending() {
			fin, err := l.Decide(ctx, f.Stop())
			if err != nil || fin == nil {
				return err
			}
			if err := p.commit(ctx, fin); err != nil {
				return err
			}
		}
	}
	p.trackPlayback(ctx)
	p.says.startNext(ctx, p)
	return nil
}

// boundary acts on a speech boundary in frame f: speech opening a turn
// over a reply is decided on as a barge-in, and the state follows the
// user's voice unless that decision is pending.
func (p *Pipeline) boundary(ev vad.Event, f audio.Frame) error {
	if ev.Kind == vad.SpeechStart {
		p.ahead.stop(false)
	}
	change, err := p.listen.Boundary(ev, f.Pos)
	if err != nil {
		return err
	}
	if change == listen.TurnOpened && p.resp != nil {
		p.speechOverReply()
	}
	switch {
	case change == listen.NoTurn || change == listen.TurnSpotting || p.barge.pending():
	case ev.Kind == vad.SpeechStart:
		p.setState(StateUserSpeaking, p.clk.Now())
	default:
		p.setState(StateListening, p.clk.Now())
	}
	return nil
}

// earlyIn takes an early final that is in: a commit that waited for it
// goes through, or a speculative reply is checked against it.
func (p *Pipeline) earlyIn(ctx context.Context, e *listen.Early) error {
	fin, check, err := p.listen.EarlyIn(e)
	switch {
	case fin != nil:
		return p.commit(ctx, fin)
	case check:
		p.speculate(ctx, true)
	}
	return err
}

// commit ends the user's turn with its final transcript and starts the
// response to it: the speculative reply, if it answered those words (a
// hit), or a new one.
func (p *Pipeline) commit(ctx context.Context, fin *listen.Final) error {
	if p.spec != nil {
		if reason := missAtCommit(p.spec, fin.Sentence); reason != "" {
			p.spec.Drop(reason)
			p.spec = nil
		}
	}
	asked := fin.Sentence
	if p.spec != nil {
		asked = p.spec.Transcript()
	}
	t, ok := p.listen.Commit(fin, asked)
	if !ok {
		return nil
	}
	p.setState(StateThinking, fin.At)
	if r := p.spec; r != nil {
		p.spec, p.resp = nil, r
		r.Adopt(t.Metrics)
		p.trackPlayback(ctx) // it may have finished while waiting (a reply without audio)
		return nil
	}
	p.ahead.stop(false)
	t.Metrics.LLMStart = p.listen.Now()
	p.resp = reply.Start(ctx, &p.replies, t.Number, p.cfg.History.Messages(), t.Metrics)
	return nil
}

// continueTurn drops the reply to the turn the open one goes on from,
// once its speech over it is confirmed, as a speculation miss is: the
// history keeps nothing of it (at most Continue.MaxHeard of it was heard,
// a word or two begun), and the turn goes on (listen.Listener.Continue).
func (p *Pipeline) continueTurn() {
	at := p.clk.Now()
	p.resp.Drop(reply.DropContinued)
	p.endResponse(at)
	p.listen.Continue()
	if !p.listen.Speaking() {
		p.setState(StateListening, at)
	}
}

// endResponse forgets the current response once it is over (played out,
// cut or dropped). Speech that overlapped it becomes a turn of its own,
// unless it has ended as a sound without words that count (a cough, a
// backchannel), which was a reaction to the reply, not a request.
func (p *Pipeline) endResponse(quietAt time.Duration) {
	l := p.listen
	p.resp = nil
	l.ReplyOver(quietAt)
	// A reply can end while paused or ducked for the user (its last
	// samples went in the fade, or it had none): the next one must not
	// start that way.
	p.player.Resume()
	if !p.barge.pending() {
		return
	}
	speech := l.Speech()
	if p.barge.settle(speech.Partial, speech.Speaking) {
		return
	}
	p.events.Emit(Event{Type: EvSpeechIgnored, At: max(p.clk.Now(), quietAt), Text: speech.Partial})
	l.Dismiss()
}

// trackPlayback turns the player's progress into playback events and ends
// the response once its last sample has been played. The device's
// playback position moves with its capture, so each frame (and each reply
// whose goroutines end) is when to look.
func (p *Pipeline) trackPlayback(ctx context.Context) {
	r := p.resp
	if r == nil {
		return
	}
	if at, ok := r.Started(); ok {
		p.listen.ReplyStarted(at)
		p.setState(StateSpeaking, at)
	}
	at, audible, ok := r.PlayedOut()
	if !ok {
		return
	}
	if audible {
		p.micOpen = at + p.cfg.HalfDuplex.Tail
	}
	text, interrupted := r.Said()
	p.remember(ctx, r.Rounds(), text, interrupted)
	p.finishTurn(r, at)
	p.endResponse(at)
	if p.listen.Speaking() {
		p.setState(StateUserSpeaking, at)
	} else {
		p.setState(StateListening, at)
	}
}

// finishTurn records and publishes a turn's metrics once its reply is
// over, at at (which may be just ahead of the clock: when the reply's last
// sample will have played).
func (p *Pipeline) finishTurn(r *reply.Reply, at time.Duration) {
	if r.Announced() {
		return // the host's text: no user turn, no latency
	}
	m := r.Metrics()
	p.mu.Lock()
	p.metrics = append(p.metrics, m)
	p.mu.Unlock()
	p.events.Emit(Event{Type: EvTurnMetrics, At: at, Turn: r.Turn(), Metrics: &m})
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
	p.events.Emit(Event{Type: EvState, At: at, State: s})
}
