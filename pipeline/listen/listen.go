// Package listen is the user's side of a turn: the user's turn as the VAD,
// the recognizer and the endpointing policy hear it, from the speech that
// opens it to its commit, and the commit while the user may still
// continue it. The session (package pipeline) calls it frame by frame and
// acts on what it answers; nothing outside touches its state.
//
// Its phases and their transitions are docs/ARCHITECTURE.md's listening
// table:
//
//	idle, committed ─speech→ speaking ─quiet→ paused ─speech→ speaking
//	paused ─commit→ finalizing (waits for the early final) ─in→ committed
//	speaking, paused, finalizing ─commit→ committed, idle (no words)
//	speaking, paused, finalizing ─close→ idle (a sound that was no turn)
//	committed ─reply over→ idle
package listen

import (
	"context"
	"fmt"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/vad"
)

// Phase is where the listening side is in a turn.
type Phase int

const (
	// Idle: no turn is open, and none may be continued.
	Idle Phase = iota
	// Speaking: a turn is open and the VAD hears its speech.
	Speaking
	// Paused: the turn's speech has ended; the endpointing policy decides
	// whether the turn is over.
	Paused
	// Finalizing: the turn is committed and waits for its early final
	// (early.go).
	Finalizing
	// Committed: no turn is open; the last one committed may be continued
	// while its reply is young (Config.Continue).
	Committed
)

var phaseNames = [...]string{"idle", "speaking", "paused", "finalizing", "committed"}

func (s Phase) String() string { return phaseNames[s] }

// Transitions are the listening side's legal moves.
var Transitions = map[Phase][]Phase{
	Idle:       {Speaking},
	Speaking:   {Paused, Committed, Idle},
	Paused:     {Speaking, Finalizing, Committed, Idle},
	Finalizing: {Speaking, Committed, Idle},
	Committed:  {Speaking, Idle},
}

// Config assembles a listening side: its stages, where it writes and
// publishes, and its policy.
type Config struct {
	Clock clock.Clock
	// Charger is the session's (nil when compute is free): the listening
	// path's time is the clock's plus the compute it is behind by.
	Charger *compute.Charger
	Stages  Stages
	History History
	Emit    func(event.Event)
	// Report takes an illegal phase transition, a bug (fsm.Machine).
	Report func(error)

	Endpoint turn.Config
	// PreRoll is audio kept before the VAD's speech start and given to the
	// recognizer, so the first phoneme is not clipped.
	PreRoll time.Duration
	// TurnWindow is the most audio given to the turn model.
	TurnWindow time.Duration
	// HalfDuplex: capture from before the assistant last went quiet holds
	// its voice, and is no turn's pre-roll.
	HalfDuplex bool
	// Continue is when speech right after a commit continues that turn;
	// the session gives a Window of 0 where no reply is ever cut.
	Continue Continuation
	// Activation is what opens a turn.
	Activation Activation
}

// Continuation lets the user go on after the end of their turn was called
// too early ("wait" — a pause — "I meant the other one"): speech that
// starts within Window of a commit, while the reply to it has played for
// less than MaxHeard, and is confirmed over it as a barge-in would be,
// continues the committed turn. The reply is dropped as a speculation
// miss is, and the turn is committed again, as the same turn, with the
// whole sentence, which the history holds once. A Window of 0 turns it
// off.
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

// Listener is the listening side. Its methods are for the goroutine that
// runs the session.
type Listener struct {
	cfg     Config
	phase   Phase
	machine fsm.Machine[Phase]
	recent  recentAudio
	turn    *userTurn
	// last is the turn committed last, while Committed.
	last *committed
	// turns counts the turns committed, less those continued.
	turns int
	// committedUntil is the end of the audio the last commit took: no
	// later turn's pre-roll reaches back before it, so no word is
	// recognized twice.
	committedUntil int64
	// quietSince is when the assistant last went quiet: in half duplex,
	// capture before it holds the assistant's voice and is no pre-roll.
	quietSince int64
	// Early finals being made (early.go), and where they come in.
	finishing int
	finals    chan *Early
	// phrases are the wake phrases, each as its words.
	phrases [][]string
	// talking is set between the talk button's start and stop (push).
	talking bool
	// replying is set from a commit to the end of its reply, and
	// armedUntil is when the host's wake or a reply's follow-up window
	// ends: speech then needs no wake phrase (wake).
	replying   bool
	armedUntil time.Duration
}

