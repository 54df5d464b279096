package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/vad"
)

// Config assembles a pipeline. Clock, Device, VAD, ASR, LLM, History and
// NewChunker are required; Turn and TTS are optional (without a turn model
// the endpointer commits on silence, without TTS replies are text only).
type Config struct {
	Clock      clock.Clock
	Device     Device
	VAD        VAD
	ASR        ASR
	Turn       TurnDetector
	LLM        Generator
	NewChunker func() Chunker
	TTS        Synthesizer
	History    *llm.History

	Endpoint turn.Config
	BargeIn  BargeIn
	// PreRoll is audio kept before the VAD's speech start and given to the
	// recognizer, so the first phoneme is not clipped.
	PreRoll time.Duration
	// TurnWindow is the most audio given to the turn model (Smart Turn
	// was trained on up to 8 s).
	TurnWindow time.Duration
	// HalfDuplex closes the microphone while the assistant responds and
	// for HalfDuplex.Tail after its last sample (the room's echo tail),
	// for setups without echo cancellation: no self-interruption, but no
	// barge-in either. Speech still going on when the microphone opens is
	// the next turn, with what it captured since the last sample played
	// as pre-roll.
	HalfDuplex HalfDuplex
	// Speculate starts the reply at the user's first pause, before the
	// turn is committed (see speculate.go), if the LLM rolls back.
	Speculate bool
	// Interrupt, if set, stops the reply whenever a value arrives: the
	// user's stop key (the desktop app's Esc). It acts as a barge-in that
	// needs no speech to decide: speech already over the reply becomes the
	// next turn, and a speculated reply, not heard yet, is left alone. As
	// with capture frames, the sender takes a hold on the clock before
	// each send (clock.Clock.Hold) and the pipeline releases it once it
	// has acted, so on a virtual clock the stop lands at one audio time.
	Interrupt <-chan struct{}
	// Continue is when speech right after a commit continues that turn.
	Continue Continuation
	// ComputeScale puts each stage's measured compute, times this, on the
	// clock (see compute.go); 0 leaves compute free, for replays whose
	// figures are the same on every run.
	ComputeScale float64
}

// Continuation lets the user go on after the end of their turn was called
// too early ("wait" — a pause — "I meant the other one"): speech that
// starts within Window of a commit, while the reply to it has played for
// less than MaxHeard, and is confirmed over it as a barge-in would be,
// continues the committed turn. The reply is dropped as a speculation
// miss is, and the history's user message becomes the whole sentence,
// once. A Window of 0 turns it off.
type Continuation struct {
	Window   time.Duration `yaml:"window"`
	MaxHeard time.Duration `yaml:"max_heard"`
}

// Validate names the first setting that makes no sense, by its config key.
func (c Continuation) Validate() error {
	switch {
	case c.Window < 0 || c.Window > time.Minute:
		return fmt.Errorf("continue.window: %v is not between 0 (never) and 1m", c.Window)
	case c.MaxHeard < 0 || c.MaxHeard > time.Minute:
		return fmt.Errorf("continue.max_heard: %v is not between 0 and 1m", c.MaxHeard)
	}
	return nil
}

// HalfDuplex configures microphone gating.
type HalfDuplex struct {
	Enabled bool
	Tail    time.Duration
}

// DefaultConfig fills in the policy knobs; the stages are up to the caller.
func DefaultConfig() Config {
	return Config{
		Endpoint:   turn.DefaultConfig(),
		BargeIn:    DefaultBargeIn(),
		HalfDuplex: HalfDuplex{Tail: 300 * time.Millisecond},
		PreRoll:    700 * time.Millisecond,
		TurnWindow: 8 * time.Second,
		Speculate:  true,
		Continue:   Continuation{Window: 1500 * time.Millisecond, MaxHeard: 300 * time.Millisecond},
	}
}

