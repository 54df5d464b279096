package mnn

import "time"

// stepBudget is how long one decoding call may take: a barge-in waits at
// most this long (or one token, if a token takes longer) for the engine.
const stepBudget = 5 * time.Millisecond

// stepTokens is how many tokens the next decoding call decodes, given that
// the last took took for batch tokens: as many as fit in stepBudget, at
// least one. A real model on a device decodes one token per call; a fast
// one (the tiny test model decodes a token in about 0.1 ms) would spend a
// third of its time calling in if it did.
func stepTokens(took time.Duration, batch int) int {
	return fit(took, batch, stepBudget, 1, maxStep)
}

// pace sizes the decoding calls of one reply from the time between the
// texts of two steps: in it the engine ran the tokens of the call before
// through the model (a step returns at a call's first text, before that
// pass). The first step's text came after sampling alone, which says
// nothing of a token's pace: sized from it, the second call of a real
// model would have been 25 tokens long, its text held until the call's
// end, a second later.
type pace struct {
	last time.Time // when the step before returned
	prev int       // the tokens of the call before; 0: none yet
}

// next is the length of the call after one of batch tokens whose text
// came at now.
func (p *pace) next(now time.Time, batch int) int {
	n := batch
	if p.prev > 0 {
		n = stepTokens(now.Sub(p.last), p.prev)
	}
	p.prev, p.last = batch, now
	return n
}

// maxStep bounds a decoding call however fast tokens come.
const maxStep = 64

// prefillBudget is how long one prefill call may take: a barge-in, or a
// speculative reply dropped because the user went on, waits at most this
// long (or one batch of minPrefill tokens) for the engine.
const prefillBudget = 50 * time.Millisecond

// Every prefill call of a model has the same length, its batch, chosen
// once as it loads (warmUp): as many tokens as fit in prefillBudget at its
// speed, between these. A call of a length the engine has not just run
// costs it a rebuild of every layer (half a second for MNN-Pocket on two
// x86 cores, where 8 tokens take 60-80 ms), so the prompt's last batch is
// filled with tokens the KV cache held (voice_llm_prepare). Per token, a
// batch of 8 prefilled MNN-Pocket as fast as one of 512 on this machine;
// a model so fast that calling in costs more (the tiny test model) gets
// larger batches.
const (
	minPrefill = 8
	maxPrefill = 128
)

// prefillTokens is the batch of a model that prefilled batch tokens in
// took.
func prefillTokens(took time.Duration, batch int) int {
	return fit(took, batch, prefillBudget, minPrefill, maxPrefill)
}

// fit is how many units fit in budget at the rate of the last call (batch
// units in took), between least and most.
func fit(took time.Duration, batch int, budget time.Duration, least, most int) int {
	per := took / time.Duration(max(batch, 1))
	if per <= 0 {
		return most
	}
	return min(max(int(budget/per), least), most)
}
