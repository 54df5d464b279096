package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
)

// InterruptMode is what the assistant does when the user's voice starts
// while it is responding.
type InterruptMode string

const (
	// InterruptPause stops playback at once, keeps generating and
	// synthesizing, and then either cancels the reply (a confirmed
	// barge-in) or plays on from where it stopped.
	InterruptPause InterruptMode = "pause"
	// InterruptDuck lowers playback instead of stopping it while deciding.
	InterruptDuck InterruptMode = "duck"
	// InterruptOff lets every reply play to its end; speech over it is
	// still heard and becomes the next turn.
	InterruptOff InterruptMode = "off"
)

// Set parses a mode, also from the true/false of older configurations
// (true is pause); it makes InterruptMode a command-line flag value.
func (m *InterruptMode) Set(s string) error {
	switch v := InterruptMode(strings.ToLower(strings.TrimSpace(s))); v {
	case InterruptPause, InterruptDuck, InterruptOff:
		*m = v
	case "true":
		*m = InterruptPause
	case "false":
		*m = InterruptOff
	default:
		return fmt.Errorf("%q is not a barge-in mode (pause, duck or off)", s)
	}
	return nil
}

func (m InterruptMode) String() string { return string(m) }

// Type names the flag value in help text.
func (m InterruptMode) Type() string { return "pause|duck|off" }

// UnmarshalText lets config files spell the mode as flags do.
func (m *InterruptMode) UnmarshalText(b []byte) error { return m.Set(string(b)) }

// BargeIn is the interruption policy: how the user's speech during a reply
// is told apart from a cough, a door or a backchannel ("yeah", "嗯").
//
// Speech that starts while the assistant responds pauses (or ducks)
// playback at once. It is confirmed as a barge-in, which cancels the reply,
// when its transcript has MinWords words that are not backchannels, or when
// it has lasted MinSpeech without being only backchannels. A sound that
// ends without confirming lets the reply play on from where it paused once
// ResumeAfter has passed with no confirming words. Whatever happens, speech
// that is not a backchannel or a wordless sound becomes the next user turn.
type BargeIn struct {
	Mode InterruptMode `yaml:"mode"`
	// MinSpeech confirms speech that has lasted this long even before the
	// recognizer has words (it lags, or does not know the language); 0
	// confirms at once, without a pause to decide.
	MinSpeech time.Duration `yaml:"min_speech"`
	// MinWords confirms as soon as the transcript has this many words that
	// are not backchannels (a Chinese character counts as a word); 0 leaves
	// it to MinSpeech alone.
	MinWords int `yaml:"min_words"`
	// Backchannels are words and phrases a listener says to show they are
	// following, which never interrupt.
	Backchannels []string `yaml:"backchannels"`
	// ResumeAfter is how long after the sound ends the reply stays paused
	// for words that would confirm it (the recognizer's last words come
	// after the speech), before playing on.
	ResumeAfter time.Duration `yaml:"resume_after"`
}

// DefaultBackchannels are English and Chinese listener responses.
var DefaultBackchannels = []string{
	"yeah", "yes", "yep", "yup", "ok", "okay", "uh-huh", "mhm", "mm-hmm", "mm", "hmm", "hm",
	"right", "sure", "i see", "got it", "cool", "nice", "wow", "oh", "ah", "uh", "um", "alright", "all right", "really",
	"嗯", "嗯嗯", "嗯哼", "哦", "噢", "喔", "啊", "对", "对对", "对对对", "是", "是的", "好", "好的", "行", "没错", "哈哈",
}

// DefaultBargeIn pauses at once and confirms on the first word that is not
// a backchannel; 1.5 s of wordless sound also confirms (longer than a cough
// or a door), and the reply resumes 1 s after a sound that did not.
func DefaultBargeIn() BargeIn {
	return BargeIn{
		Mode:         InterruptPause,
		MinSpeech:    1500 * time.Millisecond,
		MinWords:     1,
		Backchannels: slices.Clone(DefaultBackchannels),
		ResumeAfter:  time.Second,
	}
}