func (c Config) validate() error {
	var missing []string
	for name, ok := range map[string]bool{
		"Clock": c.Clock != nil, "Device": c.Device != nil, "VAD": c.VAD != nil,
		"ASR": c.ASR != nil, "LLM": c.LLM != nil, "History": c.History != nil,
		"NewChunker": c.NewChunker != nil,
	} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("pipeline: config lacks %v", missing)
	}
	if err := c.Endpoint.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.BargeIn.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if err := c.Continue.Validate(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	if c.ComputeScale < 0 || c.ComputeScale > 1e4 {
		return fmt.Errorf("pipeline: compute scale %v is not between 0 (compute is free) and 10000", c.ComputeScale)
	}
	for name, d := range map[string]time.Duration{"pre-roll": c.PreRoll, "turn window": c.TurnWindow, "half-duplex tail": c.HalfDuplex.Tail} {
		if d < 0 || d > time.Minute {
			return fmt.Errorf("pipeline: %s %v is not between 0 and 1m", name, d)
		}
	}
	return nil
}

// duckGain is the level of a reply ducked under the user's voice (-12 dB):
// still followable, no longer competing.
const duckGain = 0.25

// Pipeline is one conversation session.
type Pipeline struct {
	cfg    Config
	clk    clock.Clock
	player *audio.Player
	events *eventQueue

	// Everything below is owned by Run's goroutine.
	ctx     context.Context // the session's; responses derive from it
	barge   *arbiter
	micOpen time.Duration // half duplex: audio before this is not listened to
	// playedUntil is when the assistant last went quiet: in half duplex,
	// capture before it holds the assistant's voice and is no pre-roll.
	playedUntil time.Duration
	// busyUntil is when the listening path is done with the compute it
	// has been charged (with a compute scale).
	busyUntil time.Duration
	// committedUntil is the end of the audio the last commit took: no
	// later turn's pre-roll reaches back before it, so no word is
	// recognized twice.
	committedUntil int64
	// lastCommit is the turn committed last while its reply may still
	// be continued over (Config.Continue).
	lastCommit *committed
	state      State // moved only by setState, as turnStates allows
	turnStates machine[State]
	turnNo     int
	history    recentAudio
	turn       *userTurn
	resp       *response   // the response being generated or played
	spec       speculation // a speculative response to the open turn
	stopping   int         // cancelled responses whose goroutines have not ended
	done       chan *response
	finishing  int // early finals being made (early.go)
	finals     chan *earlyFinal
	ahead      prefillAhead

	mu      sync.Mutex
	metrics []TurnMetrics
}

// committed is a turn as committed, kept while the user may continue it.
type committed struct {
	turn     int
	text     string // the commit's own words
	sentence string // the user message the history holds for it
	at       time.Duration
	audio    []float32 // what the turn model heard
	resp     *response // the reply to it
}

// userTurn is the user's turn being listened to.
type userTurn struct {
	// continues is the turn just committed that this one goes on from,
	// if its speech is confirmed over the reply (continueTurn); prefix
	// is that turn's sentence once the history took it back: what the
	// user says now is its end.
	continues   *committed
	prefix      string
	ep          *turn.Endpointer
	audio       []float32 // the latest turn audio, for the turn model
	speechStart int64     // VAD start of the speech that opened the turn
	voiced      int       // samples the VAD called speech since then
	speaking    bool      // between the VAD's speech start and end
	speechEnd   time.Duration
	heardUntil  time.Duration // end of the audio given to the ASR
	partial     string
	compute     StageCompute // with a compute scale: the listening path's
	// early is the final transcript of a copy of the recognizer made when
	// the VAD ended the speech (early.go); pending is the reason of a
	// commit decided at commitAt that waits for it.
	early    *earlyFinal
	pending  turn.Reason
	commitAt time.Duration
	// waiting is set while the recognizer is not given the capture, from
	// stream position waitFrom on, because a copy of it is finalizing.
	waiting  bool
	waitFrom int64
}

// sentence is the user message for words said in this turn: with the
// sentence it continues, if any, before them.
func (t *userTurn) sentence(words string) string { return JoinWords(t.prefix, words) }

// transcript is what the recognizer has of this turn: the early final
// once it is in, else the partial.
func (t *userTurn) transcript() string {
	if t.early != nil && t.early.ready {
		return t.early.text
	}
	return t.partial
}

