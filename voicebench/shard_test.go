package voicebench

import (
	"fmt"
	"testing"

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
