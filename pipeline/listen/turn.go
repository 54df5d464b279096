package listen

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/turn"
)

// committed is a turn as committed, kept while the user may continue it.
type committed struct {
	turn     int
	text     string // the words shown for it
	sentence string // the user message the history holds for it
	at       time.Duration
	audio    []float32 // what the turn model heard
	heard    time.Duration
}

// userTurn is the user's turn being listened to.
type userTurn struct {
	// continues is the turn just committed that this one may go on from,
	// if its speech is confirmed over the reply (Listener.Continue);
	// prefix and shown are that turn's sentence and words once the
	// history took it back: what the user says now is its end.
	continues     *committed
	prefix, shown string
	ep            *turn.Endpointer
	audio         []float32 // the latest turn audio, for the turn model
	voiced        int       // samples the VAD called speech since it opened
	speechEnd     time.Duration
	heardUntil    time.Duration // end of the audio given to the ASR
	partial       string
	compute       event.StageCompute // the listening path's, with a compute scale
	// early is the final transcript of a copy of the recognizer made when
	// the VAD ended the speech (early.go); a commit decided at commitAt
	// for reason waits for it while Finalizing.
	early    *Early
	reason   turn.Reason
	commitAt time.Duration
	// waiting is set while the recognizer is not given the capture, from
	// stream position waitFrom on, because a copy of it is finalizing.
	waiting  bool
	waitFrom int64
	// spotting is set while a wake session checks the turn's first words
	// for a wake phrase.
	spotting bool
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

// turnPreSpeech is how much audio before the VAD's speech start the turn
// model hears: pipecat's pre_speech_ms, 500 ms
// (pipecat-ai/pipecat src/pipecat/audio/turn/smart_turn/base_smart_turn.py:28,215-221,
// where the segment starts pre_speech_ms plus vad_start_secs before a
// speech start that is itself vad_start_secs late).
const turnPreSpeech = 500 * time.Millisecond

// open starts listening to a user turn whose speech began at start,
// giving the recognizer the pre-roll and everything up to the current
// frame (at), which Listen then feeds. continues is the turn just
// committed that it may go on from (nil if none).
func (l *Listener) open(start, at int64, continues *committed) error {
	from := max(start-audio.Mono16k.Samples(l.cfg.PreRoll), l.committedUntil)
	if l.cfg.HalfDuplex {
		from = max(from, l.quietSince)
	}
	asr := l.cfg.Stages.ASR
	asr.Reset()
	t := &userTurn{
		ep: turn.NewEndpointer(l.cfg.Endpoint, l.cfg.Stages.Turn != nil),
		// The VAD confirms speech some time after it began; that much has
		// been spoken already.
		voiced:    int(max(at-start, 0)),
		continues: continues,
	}
	l.turn, l.last = t, nil
	l.to(Speaking)
	if pre := l.recent.since(from, at); pre.Len() > 0 {
		// The turn model hears less of the time before the speech than
		// the recognizer: what Smart Turn is given in pipecat, whose
		// buffer starts pre_speech_ms before the speech (turnPreSpeech).
		// More room noise there changes the window's normalization.
		skip := min(max(start-audio.Mono16k.Samples(turnPreSpeech)-pre.Pos, 0), int64(pre.Len()))
		t.keepAudio(pre.Samples[skip:], l.window())
		partial, err := asr.Accept(pre)
		if err != nil {
			return fmt.Errorf("asr: %w", err)
		}
		t.partial = partial
	}
	return nil
}

// window is the most turn audio the turn model is given, in samples.
func (l *Listener) window() int { return int(audio.Mono16k.Samples(l.cfg.TurnWindow)) }

// close forgets the open turn: committed (with last, the turn as it was
// committed, to continue), or a sound that was no turn (last nil).
func (l *Listener) close(last *committed) {
	l.cfg.Stages.ASR.Reset()
	l.turn, l.last = nil, last
	if last != nil {
		l.to(Committed)
	} else {
		l.to(Idle)
	}
}

// continuing is the committed turn that speech starting at stream
// position start may continue, or nil: it starts within Config.Continue's
// window of the commit, while the reply to it is still the one going on
// (the listening side is still Committed) and has been heard for less
// than MaxHeard when the speech began. The speech over the reply is
// decided on as any is (a cough, or the reply's own echo, lets it play
// on); once confirmed it continues the turn instead of interrupting it.
func (l *Listener) continuing(start int64) *committed {
	c, cfg := l.last, l.cfg.Continue
	if l.phase != Committed || cfg.Window <= 0 {
		return nil
	}
	at := audio.Mono16k.Duration(start)
	if at-c.at > cfg.Window {
		return nil
	}
	if c.heard > 0 && at-c.heard >= cfg.MaxHeard {
		return nil
	}
	return c
}

// Continues says whether the open turn goes on from the one committed
// just before, once its speech over that turn's reply is confirmed.
func (l *Listener) Continues() bool { return l.turn.continues != nil }

// Continue makes the open turn go on from the one it continues, whose
// reply the session has dropped: the history takes that turn's sentence
// back, to hold the whole sentence once, as one message, when the turn
// is committed again as the same turn; and the turn model judges the
// whole sentence, not its last words.
func (l *Listener) Continue() {
	t := l.turn
	c := t.continues
	l.cfg.Emit(event.Event{Type: event.EvTurnContinued, At: l.cfg.Clock.Now(), Turn: c.turn, Text: c.text})
	if l.cfg.History.TakeBackUser(c.sentence) {
		t.prefix, t.shown = c.sentence, c.text
		l.turns--
	}
	t.audio = append(slices.Clone(c.audio), t.audio...)
	t.continues = nil
	t.keepAudio(nil, l.window())
}

// Final is an open turn's end: its final transcript, in when the
// listening path had it.
type Final struct {
	Reason turn.Reason
	// Words are the turn's own; Sentence is the user message they make
	// with the sentence the turn continues.
	Words, Sentence string
	At              time.Duration
}

// final ends the open turn's utterance for reason: its early final, if one
// is in, or else the recognizer's; nil while the early final is still
// being made (Finalizing, until EarlyIn).
func (l *Listener) final(reason turn.Reason) (*Final, error) {
	t := l.turn
	if l.phase != Finalizing {
		t.commitAt = l.Now()
	}
	if e := t.early; e != nil && !e.ready {
		t.reason = reason
		l.to(Finalizing)
		return nil, nil
	}
	words, err := l.finalWords()
	if err != nil {
		return nil, fmt.Errorf("asr: %w", err)
	}
	words = l.withoutPhrase(words)
	l.committedUntil = l.recent.end
	return &Final{Reason: reason, Words: words, Sentence: t.sentence(words), At: l.Now()}, nil
}

// finalWords are the turn's words at its end: its early final, if one is
// in, or else the recognizer's. The ASR has been given the quiet since the
// speech ended (the endpointing wait): a recognizer that pads the
// utterance's end is told, and pads that much less.
func (l *Listener) finalWords() (string, error) {
	t := l.turn
	if t.early != nil {
		// Its compute is in the turn's ASR already (EarlyIn), with that of
		// copies dropped before it.
		t.compute.ASRFinal = event.Millis(t.early.compute)
		return t.early.text, nil
	}
	if err := l.hearMissed(l.recent.end); err != nil {
		return "", err
	}
	if quiet := l.quiet(); l.cfg.Stages.Quiet != nil && quiet > 0 {
		// The turn's own transcript: never given up half made.
		return l.cfg.Stages.Quiet.FinalizeAfter(context.Background(), quiet)
	}
	return l.cfg.Stages.ASR.Finalize()
}

// TakeTurn numbers a turn of the assistant's own (the host's say), which
// a barge-in may cut as any reply, and after which a wake session's
// follow-up window opens (ReplyOver).
func (l *Listener) TakeTurn() int {
	l.turns++
	l.replying = true
	return l.turns
}

// Turn is a user turn as committed.
type Turn struct {
	Number int
	// Metrics are the turn's milestones up to its final transcript.
	Metrics event.TurnMetrics
}

// Commit ends the open turn with its final transcript, asked being the
// user message the reply is given (the final's sentence, or the words a
// speculative reply answered as the partial had them: the history records
// what the LLM was given, which its KV cache holds for the next turn). It
// publishes the final and the commit, and says false for speech without
// words (noise, a cough): nothing to answer.
func (l *Listener) Commit(fin *Final, asked string) (Turn, bool) {
	t := l.turn
	if fin.Sentence == "" {
		l.close(nil)
		l.cfg.Emit(event.Event{Type: event.EvFinal, At: fin.At})
		return Turn{}, false
	}
	l.turns++
	// A continued turn is shown whole again; one that brought no words
	// commits the sentence it continued once more: its reply was dropped.
	said := JoinWords(t.shown, fin.Words)
	l.close(&committed{turn: l.turns, text: said, sentence: asked, at: fin.At, audio: t.audio})
	// Both published once the final transcript is in (which, with compute
	// on the clock, is after the decision to commit: the metrics keep both).
	l.cfg.Emit(event.Event{Type: event.EvFinal, At: fin.At, Turn: l.turns, Text: said})
	l.cfg.Emit(event.Event{Type: event.EvTurnCommit, At: fin.At, Turn: l.turns, Text: said, Reason: string(fin.Reason)})
	l.cfg.History.AddUser(asked)
	l.replying = true
	m := event.TurnMetrics{SpeechEnd: t.speechEnd, Commit: t.commitAt, ASRFinal: fin.At}
	if l.cfg.Charger != nil {
		listening := t.compute
		m.Compute = &listening
	}
	return Turn{Number: l.turns, Metrics: m}, true
}

// quiet is how much audio the recognizer was given after the speech
// ended: the room's quiet, which pushes the last words through its
// encoder as end-of-utterance padding does.
func (l *Listener) quiet() time.Duration {
	if l.Speaking() {
		return 0
	}
	return max(l.turn.heardUntil-l.turn.speechEnd, 0)
}

// hear gives the recognizer f, after the audio it missed while it waited
// for a copy of itself (early.go).
func (l *Listener) hear(f audio.Frame) error {
	if err := l.hearMissed(f.Pos); err != nil {
		return err
	}
	return l.accept(f)
}

// hearMissed gives the recognizer, if it waited, the capture it missed
// before the stream position until, from the recent audio (all of it
// unless the wait outlasted what is kept: then its start, which was quiet).
func (l *Listener) hearMissed(until int64) error {
	t := l.turn
	if !t.waiting {
		return nil
	}
	t.waiting = false
	if missed := l.recent.since(t.waitFrom, until); missed.Len() > 0 {
		return l.accept(missed)
	}
	return nil
}

func (l *Listener) accept(f audio.Frame) error {
	t := l.turn
	partial, err := l.cfg.Stages.ASR.Accept(f)
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	t.heardUntil = f.Stop()
	if partial != t.partial {
		t.partial = partial
		l.cfg.Emit(event.Event{Type: event.EvPartial, At: f.Stop(), Text: partial})
	}
	return nil
}