// quiet is how much audio the recognizer was given after the speech
// ended: the room's quiet, which pushes the last words through its
// encoder as end-of-utterance padding does.
func (t *userTurn) quiet() time.Duration {
	if t.speaking {
		return 0
	}
	return max(t.heardUntil-t.speechEnd, 0)
}

// keepAudio appends to the turn's audio, keeping at least the last window
// samples; trimming only when twice that has built up keeps it cheap.
func (t *userTurn) keepAudio(samples []float32, window int) {
	t.audio = append(t.audio, samples...)
	if len(t.audio) > 2*window {
		t.audio = append(t.audio[:0], t.audio[len(t.audio)-window:]...)
	}
}

// New checks the configuration and returns a pipeline ready to Run.
func New(cfg Config) (*Pipeline, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{
		cfg:     cfg,
		clk:     cfg.Clock,
		player:  cfg.Device.Player(),
		events:  newEventQueue(),
		history: newRecentAudio(cfg.PreRoll + time.Second),
		done:    make(chan *response, 4),
		finals:  make(chan *earlyFinal),
		ahead:   noPrefillAhead(),
	}
	p.barge = newArbiter(cfg.BargeIn, p.illegal)
	p.turnStates = newMachine("turn", stateTransitions, p.illegal)
	p.spec = speculation{
		// A speculative reply must leave no trace when it is dropped.
		enabled: cfg.Speculate && rollsBack(cfg.LLM),
		machine: newMachine("speculation", specTransitions, p.illegal),
	}
	return p, nil
}

// illegal reports a state transition no table allows, which is a bug: the
// session goes on, in the state it was in.
func (p *Pipeline) illegal(err error) {
	p.emit(Event{Type: EvError, At: p.clk.Now(), Err: err.Error()})
}

// Events is the session's event stream, closed after Run returns. It must
// be drained: events are queued without bound rather than dropped.
func (p *Pipeline) Events() <-chan Event { return p.events.out }

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
	defer p.events.close()
	defer p.shutdown()
	frames := p.cfg.Device.Frames()
	p.setState(StateListening, 0)
	for {
		select {
		case <-ctx.Done():
			return nil
		case r := <-p.done:
			p.responseEnded(r)
			p.clk.Release()
		case e := <-p.finals:
			err := p.earlyFinalIn(e)
			p.clk.Release()
			if err != nil {
				p.emit(Event{Type: EvError, At: p.clk.Now(), Err: err.Error()})
				return err
			}
		case <-p.cfg.Interrupt:
			if p.resp != nil {
				p.bargeIn(p.turn, ReasonStopKey)
			}
			p.clk.Release()
		case f, ok := <-frames:
			if !ok {
				return p.cfg.Device.Err()
			}
			err := p.frame(ctx, f)
			p.clk.Release()
			if err != nil {
				p.emit(Event{Type: EvError, At: f.Stop(), Err: err.Error()})
				return err
			}
		}
	}
}

// shutdown cancels whatever is still responding and waits for its
// goroutines, so Run never returns with stages still running.
func (p *Pipeline) shutdown() {
	if p.spec.running() != nil {
		p.dropSpeculation(missSessionEnd)
	}
	if p.resp != nil {
		p.cancelResponse()
	}
	for p.stopping > 0 || p.finishing > 0 {
		select {
		case r := <-p.done:
			p.responseEnded(r)
		case <-p.finals:
			p.finishing--
		}
		p.clk.Release()
	}
	p.stopPrefillAhead(true)
}

