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

const attentionTTS = "../../tts/moss/testdata/attention-tts"

// decodeStep names the MOSS decode step's tensors, with layers layers.
func decodeStep(layers int) graphedit.DecodeStep {
	step := graphedit.DecodeStep{Rows: "input_ids", Lengths: "past_valid_lengths", Hidden: []string{"global_hidden"}}
	for i := range layers {
		k, v := fmt.Sprintf("key_%d", i), fmt.Sprintf("value_%d", i)
		step.Caches = append(step.Caches, graphedit.KVCache{Key: [2]string{"past_" + k, "present_" + k}, Value: [2]string{"past_" + v, "present_" + v}})
	}
	return step
}

// The rewritten decode step declares its caches, in and out, laid [batch,
// heads, rows, head_dim] as GroupQueryAttention takes them; each layer's
// attention is one GroupQueryAttention, and nothing of the mask, the
// Concats or the caches' transposes is left. (tts/moss checks that it says
// what the original says.)
func TestSharedKVAttentionDeclaresTheBuffers(t *testing.T) {
	model, err := os.ReadFile(filepath.Join(attentionTTS, "moss_tts_decode_step.onnx"))
	require.NoError(t, err)
	model, err = graphedit.Inline(model, attentionTTS)
	require.NoError(t, err)
	shared, err := graphedit.SharedKVAttention(model, decodeStep(2))
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
	assert.Equal(t, []int64{-1, -1, 17}, dims["input_ids"], "any number of rows")
	assert.Equal(t, []int64{-1, -1, 16}, dims["global_hidden"])
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
	model, err = graphedit.Inline(model, attentionTTS)
	require.NoError(t, err)
	swapped := decodeStep(2)
	swapped.Caches[0].Key, swapped.Caches[0].Value = swapped.Caches[0].Value, swapped.Caches[0].Key
	_, err = graphedit.SharedKVAttention(model, swapped)
	require.ErrorIs(t, err, graphedit.ErrNotAttention)
	assert.ErrorContains(t, err, "present_value_0 is read transposed by [0 2 1 3], not [0 2 3 1]")

	noLengths := decodeStep(2)
	noLengths.Lengths = "input_ids"
	_, err = graphedit.SharedKVAttention(model, noLengths)
	assert.ErrorContains(t, err, "no graph input input_ids of one axis")

	tiny, err := os.ReadFile("../../tts/moss/testdata/tiny/moss_tts_decode_step.onnx")
	require.NoError(t, err)
	_, err = graphedit.SharedKVAttention(tiny, decodeStep(12))
	require.ErrorIs(t, err, graphedit.ErrNotAttention)
	assert.ErrorContains(t, err, "past_key_0 is read by [ReduceMean Concat]")
}
