package mnnconf

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMerge(t *testing.T) {
	dst := map[string]any{
		"thread_num": 1,
		"jinja":      map[string]any{"chat_template": "T", "context": map[string]any{"enable_thinking": false}},
		"sampler":    "greedy",
	}
	Merge(dst, map[string]any{
		"jinja":   map[string]any{"context": map[string]any{"enable_thinking": true, "lang": "zh"}},
		"sampler": map[string]any{"type": "mixed"}, // an object over a value replaces it
		"new":     2,
	})
	assert.Equal(t, map[string]any{
		"thread_num": 1,
		"jinja":      map[string]any{"chat_template": "T", "context": map[string]any{"enable_thinking": true, "lang": "zh"}},
		"sampler":    map[string]any{"type": "mixed"},
		"new":        2,
	}, dst)
}