// Validate names the first setting that makes no sense, by its config key.
func (b BargeIn) Validate() error {
	switch {
	case b.Mode != InterruptPause && b.Mode != InterruptDuck && b.Mode != InterruptOff:
		return fmt.Errorf("barge_in.mode: %q is not pause, duck or off", b.Mode)
	case b.MinSpeech < 0 || b.MinSpeech > time.Hour:
		return fmt.Errorf("barge_in.min_speech: %v is not between 0 and 1h", b.MinSpeech)
	case b.MinWords < 0 || b.MinWords > 100:
		return fmt.Errorf("barge_in.min_words: %d is not between 0 and 100", b.MinWords)
	case b.ResumeAfter < 0 || b.ResumeAfter > time.Hour:
		return fmt.Errorf("barge_in.resume_after: %v is not between 0 and 1h", b.ResumeAfter)
	}
	for _, w := range b.Backchannels {
		if len(listen.SplitWords(w)) == 0 {
			return fmt.Errorf("barge_in.backchannels: %q has no word in it", w)
		}
	}
	return nil
}

// The barge-in arbiter decides about speech over a reply. It owns the
// policy's settings and the one state of the decision; the pipeline acts
// on its decisions and keeps no barge-in state of its own. Its states and
// their transitions are docs/ARCHITECTURE.md's barge-in table:
//
//	none ─begin→ pending ─decide→ none (cancel the reply, or play on)
//	                     ─settle→ none (the reply ended first)
//	                     ─confirm→ none (the stop key)
//
// What was decided is the pipeline's to act on at once (a cancelled
// reply, a resumed one), so no state keeps it.
type bargeInState int

const (
	bargeInNone bargeInState = iota
	bargeInPending
)

var bargeInStateNames = [...]string{"none", "pending"}

func (s bargeInState) String() string { return bargeInStateNames[s] }

// decision is what the pipeline does about speech over a reply.
type decision int

const (
	// decideWait leaves everything as it is.
	decideWait decision = iota
	// decidePause and decideDuck stop or lower playback while deciding.
	decidePause
	decideDuck
	// decideCancel cancels the reply: a barge-in.
	decideCancel
	// decideResume plays the reply on: the sound was no interruption.
	decideResume
)

// arbiter is the barge-in policy and the state of its decision.
type arbiter struct {
	cfg          BargeIn
	backchannels [][]string // each phrase as words, longest first
	state        bargeInState
	machine      fsm.Machine[bargeInState]
}

func newArbiter(cfg BargeIn, report func(error)) *arbiter {
	a := &arbiter{cfg: cfg, machine: fsm.New("barge-in", bargeInTransitions, report)}
	for _, b := range cfg.Backchannels {
		a.backchannels = append(a.backchannels, listen.SplitWords(b))
	}
	slices.SortStableFunc(a.backchannels, func(x, y []string) int { return len(y) - len(x) })
	return a
}

func (a *arbiter) to(next bargeInState) { a.machine.Move(&a.state, next) }

// bargeInTransitions are the legal moves between barge-in states.
var bargeInTransitions = map[bargeInState][]bargeInState{
	bargeInNone:    {bargeInPending},
	bargeInPending: {bargeInNone},
}

// interrupts is false with barge-in off: every reply plays to its end.
func (a *arbiter) interrupts() bool { return a.cfg.Mode != InterruptOff }

// pending is true while speech overlaps a reply it has not interrupted:
// it is a turn of its own only once confirmed or once the reply is over.
func (a *arbiter) pending() bool { return a.state == bargeInPending }

// begin is speech starting over a reply: what to do with playback while
// deciding (with barge-in off, nothing: the reply plays to its end).
func (a *arbiter) begin() decision {
	a.to(bargeInPending)
	switch a.cfg.Mode {
	case InterruptOff:
		return decideWait
	case InterruptDuck:
		return decideDuck
	}
	return decidePause
}

// decide, after each frame while pending, whether the speech so far
// (transcript, lasting speech, sinceEnd after it ended if it has)
// interrupts the reply, lets it play on, or needs more listening. With
// barge-in off it is settled when the reply ends.
func (a *arbiter) decide(transcript string, speech time.Duration, speaking bool, sinceEnd time.Duration) decision {
	if a.cfg.Mode == InterruptOff {
		return decideWait
	}
	switch {
	case a.confirms(transcript, speech):
		a.to(bargeInNone)
		return decideCancel
	case !speaking && sinceEnd >= a.cfg.ResumeAfter:
		a.to(bargeInNone)
		return decideResume
	}
	return decideWait
}

// confirm is an interruption that needs no deciding (the stop key): a
// decision pending is made.
func (a *arbiter) confirm() {
	if a.pending() {
		a.to(bargeInNone)
	}
}

// settle ends a pending decision when the reply ends first, and says
// whether the speech is a turn of its own: still going on, or with words
// that are not backchannels (not a cough, not a reaction to the reply).
func (a *arbiter) settle(transcript string, speaking bool) (keep bool) {
	a.to(bargeInNone)
	return speaking || a.keeps(transcript)
}

