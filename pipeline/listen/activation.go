package listen

import (
	"fmt"

	"github.com/voiceassistant/voice/audio"
	"strings"

	"github.com/voiceassistant/voice/turn"
)

// Activation is what opens a user turn. "always": any speech (the
// desktop's default). "push": only the host's talk button; a turn is open
// between talk start and talk stop, with PreRoll of audio from before the
// press, so the first word is not lost, and the release commits it. While
// no turn is open and no reply plays, a "push" session runs no stage at
// all: it only keeps the recent audio the next press takes as pre-roll.
type Activation struct {
	Mode ActivationMode `yaml:"mode"`
}

// ActivationMode names an activation.
type ActivationMode string

const (
	ActivateAlways ActivationMode = "always"
	ActivatePush   ActivationMode = "push"
)

// Set parses a mode; it makes ActivationMode a command-line flag value.
func (m *ActivationMode) Set(s string) error {
	switch v := ActivationMode(strings.ToLower(strings.TrimSpace(s))); v {
	case ActivateAlways, ActivatePush:
		*m = v
	case "":
		*m = ActivateAlways
	default:
		return fmt.Errorf("%q is not an activation (always or push)", s)
	}
	return nil
}

func (m ActivationMode) String() string { return string(m) }

// Type names the flag value in help text.
func (m ActivationMode) Type() string { return "always|push" }

// UnmarshalText lets config files spell the mode as flags do.
func (m *ActivationMode) UnmarshalText(b []byte) error { return m.Set(string(b)) }

// Validate names a mode that makes no sense, by its config key.
func (a Activation) Validate() error {
	if a.Mode != "" && a.Mode != ActivateAlways && a.Mode != ActivatePush {
		return fmt.Errorf("activation.mode: %q is not always or push", a.Mode)
	}
	return nil
}

// pushed says whether turns open only on the talk button.
func (l *Listener) pushed() bool { return l.cfg.Activation.Mode == ActivatePush }

// Idle says whether the listening side needs no stage now: a push
// session with no turn open, which only keeps the audio (Keep).
func (l *Listener) Idle() bool { return l.pushed() && !l.talking }

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
