package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
)

// Command is what the host around the assistant asks of a session: the
// glasses' firmware or a companion app through the control socket
// (package control), the desktop app through its buttons. As with capture
// frames, a sender on a virtual clock holds the clock before each send
// (clock.Clock.Hold) and the session releases it once it has acted, so on
// a replay a command lands at one audio time.
type Command struct {
	Op Op
	// Text is what OpSay speaks.
	Text string
	// Done, if set, receives nil once the session has acted on the
	// command, or why it could not; the sender gives it room for one.
	Done chan<- error
}

// Op names a command.
type Op string

const (
	// OpTalkStart, OpTalkStop and OpTalkToggle are the push-to-talk
	// button (activation "push"): a turn is open only between start and
	// stop.
	OpTalkStart  Op = "talk_start"
	OpTalkStop   Op = "talk_stop"
	OpTalkToggle Op = "talk_toggle"
	// OpWake is the host's wake-word engine firing (activation "wake"):
	// the next speech opens a turn.
	OpWake Op = "wake"
	// OpMute and OpUnmute close and open the microphone: muted, the
	// listening side hears silence.
	OpMute   Op = "mute"
	OpUnmute Op = "unmute"
	// OpCancel stops the reply, as the stop key does.
	OpCancel Op = "cancel"
	// OpSay speaks Text as an assistant turn, after a reply under way,
	// which a barge-in can stop as any reply.
	OpSay Op = "say"
)

// Ops are the commands a session takes, in the order the docs list them.
var Ops = []Op{OpTalkStart, OpTalkStop, OpTalkToggle, OpWake, OpMute, OpUnmute, OpCancel, OpSay}

// command acts on a command of the host's and answers it; the error it
// returns is a stage's, which ends the session.
func (p *Pipeline) command(ctx context.Context, c Command) (err error) {
	answer := func(e error) {
		if c.Done != nil {
			c.Done <- e
		}
	}
	l := p.listen
	op := c.Op
	if op == OpTalkToggle {
		op = OpTalkStart
		if l.Talking() {
			op = OpTalkStop
		}
	}
	switch op {
	case OpCancel:
		p.bargeIn(ctx, reply.CutStopKey)
	case OpMute, OpUnmute:
		// Muted, an open turn hears silence and ends as if the user had
		// stopped: what was said so far is committed, nothing is lost.
		p.muted = op == OpMute
	case OpTalkStart, OpTalkStop:
		if p.cfg.Activation.Mode != ActivatePush {
			answer(fmt.Errorf("%s: turns open on speech here (activation %q); the talk button needs activation push", c.Op, p.cfg.Activation.Mode))
			return nil
		}
		if op == OpTalkStop {
			// The release commits the turn (once its early final is in,
			// if one is being made).
			var fin *listen.Final
			if fin, err = l.TalkStop(); fin != nil {
				err = p.commit(ctx, fin)
			}
			if !l.Open() && p.resp == nil {
				p.setState(StateListening, p.clk.Now())
			}
			break
		}
		// The press interrupts a reply, as the stop key does, and
		// opens the turn.
		p.bargeIn(ctx, reply.CutStopKey)
		var opened bool
		if opened, err = l.TalkStart(); opened {
			p.ahead.stop(false)
			p.setState(StateUserSpeaking, p.clk.Now())
		}
	case OpWake:
		if err := l.Wake(); err != nil {
			answer(fmt.Errorf("%s: %w", c.Op, err))
			return nil
		}
	case OpSay:
		if strings.TrimSpace(c.Text) == "" {
			answer(fmt.Errorf("%s: no text to say", c.Op))
			return nil
		}
		p.says.texts = append(p.says.texts, c.Text)
		p.says.startNext(ctx, p)
	default:
		answer(fmt.Errorf("%q is not a command (%v)", c.Op, Ops))
		return nil
	}
	answer(err)
	return err
}

// announcements are the host's texts to say (OpSay), waiting for the
// assistant to be free.
type announcements struct{ texts []string }

// startNext says the next text once the assistant is free: no reply, and
// no user turn open (it goes after the reply to that turn).
func (a *announcements) startNext(ctx context.Context, p *Pipeline) {
	if len(a.texts) == 0 || p.resp != nil || p.spec != nil || p.listen.Open() {
		return
	}
	text := a.texts[0]
	a.texts = a.texts[1:]
	p.ahead.stop(false)
	at := p.listen.Now()
	p.resp = reply.Announce(ctx, &p.replies, p.listen.TakeTurn(), text, at)
	p.setState(StateThinking, at)
}