// New is a listening side, idle.
func New(cfg Config) *Listener {
	l := &Listener{
		cfg:     cfg,
		machine: fsm.New("listening", Transitions, cfg.Report),
		recent:  newRecentAudio(cfg.PreRoll + time.Second),
		finals:  make(chan *Early),
	}
	for _, p := range cfg.Activation.Phrases {
		l.phrases = append(l.phrases, SplitWords(p))
	}
	return l
}

func (l *Listener) to(next Phase) { l.machine.Move(&l.phase, next) }

// Open says whether a user turn is open.
func (l *Listener) Open() bool { return l.turn != nil }

// Speaking says whether the VAD hears the open turn's speech.
func (l *Listener) Speaking() bool { return l.phase == Speaking }

// Now is the listening path's time: the clock's, or later while it is
// still busy with the compute it has been charged.
func (l *Listener) Now() time.Duration { return l.cfg.Charger.Now(l.cfg.Clock) }

// NextTurn is the number the open turn will be committed as.
func (l *Listener) NextTurn() int { return l.turns + 1 }

// Spent charges the listening path's compute to the open turn
// (compute.Account).
func (l *Listener) Spent(s event.Stage, d time.Duration) {
	if l.turn != nil {
		l.turn.compute.Add(s, d)
	}
}

// Hear keeps a capture frame and runs the VAD on it; muted, the VAD hears
// silence instead (in half duplex, while the microphone hears the
// assistant). The pre-roll kept reaches back only to when the assistant
// went quiet.
func (l *Listener) Hear(f audio.Frame, muted bool) (vad.Result, error) {
	l.Keep(f)
	if muted {
		f.Samples = make([]float32, len(f.Samples))
	}
	heard, err := l.cfg.Stages.VAD.Process(f)
	if err != nil {
		return heard, fmt.Errorf("vad: %w", err)
	}
	return heard, nil
}

// Change is what a speech boundary did to the listening side.
type Change int

const (
	// NoTurn: the speech that ended was no turn's.
	NoTurn Change = iota
	// TurnOpened: speech opened a new turn.
	TurnOpened
	// SpeechResumed: the open turn's speech went on.
	SpeechResumed
	// SpeechPaused: the open turn's speech ended.
	SpeechPaused
	// TurnSpotting: speech a wake session checks for its phrase: no turn
	// yet, and none if the phrase is not said.
	TurnSpotting
	// TurnWoken: the speech being spotted began with a wake phrase: it is
	// a turn from now on.
	TurnWoken
	// TurnHeard: the open turn heard a frame.
	TurnHeard
)

// Boundary takes a speech boundary the VAD reported in the frame at
// stream position at, and publishes it. Its event is stamped when the VAD
// reports it (a start is confirmed MinSpeech after it, an end MinSilence
// after), so the stream stays in time order; ev.Pos is where the boundary
// lies, and the endpointing policy and the metrics count from there.
func (l *Listener) Boundary(ev vad.Event, at int64) (Change, error) {
	now := l.cfg.Clock.Now()
	if ev.Kind == vad.SpeechEnd {
		l.cfg.Emit(event.Event{Type: event.EvSpeechEnd, At: now, Pos: ev.Pos})
		if l.turn == nil {
			return NoTurn, nil
		}
		if l.turn.spotting {
			l.close(nil) // it ended without the phrase
			return NoTurn, nil
		}
		t := l.turn
		l.to(Paused)
		t.speechEnd = audio.Mono16k.Duration(ev.Pos)
		t.ep.SpeechEnd(t.speechEnd)
		return SpeechPaused, nil
	}
	l.cfg.Emit(event.Event{Type: event.EvSpeechStart, At: now, Pos: ev.Pos})
	change := SpeechResumed
	switch l.phase {
	case Idle, Committed:
		spotting := l.cfg.Activation.Mode == ActivateWake && !l.armed(ev.Pos)
		switch {
		case l.pushed():
			return NoTurn, nil // only the talk button opens a turn
		case spotting && len(l.cfg.Activation.Phrases) == 0:
			return NoTurn, nil // only the host's wake does
		}
		if err := l.open(ev.Pos, at, l.continuing(ev.Pos)); err != nil {
			return NoTurn, err
		}
		l.turn.spotting = spotting
		change = TurnOpened
		if spotting {
			change = TurnSpotting
		}
	case Paused, Finalizing:
		l.to(Speaking) // the open turn goes on
	}
	l.turn.ep.SpeechStart()
	return change, nil
}

