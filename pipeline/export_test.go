package pipeline

import "time"

// MeasureComputeOn makes cfg's pipeline measure compute on now instead of
// the wall clock.
func MeasureComputeOn(cfg *Config, now func() time.Time) {
	cfg.measureCompute = now
}
