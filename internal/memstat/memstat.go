// Package memstat reads what the process holds in memory, split the way a
// small device's kernel sees it. Anonymous pages (the Go and C heaps,
// prepacked weights, KV caches) can only be swapped, and a phone-class
// device has no swap: they are what gets the process killed. File-backed
// pages (the libraries, weights mapped from a file) are dropped under
// pressure and read again when touched. The assistant's memory budget is
// on the first; resident memory counts both.
package memstat

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strings"
	"sync"
	"time"
)

// Usage is the process's memory at one moment, or the peak of each field
// over a span, in bytes (Linux; zeros elsewhere).
type Usage struct {
	RSS  int64 `json:"rss_bytes"`
	Anon int64 `json:"anon_bytes"`
	File int64 `json:"file_bytes"`
	// Go is what the Go runtime holds from the system (its heap, stacks,
	// and metadata, less what it has returned): a part of Anon.
	Go int64 `json:"go_bytes"`
	// PSS counts each page once, shared pages in part (ONNX Runtime maps
	// an external data file once per session, which RSS counts each
	// time): what the process costs the device. Only Now reads it.
	PSS int64 `json:"pss_bytes,omitempty"`
}

func (u Usage) String() string {
	s := fmt.Sprintf("RSS %.1f MiB (%.1f anonymous, of which Go %.1f; %.1f file-backed)", MiB(u.RSS), MiB(u.Anon), MiB(u.Go), MiB(u.File))
	if u.PSS > 0 {
		s += fmt.Sprintf(", PSS %.1f MiB", MiB(u.PSS))
	}
	return s
}

// MiB converts bytes to mebibytes.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }

// Sub is u less base, field by field: what a stage added.
func (u Usage) Sub(base Usage) Usage {
	return Usage{RSS: u.RSS - base.RSS, Anon: u.Anon - base.Anon, File: u.File - base.File, Go: u.Go - base.Go, PSS: u.PSS - base.PSS}
}

func (u Usage) max(o Usage) Usage {
	return Usage{RSS: max(u.RSS, o.RSS), Anon: max(u.Anon, o.Anon), File: max(u.File, o.File), Go: max(u.Go, o.Go), PSS: max(u.PSS, o.PSS)}
}

// Now reads the process's memory, with PSS.
func Now() Usage {
	u := sample()
	u.PSS = procBytes("/proc/self/smaps_rollup", "Pss:")[0]
	return u
}

// PeakRSS is the kernel's high-water mark of resident memory (VmHWM):
// exact, where sampled peaks can miss a spike between two samples.
func PeakRSS() int64 { return procBytes("/proc/self/status", "VmHWM:")[0] }

func sample() Usage {
	f := procBytes("/proc/self/status", "VmRSS:", "RssAnon:", "RssFile:")
	return Usage{RSS: f[0], Anon: f[1], File: f[2], Go: goHeld()}
}

var goMetrics = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}

// goHeld is what the Go runtime has mapped and not returned to the system.
func goHeld() int64 {
	s := make([]metrics.Sample, len(goMetrics))
	copy(s, goMetrics)
	metrics.Read(s)
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}

// Sampler follows the peak of each field of Usage: the kernel keeps a
// high-water mark of resident memory only, not of its anonymous part.
// A spike shorter than the interval can be missed; PeakRSS cannot miss it.
type Sampler struct {
	mu   sync.Mutex
	peak Usage
	stop chan struct{}
	done chan struct{}
}

// Sample starts following the peaks, reading every interval.
func Sample(interval time.Duration) *Sampler {
	s := &Sampler{peak: sample(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.observe()
			}
		}
	}()
	return s
}

func (s *Sampler) observe() Usage {
	now := sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak = s.peak.max(now)
	return now
}

// Reset returns the peaks since the last Reset (or the start) and starts
// following them anew from now.
func (s *Sampler) Reset() Usage {
	now := s.observe()
	s.mu.Lock()
	defer s.mu.Unlock()
	peak := s.peak
	s.peak = now
	return peak
}

// Stop ends the sampling and returns the peaks since the last Reset.
func (s *Sampler) Stop() Usage {
	peak := s.Reset()
	close(s.stop)
	<-s.done
	return peak
}

// procBytes reads kB fields of a /proc file, in bytes (0 for one it lacks).
func procBytes(file string, fields ...string) []int64 {
	values := make([]int64, len(fields))
	data, err := os.ReadFile(file)
	if err != nil {
		return values
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		for i, field := range fields {
			if v, ok := strings.CutPrefix(line, field); ok {
				var kb int64
				fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
				values[i] = kb * 1024
			}
		}
	}
	return values
}
