package pipeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/turn"
	"github.com/voiceassistant/voice/vad"
)

// The listening side: the user's turn as the VAD, the recognizer and the
// endpointing policy hear it, from the speech that opens it to its
// commit, and the commit while the user may still continue it. Its phases
// and their transitions are docs/ARCHITECTURE.md's listening table:
//
//	idle, committed ─speech→ speaking ─quiet→ paused ─speech→ speaking
//	paused ─commit→ finalizing (waits for the early final) ─in→ committed
//	speaking, paused, finalizing ─commit→ committed, idle (no words)
//	speaking, paused, finalizing ─close→ idle (a sound that was no turn)
//	committed ─reply over→ idle
type phase int

const (
	// phaseIdle: no turn is open, and none may be continued.
	phaseIdle phase = iota
	// phaseSpeaking: a turn is open and the VAD hears its speech.
	phaseSpeaking
	// phasePaused: the turn's speech has ended; the endpointing policy
	// decides whether the turn is over.
	phasePaused
	// phaseFinalizing: the turn is committed and waits for its early
	// final (early.go).
	phaseFinalizing
	// phaseCommitted: no turn is open; the last one committed may be
	// continued while its reply is young (Config.Continue).
	phaseCommitted
)

var phaseNames = [...]string{"idle", "speaking", "paused", "finalizing", "committed"}

func (s phase) String() string { return phaseNames[s] }

// phaseTransitions are the listening side's legal moves.
var phaseTransitions = map[phase][]phase{
	phaseIdle:       {phaseSpeaking},
	phaseSpeaking:   {phasePaused, phaseCommitted, phaseIdle},
	phasePaused:     {phaseSpeaking, phaseFinalizing, phaseCommitted, phaseIdle},
	phaseFinalizing: {phaseSpeaking, phaseCommitted, phaseIdle},
	phaseCommitted:  {phaseSpeaking, phaseIdle},
}

// listener is the listening side, run by Run's goroutine.
type listener struct {
	cfg     *Config
	clk     clock.Clock
	stages  *stages
	charger *compute.Charger
	emit    func(Event)

	phase   phase
	machine fsm.Machine[phase]
	history recentAudio
	turn    *userTurn
	// last is the turn committed last, while phaseCommitted.
	last *committed
	// committedUntil is the end of the audio the last commit took: no
	// later turn's pre-roll reaches back before it, so no word is
	// recognized twice.
	committedUntil int64
	// quietSince is when the assistant last went quiet: in half duplex,
	// capture before it holds the assistant's voice and is no pre-roll.
	quietSince int64
	// Early finals being made (early.go), and where they come in.
	finishing int
	finals    chan *earlyFinal
}

// committed is a turn as committed, kept while the user may continue it.
type committed struct {
	turn     int
	text     string // the commit's own words
	sentence string // the user message the history holds for it
	at       time.Duration
	audio    []float32 // what the turn model heard
}

