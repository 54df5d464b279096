// Package bench measures the assistant: each stage's model on its own
// (Stages), the language model (LLM, Conversation) and the whole pipeline
// over a recording (Pipeline). Its results are what voice-agent bench
// prints and writes as JSON, so their JSON names are a format that
// scripts read (cmd/perfdoc makes docs/performance.md's tables of them);
// each says where and when it was measured (Measured).
package bench

import (
	"time"

	"github.com/voiceassistant/voice/internal/memstat"
)

// memorySampling is how often the benchmarks read the process's memory
// for its peaks: a few hundred microseconds of work a second.
const memorySampling = 5 * time.Millisecond

// peaks is what a benchmark reports of its memory: the kernel's exact
// high-water mark of resident memory, the sampled peaks of its parts (RSS
// the exact one), and the memory now.
func peaks(s *memstat.Sampler) (peakRSS int64, peak, end memstat.Usage) {
	peak, peakRSS = s.Reset(), memstat.PeakRSS()
	peak.RSS = max(peak.RSS, peakRSS)
	return peakRSS, peak, memstat.Now()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
