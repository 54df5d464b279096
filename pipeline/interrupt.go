package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/voiceassistant/voice/audio"
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
		if len(words(w)) == 0 {
			return fmt.Errorf("barge_in.backchannels: %q has no word in it", w)
		}
	}
	return nil
}

// listener classifies what the user says over a reply.
type listener struct {
	cfg          BargeIn
	backchannels [][]string // each phrase as words, longest first
}

func newListener(cfg BargeIn) listener {
	l := listener{cfg: cfg}
	for _, b := range cfg.Backchannels {
		l.backchannels = append(l.backchannels, words(b))
	}
	slices.SortStableFunc(l.backchannels, func(a, b []string) int { return len(b) - len(a) })
	return l
}

// confirms says whether speech with this transcript, having lasted speech,
// is an interruption.
func (l listener) confirms(transcript string, speech time.Duration) bool {
	content, all := l.count(transcript)
	if l.cfg.MinWords > 0 && content >= l.cfg.MinWords {
		return true
	}
	onlyBackchannels := all > 0 && content == 0
	return speech >= l.cfg.MinSpeech && !onlyBackchannels
}

// keeps says whether speech over a reply that ended without confirming is
// still a turn of its own: it has words that are not backchannels.
func (l listener) keeps(transcript string) bool {
	content, _ := l.count(transcript)
	return content > 0
}

// count returns the transcript's words that are not part of a backchannel
// phrase, and all its words.
func (l listener) count(transcript string) (content, all int) {
	w := words(transcript)
	for i := 0; i < len(w); {
		n := l.backchannelAt(w[i:])
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
func (l listener) backchannelAt(w []string) int {
	for _, b := range l.backchannels {
		if len(b) <= len(w) && slices.Equal(b, w[:len(b)]) {
			return len(b)
		}
	}
	return 0
}

// words splits text into lower-case words without punctuation or hyphens; each Han,
// kana or Hangul character is a word of its own, since those scripts are
// written without spaces.
func words(text string) []string {
	var out []string
	var word strings.Builder
	flush := func() {
		if word.Len() > 0 {
			out = append(out, word.String())
			word.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			flush()
			out = append(out, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'':
			word.WriteRune(r)
		default:
			// Hyphens split too: "uh-huh" matches a recognizer's "uh huh".
			flush()
		}
	}
	flush()
	return out
}

// speechOverReply starts deciding whether speech that began during a
// response interrupts it: playback pauses (or ducks) at once, while
// generation and synthesis go on filling the queue.
func (p *Pipeline) speechOverReply(t *userTurn) {
	t.over = true
	switch p.cfg.BargeIn.Mode {
	case InterruptOff:
		return // the reply plays on; the speech waits for its end
	case InterruptDuck:
		p.player.Duck(duckGain)
	default:
		p.player.Pause()
	}
	at := p.clk.Now()
	p.emit(Event{Type: EvBargeInPending, At: at, Turn: p.resp.turn, Text: t.partial})
	p.setState(StateUserSpeaking, at)
}

// arbitrate decides, frame by frame, about speech over a response: a
// confirmed interruption cancels the reply; a sound that ended without
// confirming lets it play on.
func (p *Pipeline) arbitrate(t *userTurn, now time.Duration) {
	if p.cfg.BargeIn.Mode == InterruptOff {
		return // settled when the reply ends (endResponse)
	}
	speech := audio.Mono16k.Duration(int64(t.voiced))
	switch {
	case p.listen.confirms(t.partial, speech):
		p.bargeIn(t, "")
	case !t.speaking && now-t.speechEnd >= p.cfg.BargeIn.ResumeAfter:
		p.resumeReply(t)
	}
}

// resumeReply plays on a reply paused for a sound that was not an
// interruption; the sound is no turn.
func (p *Pipeline) resumeReply(t *userTurn) {
	at := p.clk.Now()
	r := p.resp
	p.player.Resume()
	p.emit(Event{Type: EvBargeInResumed, At: at, Turn: r.turn, Text: t.partial})
	p.closeTurn()
	if r.metrics.PlaybackStart > 0 {
		p.setState(StateSpeaking, at)
	} else {
		p.setState(StateThinking, at)
	}
}

// bargeIn interrupts the current response: cancel first so no more audio
// can be queued, then flush so the next device period is silent. The
// speech that interrupted (t, nil when a stop key did) is a turn of its
// own from here on, with all it has been heard to say.
func (p *Pipeline) bargeIn(t *userTurn, reason string) {
	at := p.clk.Now()
	r := p.resp
	if t != nil {
		t.over = false // the user's turn now, whatever it turns out to hold
	}
	heard := p.cancelResponse()
	p.emit(Event{Type: EvBargeIn, At: at, Turn: r.turn, Text: heard, Reason: reason})
	p.setState(StateInterrupted, at)
	if t != nil && t.speaking {
		p.setState(StateUserSpeaking, at)
	} else {
		p.setState(StateListening, at)
	}
}

// cancelResponse stops the current response and remembers what the user
// heard of it; it returns that text.
func (p *Pipeline) cancelResponse() string {
	r := p.resp
	r.cancel()
	pos := p.player.Flush()
	heard, written := r.heard(pos)
	p.cfg.History.AddAssistant(written, true)
	r.metrics.Interrupted = true
	p.finishTurn(r, p.clk.Now())
	if !r.ended {
		p.stopping++
	}
	p.endResponse(p.clk.Now())
	return heard
}
