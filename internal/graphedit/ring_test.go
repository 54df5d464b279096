package graphedit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
)

const attentionCodec = "../../tts/moss/testdata/attention-codec/moss_audio_tokenizer_decode_step.onnx"

func attentionCaches(rings ...int64) []graphedit.SlidingCache {
	var caches []graphedit.SlidingCache
	for i, ring := range rings {
		caches = append(caches, graphedit.SlidingCache{
			Positions: [2]string{fmt.Sprintf("attn_cached_positions_%d", i), fmt.Sprintf("attn_cached_positions_out_%d", i)},
			Tensors: [][2]string{
				{fmt.Sprintf("attn_cached_keys_%d", i), fmt.Sprintf("attn_cached_keys_out_%d", i)},
				{fmt.Sprintf("attn_cached_values_%d", i), fmt.Sprintf("attn_cached_values_out_%d", i)},
			},
			Ring: ring,
		})
	}
	return caches
}

// The rewritten codec declares its caches, in and out, as long as their
// rings, and writes each with a ScatterElements instead of a Concat and a
// Slice. (tts/moss checks that it says what the original says.)
func TestRingCachesDeclareTheRings(t *testing.T) {
	model, err := os.ReadFile(attentionCodec)
	require.NoError(t, err)
	rings := []int64{11, 21, 38, 73}
	ring, err := graphedit.RingCaches(model, attentionCaches(rings...))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "ring.onnx")
	require.NoError(t, os.WriteFile(path, ring, 0o644))
	ins, outs, err := onnx.Declaration(path)
	require.NoError(t, err)
	dims := map[string][]int64{}
	for _, d := range append(ins, outs...) {
		dims[d.Name] = d.Dimensions
	}
	for i, n := range rings {
		for _, name := range []string{"attn_cached_values_%d", "attn_cached_values_out_%d"} {
			assert.Equal(t, []int64{1, 2, n, 8}, dims[fmt.Sprintf(name, i)], name, i)
		}
		for _, name := range []string{"attn_cached_keys_%d", "attn_cached_keys_out_%d"} {
			assert.Equal(t, []int64{1, 2, 8, n}, dims[fmt.Sprintf(name, i)], "%s %d: kept transposed, as the attention reads it", name, i)
		}
		for _, name := range []string{"attn_cached_positions_%d", "attn_cached_positions_out_%d"} {
			assert.Equal(t, []int64{1, n}, dims[fmt.Sprintf(name, i)], name, i)
		}
	}
	assert.Equal(t, 3*len(rings), strings.Count(string(ring), "ScatterElements"))
	assert.Equal(t, 0, strings.Count(string(ring), "Transpose_3"), "the keys' transposes are gone")
	assert.Equal(t, 0, strings.Count(string(ring), "Sliceattn_cached"), "no value_info left for the Slices")
}

// A graph whose caches are not the Concat-then-Slice of a sliding window
// is refused, with what was found.
func TestRingCachesRefuseOtherCaches(t *testing.T) {
	model, err := os.ReadFile(attentionCodec)
	require.NoError(t, err)
	bad := attentionCaches(11)
	bad[0].Tensors[0] = [2]string{"attn_cached_keys_0", "attn_cached_values_out_0"}
	_, err = graphedit.RingCaches(model, bad)
	require.ErrorIs(t, err, graphedit.ErrNotSliding)
	assert.ErrorContains(t, err, "no Slice of attn_cached_keys_0's Concat is the output attn_cached_values_out_0")

	_, err = graphedit.RingCaches(model, attentionCaches(0))
	assert.ErrorContains(t, err, "ring length 0")
}
