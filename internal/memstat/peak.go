package memstat

import (
	"sync"
	"time"
)

// atPeak keeps what take returns at the peak of what measure returns,
// looked at every interval: a new one whenever the measure has grown a
// fiftieth past the last one's, so a few hundred at most over its growth.
type atPeak[T any] struct {
	mu    sync.Mutex
	best  int64
	taken bool
	snap  T
	ticks ticker
}

func (p *atPeak[T]) follow(interval time.Duration, measure func() int64, take func() (T, bool)) {
	look := func() {
		now := measure()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.taken && now <= p.best+p.best/50 {
			return
		}
		if snap, ok := take(); ok {
			p.best, p.snap, p.taken = now, snap, true
		}
	}
	look()
	p.ticks.start(interval, look)
}

// stop ends the looking and returns the snapshot at the peak and the
// measure then.
func (p *atPeak[T]) stop() (T, int64) {
	p.ticks.halt()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.snap, p.best
}
