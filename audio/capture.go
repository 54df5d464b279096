package audio

import "sync/atomic"

// Chain is the capture path's stages in one order, each wrapping the
// next: a Near frame goes through every stage in turn (the echo canceller
// first, on the raw capture, then whatever gates or measures what the
// assistant will hear), and every stage sees each Far frame. Nil stages
// are skipped. The last gate of the path, half duplex, is the pipeline's
// own (pipeline.Config.HalfDuplex): it needs to know when the assistant is
// audible, and comes after the pre-roll is kept.
func Chain(stages ...FrontEnd) FrontEnd {
	var c chain
	for _, s := range stages {
		if s != nil {
			c = append(c, s)
		}
	}
	return c
}

type chain []FrontEnd

func (c chain) Far(frame []float32) error {
	for _, s := range c {
		if err := s.Far(frame); err != nil {
			return err
		}
	}
	return nil
}

func (c chain) Near(frame []float32) ([]float32, error) {
	for _, s := range c {
		var err error
		if frame, err = s.Near(frame); err != nil {
			return nil, err
		}
	}
	return frame, nil
}

// Resting wraps the front end of a session that can rest (see
// pipeline.NeedPreRoll): while resting, frames pass through untouched and
// the wrapped front end does no work. Rest is called from any goroutine;
// Far, which comes first for each frame, decides for the pair, so the
// near and far streams the front end is given stay in step across a rest.
type Resting struct {
	FrontEnd FrontEnd
	resting  atomic.Bool
	skip     bool // this frame's decision, on the audio goroutine
}

func (r *Resting) Rest(on bool) { r.resting.Store(on) }

func (r *Resting) Far(frame []float32) error {
	if r.skip = r.resting.Load(); r.skip {
		return nil
	}
	return r.FrontEnd.Far(frame)
}

func (r *Resting) Near(frame []float32) ([]float32, error) {
	if r.skip {
		return frame, nil
	}
	return r.FrontEnd.Near(frame)
}

// Gate is the capture stage that lets the microphone through or silences
// it while muted. It is set from any goroutine (a window, a button) and
// read on the audio goroutine. (Push-to-talk is the pipeline's activation,
// which keeps the pre-roll before the press: pipeline.Config.Activation.)
type Gate struct {
	muted atomic.Bool
}

func (g *Gate) SetMuted(v bool) { g.muted.Store(v) }

// Open is whether captured audio is let through now.
func (g *Gate) Open() bool { return !g.muted.Load() }

func (*Gate) Far([]float32) error { return nil }

// Near passes frame on while open, and silence otherwise (a fresh buffer:
// the frame may be shared with its source, a replay's input).
func (g *Gate) Near(frame []float32) ([]float32, error) {
	if g.Open() {
		return frame, nil
	}
	return make([]float32, len(frame)), nil
}
