package voicebench

import (
	"sync"
	"time"
)

// Progress is how far a run has come through its subset (of its shard).
type Progress struct {
	Subset string
	// Done counts the samples with a result, earlier runs' included; Total
	// the samples the run is to answer.
	Done, Total int
	// PerMinute is this run's rate, ETA the time left at that rate (0
	// until a sample has been answered).
	PerMinute float64
	ETA       time.Duration
}

// progressMeter turns answered samples into Progress reports, at most one
// per interval (and always the last).
type progressMeter struct {
	report   func(Progress)
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	p        Progress
	answered int
	start    time.Time
	last     time.Time
}

func newProgressMeter(subset string, total, done int, interval time.Duration, report func(Progress), now func() time.Time) *progressMeter {
	t := now()
	return &progressMeter{report: report, interval: interval, now: now,
		p: Progress{Subset: subset, Done: done, Total: total}, start: t, last: t}
}

// add counts one more sample answered and reports if it is time to.
func (m *progressMeter) add() {
	m.mu.Lock()
	m.answered++
	m.p.Done++
	t := m.now()
	if elapsed := t.Sub(m.start); elapsed > 0 {
		m.p.PerMinute = float64(m.answered) / elapsed.Minutes()
		m.p.ETA = time.Duration(float64(m.p.Total-m.p.Done) / float64(m.answered) * float64(elapsed))
	}
	due := t.Sub(m.last) >= m.interval || m.p.Done >= m.p.Total
	if due {
		m.last = t
	}
	p := m.p
	m.mu.Unlock()
	if due {
		m.report(p)
	}
}