// frame runs the listening side on one capture frame.
func (p *Pipeline) frame(ctx context.Context, f audio.Frame) error {
	p.history.add(f)
	if p.cfg.HalfDuplex.Enabled && (p.resp != nil || f.Start() < p.micOpen) {
		// The microphone hears the assistant now: let none of it reach the
		// VAD. (The pre-roll kept in history reaches back only to when the
		// assistant went quiet.)
		f.Samples = make([]float32, len(f.Samples))
	}
	heard, err := listening(p, stageVAD, func() (vad.Result, error) { return p.cfg.VAD.Process(f) })
	if err != nil {
		return fmt.Errorf("vad: %w", err)
	}
	for _, ev := range heard.Events {
		if err := p.vadEvent(ev, f); err != nil {
			return err
		}
	}
	if t := p.turn; t != nil {
		if heard.Voiced {
			t.voiced += f.Len()
		}
		t.keepAudio(f.Samples, int(audio.Mono16k.Samples(p.cfg.TurnWindow)))
		if t.early != nil && !t.speaking {
			// A copy of the recognizer is finalizing the turn as if the
			// quiet went on: the recognizer waits, and is given what it
			// missed should the speech resume (early.go).
			if !t.waiting {
				t.waiting, t.waitFrom = true, f.Pos
			}
		} else if err := p.hear(t, f); err != nil {
			return err
		}
		t.ep.Transcript(t.partial, f.Stop())
		if p.barge.pending() {
			p.arbitrate(t, f.Stop())
		} else {
			p.speculate(t, heard.Pausing)
			if err := p.finalEarly(t); err != nil {
				return fmt.Errorf("asr: %w", err)
			}
		}
		if p.turn == t && !p.barge.pending() && t.pending == "" {
			if err := p.endpoint(ctx, f.Stop()); err != nil {
				return err
			}
		}
	}
	p.trackPlayback()
	return nil
}

// hear gives the recognizer f, after the audio it missed while it waited
// for a copy of itself (early.go).
func (p *Pipeline) hear(t *userTurn, f audio.Frame) error {
	if err := p.hearMissed(t, f.Pos); err != nil {
		return err
	}
	return p.accept(t, f)
}

// hearMissed gives the recognizer, if it waited, the capture it missed
// before the stream position until, from the recent history (all of it
// unless the wait outlasted the history: then its start, which was quiet).
func (p *Pipeline) hearMissed(t *userTurn, until int64) error {
	if !t.waiting {
		return nil
	}
	t.waiting = false
	if missed := p.history.since(t.waitFrom, until); missed.Len() > 0 {
		return p.accept(t, missed)
	}
	return nil
}

func (p *Pipeline) accept(t *userTurn, f audio.Frame) error {
	partial, err := listening(p, stageASR, func() (string, error) { return p.cfg.ASR.Accept(f) })
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	t.heardUntil = f.Stop()
	if partial != t.partial {
		t.partial = partial
		p.emit(Event{Type: EvPartial, At: f.Stop(), Text: partial})
	}
	return nil
}

// vadEvent handles a speech boundary. Its event is stamped when the VAD
// reports it (a start is confirmed MinSpeech after it, an end MinSilence
// after), so the stream stays in time order; Pos is where the boundary
// lies, and the endpointing policy and the metrics count from there.
func (p *Pipeline) vadEvent(ev vad.Event, f audio.Frame) error {
	at := audio.Mono16k.Duration(ev.Pos)
	now := p.clk.Now()
	switch ev.Kind {
	case vad.SpeechStart:
		p.emit(Event{Type: EvSpeechStart, At: now, Pos: ev.Pos})
		p.stopPrefillAhead(false)
		if p.turn == nil {
			if err := p.openTurn(ev.Pos, f.Pos, p.continuing(ev.Pos)); err != nil {
				return err
			}
			if p.resp != nil {
				p.speechOverReply(p.turn)
			}
		}
		t := p.turn
		t.speaking = true
		t.ep.SpeechStart()
		if !p.barge.pending() {
			p.setState(StateUserSpeaking, now)
		}
	case vad.SpeechEnd:
		p.emit(Event{Type: EvSpeechEnd, At: now, Pos: ev.Pos})
		t := p.turn
		if t == nil {
			return nil
		}
		t.speaking = false
		t.speechEnd = at
		t.ep.SpeechEnd(at)
		if !p.barge.pending() {
			p.setState(StateListening, now)
		}
	}
	return nil
}

// turnPreSpeech is how much audio before the VAD's speech start the turn
// model hears: pipecat's pre_speech_ms, 500 ms
// (pipecat-ai/pipecat src/pipecat/audio/turn/smart_turn/base_smart_turn.py:28,215-221,
// where the segment starts pre_speech_ms plus vad_start_secs before a
// speech start that is itself vad_start_secs late).
const turnPreSpeech = 500 * time.Millisecond

