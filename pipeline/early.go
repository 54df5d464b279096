package pipeline

import (
	"context"
	"errors"
	"time"
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
	compute time.Duration
	ready   bool
	stop    context.CancelFunc
	turn    *userTurn
}

// finalEarly starts the open turn's early final once the VAD has ended
// its speech, and drops it when speech resumes.
func (p *Pipeline) finalEarly(t *userTurn) error {
	fk, ok := p.cfg.ASR.(Forker)
	switch {
	case t.speaking:
		t.dropEarlyFinal()
		return nil
	case !ok || t.early != nil || p.barge.pending():
		return nil
	}
	fork, err := listening(p, stageASR, fk.Fork)
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(p.ctx)
	e := &earlyFinal{stop: stop, turn: t}
	t.early = e
	quiet := t.quiet()
	p.finishing++
	p.clk.Hold()
	go func() {
		defer stop()
		// The copy runs beside the listening path, so its compute is
		// not the listening path's to wait for: it is charged to the
		// turn when it is in (earlyFinalIn), having passed on the clock
		// here first.
		start := computeClock()
		e.text, e.err = fork.FinalizeAfter(ctx, quiet)
		e.err = errors.Join(e.err, fork.Close())
		e.compute = computeClock().Sub(start)
		if p.cfg.ComputeScale > 0 {
			// Its compute passes on the clock before it is in.
			_ = p.clk.Sleep(p.ctx, scaled(e.compute, p.cfg.ComputeScale))
		}
		p.finals <- e
	}()
	return nil
}

// earlyFinalIn takes an early final that is in: a pending commit goes
// through with it, or a speculative reply is checked against it.
func (p *Pipeline) earlyFinalIn(e *earlyFinal) error {
	p.finishing--
	t := p.turn
	if t != nil && t == e.turn && p.cfg.ComputeScale > 0 {
		// A copy dropped when the user went on was the turn's compute too.
		t.compute.add(stageASR, e.compute)
	}
	if t == nil || t.early != e {
		return nil // the user went on, or the turn is over
	}
	if e.err != nil {
		// The commit finalizes the recognizer itself, as without a fork.
		t.early = nil
	} else {
		e.ready = true
	}
	if t.pending != "" {
		return p.commit(t.pending)
	}
	p.speculate(t, true)
	return nil
}

// dropEarlyFinal forgets the open turn's early final, and a commit
// waiting for it, stopping the copy: the user spoke again, and the
// copy's transcript would lack it.
func (t *userTurn) dropEarlyFinal() {
	if t.early != nil {
		t.early.stop()
	}
	t.early, t.pending = nil, ""
}
