package memstat

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var kept [][]byte

// The profile kept is the one from the peak: taken while 64 MiB were
// live, not after they were let go.
func TestHeapAtPeak(t *testing.T) {
	runtime.GC() // what the tests before this one let go is not live
	h := FollowHeap(time.Millisecond)
	for range 64 {
		kept = append(kept, make([]byte, 1<<20))
	}
	runtime.GC() // the peak, as a collection sees it
	time.Sleep(50 * time.Millisecond)
	kept = nil
	// Given back, so the tests after this one measure their own heap.
	debug.FreeOSMemory()
	time.Sleep(50 * time.Millisecond)
	prof, live := h.Stop()
	assert.GreaterOrEqual(t, live, int64(60<<20))
	p, err := profile.Parse(bytes.NewReader(prof))
	require.NoError(t, err)
	var inuse int64
	index := len(p.SampleType) - 1 // inuse_space
	require.Equal(t, "inuse_space", p.SampleType[index].Type)
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && line.Function.Name == "github.com/voiceassistant/voice/internal/memstat.TestHeapAtPeak" {
					inuse += s.Value[index]
				}
			}
		}
	}
	// The profile is sampled, and may lag the live heap by a collection
	// (HeapAtPeak): a part of the 64 MiB is what can be asked; let go,
	// they would be none.
	assert.Greater(t, inuse, int64(16<<20), "the test's megabytes are in the profile")
}