// openTurn starts listening to a user turn whose speech began at start,
// giving the recognizer the pre-roll and everything up to the current
// frame (at), which frame() then feeds. continues is the turn just
// committed that it may go on from (nil if none).
func (p *Pipeline) openTurn(start, at int64, continues *committed) error {
	from := max(start-audio.Mono16k.Samples(p.cfg.PreRoll), p.preRollFloor(), p.committedUntil)
	p.cfg.ASR.Reset()
	t := &userTurn{
		ep:          turn.NewEndpointer(p.cfg.Endpoint, p.cfg.Turn != nil),
		speechStart: start,
		// The VAD confirms speech some time after it began; that much has
		// been spoken already.
		voiced:    int(max(at-start, 0)),
		continues: continues,
	}
	p.turn = t
	p.lastCommit = nil
	if pre := p.history.since(from, at); pre.Len() > 0 {
		// The turn model hears less of the time before the speech than
		// the recognizer: what Smart Turn is given in pipecat, whose
		// buffer starts pre_speech_ms before the speech (turnPreSpeech).
		// More room noise there changes the window's normalization.
		skip := min(max(start-audio.Mono16k.Samples(turnPreSpeech)-pre.Pos, 0), int64(pre.Len()))
		t.keepAudio(pre.Samples[skip:], int(audio.Mono16k.Samples(p.cfg.TurnWindow)))
		partial, err := listening(p, stageASR, func() (string, error) { return p.cfg.ASR.Accept(pre) })
		if err != nil {
			return fmt.Errorf("asr: %w", err)
		}
		t.partial = partial
	}
	return nil
}

// preRollFloor is the earliest capture a turn may start from: in half
// duplex, nothing from before the assistant went quiet, which would give
// the recognizer its voice.
func (p *Pipeline) preRollFloor() int64 {
	if !p.cfg.HalfDuplex.Enabled {
		return 0
	}
	return audio.Mono16k.Samples(p.playedUntil)
}

func (p *Pipeline) closeTurn() {
	p.cfg.ASR.Reset()
	p.turn = nil
}

// endpoint runs the endpointing policy for the open turn.
func (p *Pipeline) endpoint(ctx context.Context, now time.Duration) error {
	t := p.turn
	decision, reason := t.ep.Update(now)
	if decision == turn.Predict {
		window := t.audio[max(0, len(t.audio)-int(audio.Mono16k.Samples(p.cfg.TurnWindow))):]
		prob, err := listening(p, stageTurn, func() (float64, error) { return p.cfg.Turn.Predict(ctx, window) })
		if err != nil {
			return fmt.Errorf("turn detector: %w", err)
		}
		t.ep.Predicted(prob)
		decision, reason = t.ep.Update(now)
	}
	if decision == turn.Commit {
		return p.commit(reason)
	}
	return nil
}

// commit ends the user's turn and starts the response to it, once the
// turn's early final, if one is being made, is in.
func (p *Pipeline) commit(reason turn.Reason) error {
	t := p.turn
	if t.pending == "" {
		t.commitAt = p.now()
	}
	if e := t.early; e != nil && !e.ready {
		t.pending = reason
		return nil
	}
	commitAt := t.commitAt
	text, err := p.finalTranscript(t)
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	finalAt := p.now()
	p.closeTurn()
	p.committedUntil = p.history.end
	sentence := t.sentence(text)
	if reason := p.spec.missAtCommit(sentence); reason != "" {
		p.dropSpeculation(reason)
	}
	if sentence == "" {
		// Speech without words (noise, a cough): nothing to answer.
		p.emit(Event{Type: EvFinal, At: finalAt})
		return nil
	}
	p.turnNo++
	// A continuation that brought no words commits the sentence it
	// continued once more: its reply was dropped.
	said := cmp.Or(text, sentence)
	// Both published once the final transcript is in (which, with compute
	// on the clock, is after the decision to commit: the metrics keep both).
	p.emit(Event{Type: EvFinal, At: finalAt, Turn: p.turnNo, Text: said})
	p.emit(Event{Type: EvTurnCommit, At: finalAt, Turn: p.turnNo, Text: said, Reason: string(reason)})
	// A speculated reply answers the words as the partial had them,
	// without the final's closing punctuation: the history records what
	// the LLM was given, which its KV cache holds for the next turn.
	asked := sentence
	if s := p.spec.running(); s != nil {
		asked = s.transcript
	}
	p.cfg.History.AddUser(asked)
	p.setState(StateThinking, finalAt)
	m := TurnMetrics{SpeechEnd: t.speechEnd, Commit: commitAt, ASRFinal: finalAt}
	if p.cfg.ComputeScale > 0 {
		listening := t.compute
		m.Compute = &listening
	}
	if p.spec.running() != nil {
		p.adoptSpeculation(m)
	} else {
		p.resp = p.startResponse(m, p.cfg.History.Messages(), p.turnNo, "")
	}
	p.lastCommit = &committed{turn: p.turnNo, text: said, sentence: asked, at: finalAt, audio: t.audio, resp: p.resp}
	return nil
}

