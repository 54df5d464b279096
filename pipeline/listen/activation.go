package listen

import (
	"fmt"
	"slices"
	"unicode"

	"github.com/voiceassistant/voice/audio"
	"strings"
	"time"

	"github.com/voiceassistant/voice/turn"
)

// Activation is what opens a user turn.
//
//   - "always": any speech (the desktop's default).
//   - "push": only the host's talk button; a turn is open between talk
//     start and talk stop, with PreRoll of audio from before the press, so
//     the first word is not lost, and the release commits it. While the
//     button is up no stage runs: the session only keeps the recent audio
//     the next press takes as pre-roll.
//   - "wake": speech that begins with one of Phrases ("hey assistant, what
//     time is it": the LLM is given "what time is it"), speech after the
//     host's wake command (its wake-word engine fired), speech over a reply
//     (a barge-in needs no phrase), and speech within FollowUp of a reply's
//     end. Spotting a phrase runs the VAD on all audio and the recognizer
//     on every stretch of speech until its first words rule the phrase in
//     or out; with no Phrases, only the host's wake opens a turn, and until
//     it does no stage runs at all: the cheap path for a device with a
//     wake-word engine of its own.
type Activation struct {
	Mode     ActivationMode
	Phrases  []string
	FollowUp time.Duration
}

// ActivationMode names an activation.
type ActivationMode string

const (
	ActivateAlways ActivationMode = "always"
	ActivatePush   ActivationMode = "push"
	ActivateWake   ActivationMode = "wake"
)

// DefaultWakePhrases are the phrases a "wake" session listens for, in
// English and Chinese.
func DefaultWakePhrases() []string {
	return []string{"hey assistant", "ok assistant", "okay assistant", "你好助手", "小助手"}
}

// DefaultFollowUp is how long after a reply the next turn needs no phrase.
const DefaultFollowUp = 8 * time.Second

// Set parses a mode; it makes ActivationMode a command-line flag value.
func (m *ActivationMode) Set(s string) error {
	switch v := ActivationMode(strings.ToLower(strings.TrimSpace(s))); v {
	case ActivateAlways, ActivatePush, ActivateWake:
		*m = v
	case "":
		*m = ActivateAlways
	default:
		return fmt.Errorf("%q is not an activation (always, push or wake)", s)
	}
	return nil
}

func (m ActivationMode) String() string { return string(m) }

// Type names the flag value in help text.
func (m ActivationMode) Type() string { return "always|push|wake" }

// UnmarshalText lets config files spell the mode as flags do.
func (m *ActivationMode) UnmarshalText(b []byte) error { return m.Set(string(b)) }

// Validate names a setting that makes no sense, by its config key.
func (a Activation) Validate() error {
	var m ActivationMode
	if err := m.Set(string(a.Mode)); err != nil {
		return fmt.Errorf("activation: %w", err)
	}
	if a.FollowUp < 0 || a.FollowUp > 10*time.Minute {
		return fmt.Errorf("follow_up: %v is not between 0 and 10m", a.FollowUp)
	}
	for _, p := range a.Phrases {
		if len(SplitWords(p)) == 0 {
			return fmt.Errorf("wake_phrases: %q has no word in it", p)
		}
	}
	return nil
}

// pushed says whether turns open only on the talk button.
func (l *Listener) pushed() bool { return l.cfg.Activation.Mode == ActivatePush }

// Idle says whether the listening side needs no stage now, and only
// keeps the audio (Keep): a push session with the button up, or a wake
// session without phrases, not woken, with no turn open.
func (l *Listener) Idle() bool {
	switch l.cfg.Activation.Mode {
	case ActivatePush:
		return !l.talking
	case ActivateWake:
		return len(l.cfg.Activation.Phrases) == 0 && l.turn == nil && !l.armed(l.recent.end)
	}
	return false
}

// Keep keeps a capture frame as recent audio, for the next turn's
// pre-roll, and runs nothing on it.
func (l *Listener) Keep(f audio.Frame) { l.recent.add(f) }

// ReasonTalkStop is the commit reason of a turn the talk button ended.
const ReasonTalkStop turn.Reason = "talk_stop"

