package voicebench

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/4")
	require.NoError(t, err)
	assert.Equal(t, Shard{Index: 2, Count: 4}, s)
	assert.Equal(t, "2/4", s.String())
	for _, bad := range []string{"", "4/4", "-1/4", "1/0", "1", "a/b", "1/4/2"} {
		_, err := ParseShard(bad)
		assert.ErrorContains(t, err, "is not K/N", "%q", bad)
	}
}

// Every sample belongs to exactly one shard, the shards share the samples
// out about evenly, and the whole run (the zero Shard) has them all.
func TestShardsPartitionTheSamples(t *testing.T) {
	const n, samples = 4, 4000
	counts := make([]int, n)
	for i := range samples {
		id := fmt.Sprintf("usa/%d", i)
		owners := 0
		for k := range n {
			if (Shard{Index: k, Count: n}).Has("sd-qa", id) {
				owners++
				counts[k]++
			}
		}
		require.Equal(t, 1, owners, id)
		assert.True(t, Shard{}.Has("sd-qa", id))
	}
	for k, c := range counts {
		assert.InDelta(t, samples/n, c, samples/n/5, "shard %d", k)
	}
}

// The meter reports the rate and the time left, at most once per interval,
// and always the last sample.
func TestProgressMeter(t *testing.T) {
	now := time.Unix(0, 0)
	var got []Progress
	m := newProgressMeter("sd-qa", 10, 4, time.Minute, func(p Progress) { got = append(got, p) }, func() time.Time { return now })
	for range 6 {
		now = now.Add(20 * time.Second) // three samples a minute
		m.add()
	}
	require.Len(t, got, 2, "at 1 min, and the last (at 2 min)")
	assert.Equal(t, Progress{Subset: "sd-qa", Done: 7, Total: 10, PerMinute: 3, ETA: time.Minute}, got[0])
	assert.Equal(t, 10, got[1].Done)
	assert.Zero(t, got[1].ETA)
}