// continuing is the committed turn that speech starting at stream
// position start may continue, or nil: it starts within Config.Continue's
// window of the commit, while the reply to it is still the one going on
// and has been heard for less than MaxHeard when the speech began. The
// speech over the reply is decided on as any is (a cough, or the reply's
// own echo, lets it play on); once confirmed it continues the turn
// instead of interrupting it. With barge-in off no reply is cut, so no
// turn is continued.
func (p *Pipeline) continuing(start int64) *committed {
	c, cfg := p.lastCommit, p.cfg.Continue
	if c == nil || cfg.Window <= 0 || p.resp == nil || p.resp != c.resp || !p.barge.interrupts() {
		return nil
	}
	at := audio.Mono16k.Duration(start)
	if at-c.at > cfg.Window {
		return nil
	}
	if played := p.resp.metrics.PlaybackStart; played > 0 && at-played >= cfg.MaxHeard {
		return nil
	}
	return c
}

// continueTurn drops the reply to the turn t goes on from, once t's
// speech over it is confirmed, as a speculation miss is: the history
// keeps nothing of it (at most Continue.MaxHeard of it was heard, a word
// or two begun), and takes that turn's sentence back, to hold the whole
// sentence once, as one message, when t is committed.
func (p *Pipeline) continueTurn(t *userTurn) {
	c := t.continues
	t.continues = nil
	at := p.clk.Now()
	p.cutResponse()
	p.emit(Event{Type: EvTurnContinued, At: at, Turn: c.turn, Text: c.text})
	if p.cfg.History.TakeBackUser(c.sentence) {
		t.prefix = c.sentence
	}
	// The turn model judges the whole sentence, not its last words.
	window := int(audio.Mono16k.Samples(p.cfg.TurnWindow))
	t.audio = append(slices.Clone(c.audio), t.audio...)
	t.keepAudio(nil, window)
	if !t.speaking {
		p.setState(StateListening, at)
	}
}

// finalTranscript ends the turn's utterance: its early final, if one is
// in, or else the recognizer's. The ASR has been given the quiet since the
// speech ended (the endpointing wait): a recognizer that pads the
// utterance's end is told, and pads that much less.
func (p *Pipeline) finalTranscript(t *userTurn) (string, error) {
	if t.early != nil {
		return t.early.text, nil
	}
	if err := p.hearMissed(t, p.history.end); err != nil {
		return "", err
	}
	quiet := t.quiet()
	if qf, ok := p.cfg.ASR.(QuietFinalizer); ok && quiet > 0 {
		// The turn's own transcript: never given up half made.
		return listening(p, stageASR, func() (string, error) { return qf.FinalizeAfter(context.Background(), quiet) })
	}
	return listening(p, stageASR, p.cfg.ASR.Finalize)
}

