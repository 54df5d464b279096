package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAnswers(t *testing.T) {
	for _, tc := range []struct {
		spoken, final string
		want          bool
	}{
		{"what is the weather today", "what is the weather today.", true},
		{"what is it", "what is it?", true},
		{"今天天气怎么样", "今天天气怎么样。", true},
		{"今天天气怎么样", "今天天气怎么样？", true},
		{"hello there", "hello there", true},
		{"what is the weather", "what is the weather today.", false},
		{"what is the weather today", "what is the weather, today.", false},
		{"hello", "", false},
	} {
		assert.Equal(t, tc.want, answers(tc.spoken, tc.final), "%q answers %q", tc.spoken, tc.final)
	}
}