// userTurn is the user's turn being listened to.
type userTurn struct {
	// continues is the turn just committed that this one may go on from,
	// if its speech is confirmed over the reply (Pipeline.continueTurn);
	// prefix is that turn's sentence once the history took it back: what
	// the user says now is its end.
	continues  *committed
	prefix     string
	ep         *turn.Endpointer
	audio      []float32 // the latest turn audio, for the turn model
	voiced     int       // samples the VAD called speech since it opened
	speechEnd  time.Duration
	heardUntil time.Duration // end of the audio given to the ASR
	partial    string
	compute    StageCompute // the listening path's, with a compute scale
	// early is the final transcript of a copy of the recognizer made when
	// the VAD ended the speech (early.go); a commit decided at commitAt
	// for reason waits for it while phaseFinalizing.
	early    *earlyFinal
	reason   turn.Reason
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

// keepAudio appends to the turn's audio, keeping at least the last window
// samples; trimming only when twice that has built up keeps it cheap.
func (t *userTurn) keepAudio(samples []float32, window int) {
	t.audio = append(t.audio, samples...)
	if len(t.audio) > 2*window {
		t.audio = append(t.audio[:0], t.audio[len(t.audio)-window:]...)
	}
}

func (l *listener) to(next phase) { l.machine.Move(&l.phase, next) }

// speaking says whether the VAD hears the open turn's speech.
func (l *listener) speaking() bool { return l.phase == phaseSpeaking }

// now is the listening path's time: the clock's, or later while it is
// still busy with the compute it has been charged.
func (l *listener) now() time.Duration { return l.charger.Now(l.clk) }

// Spent charges the listening path's compute to the open turn
// (compute.Account).
func (l *listener) Spent(s event.Stage, d time.Duration) {
	if l.turn != nil {
		l.turn.compute.Add(s, d)
	}
}

// quiet is how much audio the recognizer was given after the speech
// ended: the room's quiet, which pushes the last words through its
// encoder as end-of-utterance padding does.
func (l *listener) quiet() time.Duration {
	if l.speaking() {
		return 0
	}
	return max(l.turn.heardUntil-l.turn.speechEnd, 0)
}

// turnPreSpeech is how much audio before the VAD's speech start the turn
// model hears: pipecat's pre_speech_ms, 500 ms
// (pipecat-ai/pipecat src/pipecat/audio/turn/smart_turn/base_smart_turn.py:28,215-221,
// where the segment starts pre_speech_ms plus vad_start_secs before a
// speech start that is itself vad_start_secs late).
const turnPreSpeech = 500 * time.Millisecond

// open starts listening to a user turn whose speech began at start,
// giving the recognizer the pre-roll and everything up to the current
// frame (at), which frame() then feeds. continues is the turn just
// committed that it may go on from (nil if none).
func (l *listener) open(start, at int64, continues *committed) error {
	from := max(start-audio.Mono16k.Samples(l.cfg.PreRoll), l.committedUntil)
	if l.cfg.HalfDuplex.Enabled {
		from = max(from, l.quietSince)
	}
	l.stages.asr.Reset()
	t := &userTurn{
		ep: turn.NewEndpointer(l.cfg.Endpoint, l.stages.turn != nil),
		// The VAD confirms speech some time after it began; that much has
		// been spoken already.
		voiced:    int(max(at-start, 0)),
		continues: continues,
	}
	l.turn, l.last = t, nil
	l.to(phaseSpeaking)
	if pre := l.history.since(from, at); pre.Len() > 0 {
		// The turn model hears less of the time before the speech than
		// the recognizer: what Smart Turn is given in pipecat, whose
		// buffer starts pre_speech_ms before the speech (turnPreSpeech).
		// More room noise there changes the window's normalization.
		skip := min(max(start-audio.Mono16k.Samples(turnPreSpeech)-pre.Pos, 0), int64(pre.Len()))
		t.keepAudio(pre.Samples[skip:], l.window())
		partial, err := l.stages.asr.Accept(pre)
		if err != nil {
			return fmt.Errorf("asr: %w", err)
		}
		t.partial = partial
	}
	return nil
}

// window is the most turn audio the turn model is given, in samples.
func (l *listener) window() int { return int(audio.Mono16k.Samples(l.cfg.TurnWindow)) }

// close forgets the open turn: committed (with last, the turn as it was
// committed, to continue), or a sound that was no turn (last nil).
func (l *listener) close(last *committed) {
	l.stages.asr.Reset()
	l.turn, l.last = nil, last
	if last != nil {
		l.to(phaseCommitted)
	} else {
		l.to(phaseIdle)
	}
}

// replyOver ends the time the last commit could be continued in.
func (l *listener) replyOver() {
	if l.phase == phaseCommitted {
		l.last = nil
		l.to(phaseIdle)
	}
}

// speechEnded is the VAD's end of the open turn's speech at at.
func (l *listener) speechEnded(at time.Duration) {
	t := l.turn
	l.to(phasePaused)
	t.speechEnd = at
	t.ep.SpeechEnd(at)
}

// hear gives the recognizer f, after the audio it missed while it waited
// for a copy of itself (early.go).
func (l *listener) hear(f audio.Frame) error {
	if err := l.hearMissed(f.Pos); err != nil {
		return err
	}
	return l.accept(f)
}

// hearMissed gives the recognizer, if it waited, the capture it missed
// before the stream position until, from the recent history (all of it
// unless the wait outlasted the history: then its start, which was quiet).
func (l *listener) hearMissed(until int64) error {
	t := l.turn
	if !t.waiting {
		return nil
	}
	t.waiting = false
	if missed := l.history.since(t.waitFrom, until); missed.Len() > 0 {
		return l.accept(missed)
	}
	return nil
}

func (l *listener) accept(f audio.Frame) error {
	t := l.turn
	partial, err := l.stages.asr.Accept(f)
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	t.heardUntil = f.Stop()
	if partial != t.partial {
		t.partial = partial
		l.emit(Event{Type: EvPartial, At: f.Stop(), Text: partial})
	}
	return nil
}

// listen takes a frame of the open turn: the recognizer hears it (or, while
// a copy of it finalizes, waits: early.go) and the endpointing policy
// sees the transcript.
func (l *listener) listen(f audio.Frame, heard vad.Result) error {
	t := l.turn
	if heard.Voiced {
		t.voiced += f.Len()
	}
	t.keepAudio(f.Samples, l.window())
	if t.early != nil && !l.speaking() {
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

// endpoint runs the endpointing policy for the open turn: a reason to
// commit it, or "".
func (l *listener) endpoint(ctx context.Context, now time.Duration) (turn.Reason, error) {
	t := l.turn
	decision, reason := t.ep.Update(now)
	if decision == turn.Predict {
		window := t.audio[max(0, len(t.audio)-l.window()):]
		prob, err := l.stages.turn.Predict(ctx, window)
		if err != nil {
			return "", fmt.Errorf("turn detector: %w", err)
		}
		t.ep.Predicted(prob)
		decision, reason = t.ep.Update(now)
	}
	if decision == turn.Commit {
		return reason, nil
	}
	return "", nil
}

// final ends the turn's utterance: its early final, if one is in, or
// else the recognizer's. The ASR has been given the quiet since the
// speech ended (the endpointing wait): a recognizer that pads the
// utterance's end is told, and pads that much less.
func (l *listener) final() (string, error) {
	t := l.turn
	if t.early != nil {
		return t.early.text, nil
	}
	if err := l.hearMissed(l.history.end); err != nil {
		return "", err
	}
	if quiet := l.quiet(); l.stages.quiet != nil && quiet > 0 {
		// The turn's own transcript: never given up half made.
		return l.stages.quiet.FinalizeAfter(context.Background(), quiet)
	}
	return l.stages.asr.Finalize()
}

// continueWith makes the open turn go on from the one it continues, once
// its speech over the reply is confirmed: prefix is that turn's sentence
// if the history took it back, and the turn model judges the whole
// sentence, not its last words.
func (l *listener) continueWith(prefix string) {
	t := l.turn
	t.audio = append(slices.Clone(t.continues.audio), t.audio...)
	t.continues, t.prefix = nil, prefix
	t.keepAudio(nil, l.window())
}