// endResponse forgets the current response once it is over (played out,
// failed or cancelled). Speech that overlapped it becomes a turn of its
// own, unless it has ended as a sound without words that count (a cough, a
// backchannel), which was a reaction to the reply, not a request.
func (p *Pipeline) endResponse(quietAt time.Duration) {
	p.resp = nil
	p.playedUntil = max(p.playedUntil, quietAt)
	// A reply can end while paused or ducked for the user (its last
	// samples went in the fade, or it had none): the next one must not
	// start that way.
	p.player.Resume()
	if !p.barge.pending() {
		p.barge.replyEnded()
		return
	}
	t := p.turn
	if p.barge.settle(t.partial, t.speaking) {
		return
	}
	p.emit(Event{Type: EvSpeechIgnored, At: max(p.clk.Now(), quietAt), Text: t.partial})
	p.closeTurn()
}

// responseEnded handles a response whose goroutines have all returned.
func (p *Pipeline) responseEnded(r *response) {
	r.ended = true
	role := r.roleNow()
	switch role {
	case roleSpeculative:
		return // finished before its turn was committed; adopted or dropped then
	case roleDropped:
		p.stopping--
		return // a miss: nothing of it is published
	}
	if r.err != nil && !errors.Is(r.err, context.Canceled) {
		p.emit(Event{Type: EvError, At: p.clk.Now(), Turn: r.turn, Err: r.err.Error()})
	}
	stats := r.stats
	p.emit(Event{Type: EvLLMDone, At: p.clk.Now(), Turn: r.turn, Text: r.text(), Stats: &stats})
	if role == roleCancelled {
		p.stopping--
		return
	}
	p.trackPlayback()
}

// trackPlayback turns the player's progress into playback events and ends
// the response once its last sample has been played.
func (p *Pipeline) trackPlayback() {
	r := p.resp
	if r == nil {
		return
	}
	first, end, hasAudio := r.span()
	if hasAudio && r.metrics.PlaybackStart == 0 {
		if at, ok := p.player.DeviceTime(first); ok {
			r.metrics.PlaybackStart = at
			p.emit(Event{Type: EvPlaybackStart, At: at, Turn: r.turn})
			p.setState(StateSpeaking, at)
		}
	}
	if !r.ended {
		return
	}
	at := p.clk.Now()
	if hasAudio {
		if p.player.Consumed() < end {
			return
		}
		at, _ = p.player.DeviceTime(end - 1)
		at += p.player.Format().Duration(1)
		p.emit(Event{Type: EvPlaybackStop, At: at, Turn: r.turn})
		p.micOpen = at + p.cfg.HalfDuplex.Tail
	}
	if r.err == nil {
		p.remember(r.text(), false)
	} else {
		// Cut short by a failure: remember what was played, as after a
		// barge-in, so the next user message does not follow the last.
		_, written := r.heard(p.player.Consumed())
		p.remember(written, true)
	}
	p.finishTurn(r, at)
	p.endResponse(at)
	if t := p.turn; t != nil && t.speaking {
		p.setState(StateUserSpeaking, at)
	} else {
		p.setState(StateListening, at)
	}
}

// finishTurn records and publishes a turn's metrics once it is over, at
// at (which may be just ahead of the clock: when the reply's last sample
// will have played).
func (p *Pipeline) finishTurn(r *response, at time.Duration) {
	r.mu.Lock()
	m := *r.metrics
	m.Chunks = make([]ChunkSpan, 0, len(r.spoken))
	for _, c := range r.spoken {
		m.Chunks = append(m.Chunks, ChunkSpan{Text: c.text, Start: c.start, End: c.end})
	}
	if m.Compute != nil {
		c := *m.Compute
		c.merge(r.compute)
		c.LLMPrefill, c.LLMDecode = ms(r.stats.Prefill), ms(r.stats.Decode)
		m.Compute = &c
	}
	r.mu.Unlock()
	m.derive()
	p.mu.Lock()
	p.metrics = append(p.metrics, m)
	p.mu.Unlock()
	p.emit(Event{Type: EvTurnMetrics, At: at, Turn: r.turn, Metrics: &m})
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
	if !p.turnStates.move(&p.state, s) {
		return
	}
	p.emit(Event{Type: EvState, At: at, State: s})
}

func (p *Pipeline) emit(e Event) { p.events.emit(e) }
