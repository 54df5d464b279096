package memstat

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Mappings of one file or kind are summed, the largest first; one written
// twice (the heap, grown between two reads of the file) counts once, as
// its second record says; one with nothing resident is left out.
func TestParseSmaps(t *testing.T) {
	smaps := `5581a0000000-5581a0100000 r-xp 00000000 08:01 1234                       /usr/bin/voice agent
Size:               1024 kB
Rss:                 800 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me dw
5581a0200000-5581a0300000 rw-p 00000000 00:00 0                          [heap]
Rss:                 300 kB
Anonymous:           300 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0 
Rss:                 100 kB
Anonymous:           100 kB
7f0000200000-7f0000300000 r--p 00100000 08:01 99                         /models/weights.bin
Rss:                 500 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r--p 00000000 08:01 99                         /models/weights.bin
Rss:                 600 kB
Anonymous:            20 kB
7f0000600000-7f0000700000 rw-p 00000000 00:00 0 
Rss:                  50 kB
Anonymous:            50 kB
7f0000800000-7f0000900000 ---p 00000000 00:00 0 
Rss:                   0 kB
Anonymous:             0 kB
5581a0200000-5581a0380000 rw-p 00000000 00:00 0                          [heap]
Rss:                 320 kB
Anonymous:           320 kB
`
	assert.Equal(t, []Mapping{
		{Name: "/models/weights.bin", RSS: 1100 << 10, Anon: 20 << 10},
		{Name: "/usr/bin/voice agent", RSS: 800 << 10},
		{Name: "[heap]", RSS: 320 << 10, Anon: 320 << 10},
		{Name: "[anonymous]", RSS: 150 << 10, Anon: 150 << 10},
	}, byName(parseSmaps([]byte(smaps))))
	areas := parseSmaps([]byte(smaps))
	require.Len(t, areas, 7)
	assert.Equal(t, Area{Start: 0x7f0000400000, End: 0x7f0000500000, Name: "/models/weights.bin", RSS: 600 << 10, Anon: 20 << 10}, areas[4])
}

// The mappings kept are those at the peak: while 64 MiB more were
// resident, not after they were given back.
func TestMappingsAtPeak(t *testing.T) {
	if Mappings() == nil {
		t.Skip("no /proc/self/smaps")
	}
	anon := func(ms []Mapping) (sum int64) {
		for _, m := range ms {
			sum += m.Anon
		}
		return sum
	}
	debug.FreeOSMemory()
	before := anon(Mappings())
	m := FollowMappings(time.Millisecond)
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1 // resident, not only reserved
	}
	time.Sleep(50 * time.Millisecond)
	runtime.KeepAlive(big)
	big = nil
	debug.FreeOSMemory()
	time.Sleep(20 * time.Millisecond)
	at, rss := m.Stop()
	require.NotEmpty(t, at)
	assert.Greater(t, anon(at)-before, int64(56<<20), "the 64 MiB are in the mappings at the peak")
	assert.Greater(t, rss, int64(64<<20))
	// Against the end, not the start: under the race detector the
	// megabytes' shadow stays mapped once they are given back.
	assert.Greater(t, anon(at)-anon(Mappings()), int64(32<<20), "the mappings are the peak's, not the end's")
}
