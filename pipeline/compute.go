package pipeline

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/internal/clock"
)

// Compute on the session clock. A replay normally gives the stages free
// compute: the virtual clock stands still while they work, so its
// latencies are the policy's alone and the same on every machine. With
// Config.ComputeScale > 0 each stage's measured compute, times the scale
// (1: this machine; 20: a device twenty times slower), passes on the clock
// as well, so a replay's figures are end to end on the machine at hand:
//
//   - the listening path (VAD, ASR, the turn model) runs on one goroutine
//     that falls behind the audio by what it spends, so the commit, and
//     the response it starts (or lets play, if speculated), come that much
//     later (busyUntil); a barge-in still acts at once, so its figures
//     leave the listening path's compute out;
//   - the LLM's pieces and the synthesizer's audio reach the pipeline only
//     once their compute has passed on the clock, while the rest of the
//     pipeline runs meanwhile, so a user can interrupt a reply that is
//     still being generated, as on a device.
//
// Compute is charged in one way per path: every listening-path stage call
// goes through listening; generation and synthesis through a meter; the
// early final's copy of the recognizer, which runs beside the listening
// path, passes its own compute on the clock and is charged to the turn
// when it is in (early.go). catchUp charges nothing: it waits for what
// was charged. The measured figures are reported per turn
// (TurnMetrics.Compute).

// StageCompute is what a turn cost each stage, in milliseconds of this
// machine's time (unscaled). LLM is the wall time generation took between
// pieces (prefill included); LLMPrefill and LLMDecode are the engine's own
// figures where it reports them.
type StageCompute struct {
	VAD        float64 `json:"vad"`
	ASR        float64 `json:"asr"`
	Turn       float64 `json:"turn"`
	LLM        float64 `json:"llm"`
	LLMPrefill float64 `json:"llm_prefill"`
	LLMDecode  float64 `json:"llm_decode"`
	TTS        float64 `json:"tts"`
}

// stage names a field of StageCompute that compute is added to.
type stage int

const (
	stageVAD stage = iota
	stageASR
	stageTurn
	stageLLM
	stageTTS
)

func (c *StageCompute) add(s stage, d time.Duration) {
	// Not ms(): a VAD frame can take less than the microsecond it rounds to.
	v := float64(d) / float64(time.Millisecond)
	switch s {
	case stageVAD:
		c.VAD += v
	case stageASR:
		c.ASR += v
	case stageTurn:
		c.Turn += v
	case stageLLM:
		c.LLM += v
	case stageTTS:
		c.TTS += v
	}
}

func (c *StageCompute) merge(o StageCompute) {
	c.VAD += o.VAD
	c.ASR += o.ASR
	c.Turn += o.Turn
	c.LLM += o.LLM
	c.TTS += o.TTS
}

func scaled(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) * scale)
}

// computeClock is what compute is measured on: the wall clock, or in a
// test, one that only the stages' calls move.
var computeClock = time.Now

// listening makes a call to a listening-path stage (the VAD, the
// recognizer, the turn model) and charges its compute. Every such call
// goes through it, so none is left off the clock.
func listening[T any](p *Pipeline, s stage, call func() (T, error)) (T, error) {
	start := computeClock()
	v, err := call()
	p.charge(s, computeClock().Sub(start))
	return v, err
}

// charge accounts for compute d the listening path spent on s: to the
// open turn's figures, and with a compute scale to the clock, by moving
// the listening path's next decisions later.
func (p *Pipeline) charge(s stage, d time.Duration) {
	if p.cfg.ComputeScale <= 0 {
		return
	}
	if t := p.turn; t != nil {
		t.compute.add(s, d)
	}
	p.busyUntil = p.now() + scaled(d, p.cfg.ComputeScale)
}

// now is the listening path's time: the clock's, or later while it is
// still busy with the compute it has been charged.
func (p *Pipeline) now() time.Duration { return max(p.clk.Now(), p.busyUntil) }

// catchUp waits on the clock until until, a time the listening path has
// been charged up to (a response starts, or a speculated one plays, only
// once its commit is due), unless that is less than chargeGrain away.
func (p *Pipeline) catchUp(ctx context.Context, until time.Duration) error {
	if lag := until - p.clk.Now(); lag >= chargeGrain {
		return p.clk.Sleep(ctx, lag)
	}
	return ctx.Err()
}

// meter measures what a response stage (generation, synthesis) computes
// between the results it hands over, adds it to the response's figures,
// and with a compute scale holds each result back until that compute has
// passed on the clock.
type meter struct {
	clk   clock.Clock
	scale float64
	r     *response
	stage stage
	last  time.Time
	// owed is scaled compute not yet passed on the clock. A replay's clock
	// moves a device period (10 ms) at a time, so a wait wakes at the next
	// period, later than asked; what it overshot is credit against the
	// next, which keeps the time charged right on average.
	owed time.Duration
}

// chargeGrain is the least compute waited for on the clock: half a replay
// device period. Smaller amounts add up until they reach it, so a charge
// is off by at most half a period instead of up to a whole one.
const chargeGrain = 5 * time.Millisecond

func (p *Pipeline) newMeter(r *response, s stage) *meter {
	return &meter{clk: p.clk, scale: p.cfg.ComputeScale, r: r, stage: s, last: computeClock()}
}

// handOver is called as the stage hands over a result: it records the
// compute since the stage started or last got control back, and returns
// once that much (scaled) has passed on the clock.
func (m *meter) handOver(ctx context.Context) error {
	d := computeClock().Sub(m.last)
	m.r.mu.Lock()
	m.r.compute.add(m.stage, d)
	m.r.mu.Unlock()
	if m.scale <= 0 {
		return nil
	}
	m.owed += scaled(d, m.scale)
	if m.owed < chargeGrain {
		return nil
	}
	before := m.clk.Now()
	err := m.clk.Sleep(ctx, m.owed)
	m.owed -= m.clk.Now() - before
	return err
}

// resume marks the stage running again once the pipeline has taken its
// result.
func (m *meter) resume() { m.last = computeClock() }
