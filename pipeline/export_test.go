package pipeline

import "time"

// SetComputeClock makes compute measured on now for the rest of a test;
// restore puts the wall clock back.
func SetComputeClock(now func() time.Time) (restore func()) {
	computeClock = now
	return func() { computeClock = time.Now }
}