// Listen takes a frame of the open turn: the recognizer hears it (or, while
// a copy of it finalizes, waits: early.go) and the endpointing policy
// sees the transcript. It says TurnHeard, or for speech a wake session is
// spotting its phrase in, TurnSpotting, TurnWoken once the phrase is
// said, or NoTurn once it is ruled out.
func (l *Listener) Listen(f audio.Frame, heard vad.Result) (Change, error) {
	t := l.turn
	if t.spotting {
		if err := l.hear(f); err != nil {
			return NoTurn, err
		}
		if !l.spot() {
			if l.turn != t {
				return NoTurn, nil // ruled out
			}
			return TurnSpotting, nil
		}
		return TurnWoken, l.listened(f, heard)
	}
	return TurnHeard, l.listened(f, heard)
}

// listened is Listen for a turn that is the user's.
func (l *Listener) listened(f audio.Frame, heard vad.Result) error {
	t := l.turn
	if heard.Voiced {
		t.voiced += f.Len()
	}
	t.keepAudio(f.Samples, l.window())
	if t.early != nil && !l.Speaking() {
		// A copy of the recognizer is finalizing the turn as if the
		// quiet went on: the recognizer waits, and is given what it
		// missed should the speech resume.
		if !t.waiting {
			t.waiting, t.waitFrom = true, f.Pos
		}
	} else if err := l.hear(f); err != nil {
		return err
	}
	t.ep.Transcript(t.partial, f.Stop())
	return nil
}

// Decide runs the endpointing policy for the open turn at now: the turn's
// final transcript once it is over, or nil while it goes on or its commit
// waits for its early final.
func (l *Listener) Decide(ctx context.Context, now time.Duration) (*Final, error) {
	if l.phase == Finalizing || l.pushed() {
		return nil, nil // in a push session the button ends the turn
	}
	t := l.turn
	decision, reason := t.ep.Update(now)
	if decision == turn.Predict {
		window := t.audio[max(0, len(t.audio)-l.window()):]
		prob, err := l.cfg.Stages.Turn.Predict(ctx, window)
		if err != nil {
			return nil, fmt.Errorf("turn detector: %w", err)
		}
		t.ep.Predicted(prob)
		decision, reason = t.ep.Update(now)
	}
	if decision != turn.Commit {
		return nil, nil
	}
	return l.final(reason)
}

// Speech is the open turn's speech as the barge-in policy weighs it.
type Speech struct {
	Partial  string
	Voiced   time.Duration // how long the VAD called it speech
	Speaking bool
	Ended    time.Duration // when its speech last ended
}

// Speech is the open turn's speech so far.
func (l *Listener) Speech() Speech {
	t := l.turn
	return Speech{Partial: l.withoutPhrase(t.partial), Voiced: audio.Mono16k.Duration(int64(t.voiced)), Speaking: l.Speaking(), Ended: t.speechEnd}
}

// Words is what a reply started now would answer: the open turn's
// transcript (its early final once in), and the sentence it makes with
// the turn it continues.
func (l *Listener) Words() (words, sentence string) {
	words = l.withoutPhrase(l.turn.transcript())
	return words, l.turn.sentence(words)
}

// Dismiss forgets the open turn: a sound that was no turn.
func (l *Listener) Dismiss() { l.close(nil) }

// ReplyStarted is the news that the reply to the last commit started
// playing at at: it can be continued only while young.
func (l *Listener) ReplyStarted(at time.Duration) {
	if l.last != nil && l.last.heard == 0 {
		l.last.heard = at
	}
}

// ReplyOver ends the time the last commit could be continued in; the
// assistant went quiet at quietAt.
func (l *Listener) ReplyOver(quietAt time.Duration) {
	l.quietSince = max(l.quietSince, audio.Mono16k.Samples(quietAt))
	l.replying = false
	l.armedUntil = max(l.armedUntil, quietAt+l.cfg.Activation.FollowUp)
	if l.phase == Committed {
		l.last = nil
		l.to(Idle)
	}
}

// Stop waits for the early finals still being made, each of which holds
// the clock; the session's end calls it once their contexts are done.
func (l *Listener) Stop() {
	for ; l.finishing > 0; l.finishing-- {
		<-l.finals
		l.cfg.Clock.Release()
	}
}
