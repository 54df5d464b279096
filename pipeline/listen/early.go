package listen

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
)

// The final transcript early. X-ASR needs about a second of audio after
// the last word to push it through its encoder, so the final transcript
// of a turn costs several encoder calls once the turn is committed (400 ms
// at int4 on two x86 cores), and until then the partial may lack the last
// word. A recognizer that forks (Forker) is copied when the VAD ends the
// user's speech, and the copy finalized while the endpointing policy
// decides. A turn committed with no speech since takes the copy's
// transcript, waiting for it if it is still being made (a pending
// commit); a speculative reply to a partial the copy's transcript does
// not answer is restarted with it at once. Speech that resumes drops the
// copy and stops its encoder calls: the turn goes on, committed later
// from the recognizer itself.
//
// Copied at the user's first pause instead, 100 ms sooner, the final came
// in 90 ms sooner after the commit decision, but the copy's encoder calls
// slowed the reply speculated at that same pause, whose first audio is
// what the user waits for when the final is not late: voice to voice went
// from 0.78-0.91 s to 1.04-1.14 s at p50 over 30 turns (full-size int4
// stand-ins, two runs each, alternating).

// Early is one copy's final transcript, being made until ready.
type Early struct {
	text    string
	err     error
	compute time.Duration // with a compute scale (Spent)
	ready   bool
	stop    context.CancelFunc
	turn    *userTurn
}

// Spent takes the copy's compute (compute.Account): it runs beside the
// listening path, so its compute is not the listening path's to wait
// for; it passes on the clock before the final is in, and is charged to
// the turn then (EarlyIn).
func (e *Early) Spent(_ event.Stage, d time.Duration) { e.compute += d }

// EarlyFinals is where early finals come in, each with a hold on the
// clock that the session releases once it has handed it to EarlyIn.
func (l *Listener) EarlyFinals() <-chan *Early { return l.finals }

// FinalEarly starts the open turn's early final once the VAD has ended its
// speech, and drops it when speech resumes.
func (l *Listener) FinalEarly(ctx context.Context) error {
	t := l.turn
	switch {
	case l.Speaking():
		t.dropEarlyFinal()
		return nil
	case l.cfg.Stages.Fork == nil || t.early != nil:
		return nil
	}
	fork, err := l.cfg.Stages.Fork.Fork()
	if err != nil {
		return fmt.Errorf("asr: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	e := &Early{stop: stop, turn: t}
	t.early = e
	quiet := l.quiet()
	l.finishing++
	l.cfg.Clock.Hold()
	go func() {
		defer stop()
		e.text, e.err = fork.FinalizeAfter(compute.WithAccount(ctx, e), quiet)
		e.err = errors.Join(e.err, fork.Close())
		l.finals <- e
	}()
	return nil
}

// EarlyIn takes an early final that is in. If it is the open turn's, a
// commit that waited for it goes through with it (its Final), or else
// check says a speculative reply must be checked against it.
func (l *Listener) EarlyIn(e *Early) (fin *Final, check bool, err error) {
	l.finishing--
	t := l.turn
	if t != nil && t == e.turn {
		// A copy dropped when the user went on was the turn's compute too.
		t.compute.Add(event.StageASR, e.compute)
	}
	if t == nil || t.early != e {
		return nil, false, nil // the user went on, or the turn is over
	}
	if e.err != nil {
		// The commit finalizes the recognizer itself, as without a fork.
		t.early = nil
	} else {
		e.ready = true
	}
	if l.phase == Finalizing {
		fin, err = l.final(t.reason)
		return fin, false, err
	}
	return nil, true, nil
}

// dropEarlyFinal forgets the open turn's early final, and a commit
// waiting for it, stopping the copy: the user spoke again, and the
// copy's transcript would lack it.
func (t *userTurn) dropEarlyFinal() {
	if t.early != nil {
		t.early.stop()
	}
	t.early, t.reason = nil, ""
}