// confirms says whether speech with this transcript, having lasted speech,
// is an interruption.
func (a *arbiter) confirms(transcript string, speech time.Duration) bool {
	content, all := a.count(transcript)
	if a.cfg.MinWords > 0 && content >= a.cfg.MinWords {
		return true
	}
	onlyBackchannels := all > 0 && content == 0
	return speech >= a.cfg.MinSpeech && !onlyBackchannels
}

// keeps says whether the transcript has words that are not backchannels.
func (a *arbiter) keeps(transcript string) bool {
	content, _ := a.count(transcript)
	return content > 0
}

// count returns the transcript's words that are not part of a backchannel
// phrase, and all its words.
func (a *arbiter) count(transcript string) (content, all int) {
	w := listen.SplitWords(transcript)
	for i := 0; i < len(w); {
		n := a.backchannelAt(w[i:])
		if n == 0 {
			content++
			n = 1
		}
		i += n
	}
	return content, len(w)
}

// backchannelAt is the length of the longest backchannel phrase w starts
// with, 0 if none.
func (a *arbiter) backchannelAt(w []string) int {
	for _, b := range a.backchannels {
		if len(b) <= len(w) && slices.Equal(b, w[:len(b)]) {
			return len(b)
		}
	}
	return 0
}

// speechOverReply starts deciding whether speech that began during a
// response interrupts it: playback pauses (or ducks) at once, while
// generation and synthesis go on filling the queue.
func (p *Pipeline) speechOverReply() {
	switch p.barge.begin() {
	case decideWait:
		return // the reply plays on; the speech waits for its end
	case decideDuck:
		p.player.Duck(duckGain)
	default:
		p.player.Pause()
	}
	at := p.clk.Now()
	p.events.Emit(Event{Type: EvBargeInPending, At: at, Turn: p.resp.Turn(), Text: p.listen.Speech().Partial})
	p.setState(StateUserSpeaking, at)
}

// arbitrate acts, frame by frame, on the arbiter's decision about speech
// over a response: a barge-in (or a continuation of the turn the reply
// answers), or playing on from where it paused, the sound being no turn.
func (p *Pipeline) arbitrate(ctx context.Context, now time.Duration) {
	speech := p.listen.Speech()
	switch p.barge.decide(speech.Partial, speech.Voiced, speech.Speaking, now-speech.Ended) {
	case decideCancel:
		if p.listen.Continues() {
			p.continueTurn()
			return
		}
		p.bargeIn(ctx, reply.CutBargeIn)
	case decideResume:
		at := p.clk.Now()
		p.player.Resume()
		p.events.Emit(Event{Type: EvBargeInResumed, At: at, Turn: p.resp.Turn(), Text: speech.Partial})
		p.listen.Dismiss()
		if p.resp.PlaybackStart() > 0 {
			p.setState(StateSpeaking, at)
		} else {
			p.setState(StateThinking, at)
		}
	}
}

// bargeIn interrupts the current response, if there is one, for reason
// (reply.CutBargeIn: speech, or the stop key). The speech that interrupted
// is a turn of its own from here on, with all it has been heard to say.
// StateInterrupted is published for the moment of the cut (a display
// shows it), and the state the user leaves the pipeline in follows at the
// same time.
func (p *Pipeline) bargeIn(ctx context.Context, reason string) {
	if p.resp == nil {
		return
	}
	at := p.clk.Now()
	turn := p.resp.Turn()
	if reason == reply.CutStopKey {
		p.barge.confirm()
	}
	heard := p.cut(ctx, reason)
	e := Event{Type: EvBargeIn, At: at, Turn: turn, Text: heard}
	if reason == reply.CutStopKey {
		e.Reason = ReasonStopKey
	}
	p.events.Emit(e)
	p.setState(StateInterrupted, at)
	if p.listen.Speaking() {
		p.setState(StateUserSpeaking, at)
	} else {
		p.setState(StateListening, at)
	}
}

// cut cancels the current response, if any, for reason, puts what the
// user heard of it into the history, and returns that as spoken.
func (p *Pipeline) cut(ctx context.Context, reason string) (heard string) {
	r := p.resp
	if r == nil {
		return ""
	}
	heard, written := r.Interrupt(reason)
	p.finishTurn(r, p.clk.Now())
	p.endResponse(p.clk.Now())
	p.remember(ctx, r.Rounds(), written, true)
	return heard
}
