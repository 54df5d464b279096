package pipeline

import (
	"context"
	"errors"
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

// Forker is implemented by recognizers that can copy the utterance so far.
type Forker interface {
	Fork() (Finalizer, error)
}

// Finalizer is a copy of a recognizer's utterance: FinalizeAfter gives
// the final transcript it would have if it ended now, and runs while the
// recognizer goes on listening, until its context is done. Close releases
// it.
type Finalizer interface {
	QuietFinalizer
	Close() error
}

// earlyFinal is one copy's final transcript, being made until ready.
type earlyFinal struct {
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
// the turn then (earlyIn).
func (e *earlyFinal) Spent(_ event.Stage, d time.Duration) { e.compute += d }

// finalEarly starts the open turn's early final once the VAD has ended
// its speech, and drops it when speech resumes.
func (l *listener) finalEarly(ctx context.Context) error {
	t := l.turn
	switch {
	case l.speaking():
		t.dropEarlyFinal()
		return nil
	case l.stages.fork == nil || t.early != nil:
		return nil
	}
	fork, err := l.stages.fork.Fork()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	e := &earlyFinal{stop: stop, turn: t}
	t.early = e
	quiet := l.quiet()
	l.finishing++
	l.clk.Hold()
	go func() {
		defer stop()
		e.text, e.err = fork.FinalizeAfter(compute.WithAccount(ctx, e), quiet)
		e.err = errors.Join(e.err, fork.Close())
		l.finals <- e
	}()
	return nil
}

// earlyIn takes an early final that is in, and says whether it is the
// open turn's: a commit waiting for it then goes through with it, or a
// speculative reply is checked against it.
func (l *listener) earlyIn(e *earlyFinal) bool {
	l.finishing--
	t := l.turn
	if t != nil && t == e.turn {
		// A copy dropped when the user went on was the turn's compute too.
		t.compute.Add(event.StageASR, e.compute)
	}
	if t == nil || t.early != e {
		return false // the user went on, or the turn is over
	}
	if e.err != nil {
		// The commit finalizes the recognizer itself, as without a fork.
		t.early = nil
	} else {
		e.ready = true
	}
	return true
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

// earlyFinalIn takes an early final that is in: a commit waiting for it
// goes through with it, or a speculative reply is checked against it.
func (p *Pipeline) earlyFinalIn(e *earlyFinal) error {
	l := &p.listen
	if !l.earlyIn(e) {
		return nil
	}
	if l.phase == phaseFinalizing {
		return p.commit(l.turn.reason)
	}
	p.speculate(true)
	return nil
}
