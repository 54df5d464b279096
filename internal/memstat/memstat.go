// Package memstat reads what the process holds in memory, split the way a
// small device's kernel sees it. Anonymous pages (the Go and C heaps,
// prepacked weights, KV caches) can only be swapped, and a phone-class
// device has no swap: they are what gets the process killed. File-backed
// pages (the libraries, weights mapped from a file) are dropped under
// pressure and read again when touched. The assistant's memory budget is
// on the first; resident memory counts both.
package memstat

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
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
	var r procReader
	defer r.close()
	u := r.sample()
	u.PSS = procBytes("/proc/self/smaps_rollup", "Pss:")
	return u
}

// PeakRSS is the kernel's high-water mark of resident memory (VmHWM):
// exact, where sampled peaks can miss a spike between two samples.
func PeakRSS() int64 { return procBytes("/proc/self/status", "VmHWM:") }

// procReader samples the process's memory without allocating: a Sampler
// reads it every few milliseconds while the code it measures runs, and
// its garbage would show in that code's allocations. It keeps
// /proc/self/status open and reads it again from its start, which makes
// the kernel write it anew.
type procReader struct {
	status *os.File
	buf    []byte
	goMem  []metrics.Sample
}

func (r *procReader) sample() Usage {
	if r.status == nil {
		f, err := os.Open("/proc/self/status")
		if err != nil {
			return Usage{}
		}
		r.status, r.buf = f, make([]byte, 8<<10)
		r.goMem = []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	}
	n, _ := r.status.ReadAt(r.buf, 0) // io.EOF at the end of the file
	status := r.buf[:n]
	metrics.Read(r.goMem)
	return Usage{
		RSS: kbField(status, "VmRSS:"), Anon: kbField(status, "RssAnon:"), File: kbField(status, "RssFile:"),
		// What the Go runtime has mapped and not returned to the system.
		Go: int64(r.goMem[0].Value.Uint64() - r.goMem[1].Value.Uint64()),
	}
}

func (r *procReader) close() {
	if r.status != nil {
		_ = r.status.Close()
		r.status = nil
	}
}

// Sampler follows the peak of each field of Usage: the kernel keeps a
// high-water mark of resident memory only, not of its anonymous part.
// A spike shorter than the interval can be missed; PeakRSS cannot miss it.
type Sampler struct {
	mu    sync.Mutex
	r     procReader // under mu
	peak  Usage
	ticks ticker
}

// Sample starts following the peaks, reading every interval.
func Sample(interval time.Duration) *Sampler {
	s := &Sampler{}
	s.peak = s.r.sample()
	s.ticks.start(interval, func() { s.observe() })
	return s
}

// ticker calls a function every interval on a goroutine of its own, until
// halted.
type ticker struct {
	stop, done chan struct{}
	halted     sync.Once
}

func (t *ticker) start(interval time.Duration, f func()) {
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(t.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				f()
			}
		}
	}()
}

// halt stops the calls and waits for the last to return; once halted,
// it returns at once.
func (t *ticker) halt() {
	t.halted.Do(func() { close(t.stop) })
	<-t.done
}

func (s *Sampler) observe() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.r.sample()
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
	s.ticks.halt()
	s.r.close()
	return peak
}

// procBytes reads a kB field of a /proc file, in bytes (0 if it lacks it).
func procBytes(file, field string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return kbField(data, field)
}

// kbField reads the field named name ("VmRSS:") of a /proc status-style
// text, given in kB, in bytes; 0 if the text lacks it.
func kbField(text []byte, name string) int64 {
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte(name)); ok {
			var kb int64
			for _, c := range bytes.TrimSpace(v) {
				if c < '0' || c > '9' {
					break
				}
				kb = 10*kb + int64(c-'0')
			}
			return kb * 1024
		}
	}
	return 0
}
