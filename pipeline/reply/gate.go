package reply

import (
	"context"
	"time"

	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
)

// respond publishes an event of the reply, or holds it back while the
// reply is speculative; its goroutines call it.
func (r *Reply) respond(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.state {
	case Speculative:
		r.held = append(r.held, e)
	case Dropped:
		// A miss: nothing of it is published.
	default:
		r.s.Emit(e)
	}
}

// awaitCommit blocks a speculative reply's audio until its turn is
// committed (or it is cancelled), sleeping on the clock meanwhile so a
// replay's time goes on.
func (r *Reply) awaitCommit(ctx context.Context) error {
	if r.gate == nil {
		return ctx.Err()
	}
	if r.gate.Err() == nil {
		_ = r.s.Clock.Sleep(r.gate, gateWait)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// With compute on the clock the commit is decided once the listening
	// path has caught up: nothing plays before then either.
	r.mu.Lock()
	committed := r.committed
	r.mu.Unlock()
	return compute.CatchUp(ctx, r.s.Clock, committed)
}

// gateWait bounds a wait at the gate; the fallback silence commits or
// drops every speculation long before.
const gateWait = time.Hour
