package pipeline

import (
	"time"

	"github.com/voiceassistant/voice/pipeline/compute"
)

// SetComputeClock makes compute measured on now for the rest of a test;
// restore puts the wall clock back.
func SetComputeClock(now func() time.Time) (restore func()) {
	compute.Now = now
	return func() { compute.Now = time.Now }
}
