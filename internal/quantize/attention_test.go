package quantize_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/quantize"
)

const attentionTTS = "../../tts/moss/testdata/attention-tts"

func decodeCaches(layers int) []quantize.KVCache {
	var caches []quantize.KVCache
	for i := range layers {
		k, v := fmt.Sprintf("key_%d", i), fmt.Sprintf("value_%d", i)
		caches = append(caches, quantize.KVCache{Key: [2]string{"past_" + k, "present_" + k}, Value: [2]string{"past_" + v, "present_" + v}})
	}
	return caches
}

// The rewritten decode step declares its caches, in and out, laid [batch,
// heads, rows, head_dim] as GroupQueryAttention takes them; each layer's
// attention is one GroupQueryAttention, and nothing of the mask, the
// Concats or the caches' transposes is left. (tts/moss checks that it says
// what the original says.)
func TestSharedKVAttentionDeclaresTheBuffers(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(attentionTTS, "moss_tts_decode_step.onnx"))
	require.NoError(t, err)
	model, err = quantize.Inline(model, attentionTTS)
	require.NoError(t, err)
	shared, err := quantize.SharedKVAttention(model, decodeCaches(2), "past_valid_lengths")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "shared.onnx")
	require.NoError(t, os.WriteFile(path, shared, 0o644))
	ins, outs, err := onnx.Declaration(path)
	require.NoError(t, err)
	dims := map[string][]int64{}
	for _, d := range append(ins, outs...) {
		dims[d.Name] = d.Dimensions
	}
	for _, name := range []string{"past_key_0", "past_value_1", "present_key_1", "present_value_0"} {
		assert.Equal(t, []int64{-1, 2, -1, 8}, dims[name], name)
	}
	assert.Equal(t, 2, strings.Count(string(shared), "GroupQueryAttention"))
	for _, gone := range []string{"Softmax", "Where", "/Less_output_0", "/h.0/attn/Transpose_1_output_0"} {
		assert.Contains(t, string(model), gone)
		assert.NotContains(t, string(shared), gone)
	}
}

// A graph whose caches are not read as a growing cache's attention is
// refused, with what was found.
func TestSharedKVAttentionRefusesOtherGraphs(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(attentionTTS, "moss_tts_decode_step.onnx"))
	require.NoError(t, err)
	model, err = quantize.Inline(model, attentionTTS)
	require.NoError(t, err)
	swapped := decodeCaches(2)
	swapped[0].Key, swapped[0].Value = swapped[0].Value, swapped[0].Key
	_, err = quantize.SharedKVAttention(model, swapped, "past_valid_lengths")
	require.ErrorIs(t, err, quantize.ErrNotAttention)
	assert.ErrorContains(t, err, "present_value_0 is read transposed by [0 2 1 3], not [0 2 3 1]")

	_, err = quantize.SharedKVAttention(model, decodeCaches(2), "input_ids")
	assert.ErrorContains(t, err, "no graph input input_ids of one axis")

	tiny, err := os.ReadFile("../../tts/moss/testdata/tiny/moss_tts_decode_step.onnx")
	require.NoError(t, err)
	_, err = quantize.SharedKVAttention(tiny, decodeCaches(12), "past_valid_lengths")
	require.ErrorIs(t, err, quantize.ErrNotAttention)
	assert.ErrorContains(t, err, "past_key_0 is read by [ReduceMean Concat]")
}