// TalkStart opens a turn at the press of the talk button, at the end of
// the audio heard so far, with the pre-roll before it; true if it did (a
// press while talking does nothing). The VAD starts afresh: it was not fed
// while idle.
func (l *Listener) TalkStart() (bool, error) {
	if !l.pushed() || l.talking {
		return false, nil
	}
	l.talking = true
	l.cfg.Stages.VAD.Reset()
	at := l.recent.end
	if err := l.open(at, at, nil); err != nil {
		return false, err
	}
	// The button says the user speaks, whatever the VAD hears yet.
	l.turn.ep.SpeechStart()
	return true, nil
}

// TalkStop ends the turn the talk button opened: its final transcript
// (nil while its early final is still being made: EarlyIn commits it).
func (l *Listener) TalkStop() (*Final, error) {
	if !l.talking {
		return nil, nil
	}
	l.talking = false
	if l.turn == nil {
		return nil, nil
	}
	if l.phase == Speaking {
		// The release ends the speech the VAD may still hear.
		l.to(Paused)
		l.turn.speechEnd = max(l.turn.speechEnd, l.turn.heardUntil)
	}
	return l.final(ReasonTalkStop)
}

// Talking says whether the talk button holds a turn open.
func (l *Listener) Talking() bool { return l.talking }

// armed says whether a wake session takes speech starting at stream
// position at as a turn without a phrase: over a reply, after the host's
// wake, or in the follow-up window after a reply.
func (l *Listener) armed(at int64) bool {
	return l.replying || audio.Mono16k.Duration(at) < l.armedUntil
}

// Wake is the host's wake-word engine firing at the end of the audio heard
// so far: the next speech, within the follow-up window, is a turn, and
// speech being spotted for a phrase is one at once. The VAD starts afresh
// where it was not fed.
func (l *Listener) Wake() error {
	if l.cfg.Activation.Mode != ActivateWake {
		return fmt.Errorf("turns open on speech here (activation %q); wake needs activation wake", l.cfg.Activation.Mode)
	}
	if l.Idle() {
		l.cfg.Stages.VAD.Reset()
	}
	l.armedUntil = audio.Mono16k.Duration(l.recent.end) + max(l.cfg.Activation.FollowUp, time.Second)
	if l.turn != nil {
		l.turn.spotting = false
	}
	return nil
}

// spot checks the transcript of a turn opened on unarmed speech for a wake
// phrase: accepted once it begins with one, dismissed once its words rule
// every phrase out.
func (l *Listener) spot() (accepted bool) {
	t := l.turn
	switch wakePhrase(t.partial, l.phrases) {
	case phraseSaid:
		t.spotting = false
		return true
	case phraseRuledOut:
		l.close(nil)
	}
	return false
}

// phraseMatch is how a transcript's start compares with the wake phrases.
type phraseMatch int

const (
	phraseUndecided phraseMatch = iota // too few words yet
	phraseSaid
	phraseRuledOut
)

// wakePhrase compares text's first words with phrases (each as words).
func wakePhrase(text string, phrases [][]string) phraseMatch {
	said := SplitWords(text)
	if len(said) == 0 {
		return phraseUndecided
	}
	match := phraseRuledOut
	for _, want := range phrases {
		n := min(len(said), len(want))
		if !slices.Equal(said[:n], want[:n]) {
			continue
		}
		if n == len(want) {
			return phraseSaid
		}
		match = phraseUndecided
	}
	return match
}

// withoutPhrase is a wake session's text without the wake phrase it
// begins with, if it does: the LLM is not given the phrase.
func (l *Listener) withoutPhrase(text string) string {
	if l.cfg.Activation.Mode != ActivateWake {
		return text
	}
	return stripPhrase(text, l.phrases)
}

// stripPhrase is text without the wake phrase it begins with, if it
// begins with one, and the punctuation and spaces after it.
func stripPhrase(text string, phrases [][]string) string {
	spans := wordSpans(text)
	for _, want := range phrases {
		if len(spans) < len(want) {
			continue
		}
		said := make([]string, len(want))
		for i := range want {
			said[i] = spans[i].word
		}
		if slices.Equal(said, want) {
			return strings.TrimLeftFunc(text[spans[len(want)-1].end:], func(r rune) bool {
				return unicode.IsSpace(r) || unicode.IsPunct(r)
			})
		}
	}
	return text
}
