package pipeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHeardText(t *testing.T) {
	r := &response{spoken: []spokenChunk{
		{text: "Once upon a time,", start: 0, end: 1000},
		{text: "there was a small robot.", start: 1000, end: 2000},
		{text: "从前有一个小机器人。", start: 2000, end: 3000},
	}}
	for _, tc := range []struct {
		pos  uint64
		want string
	}{
		{0, ""},
		{500, "Once upon"},
		{1000, "Once upon a time,"},
		{1400, "Once upon a time, there was"},
		{2000, "Once upon a time, there was a small robot."},
		{2500, "Once upon a time, there was a small robot. 从前有一个"},
		{9999, "Once upon a time, there was a small robot. 从前有一个小机器人。"},
	} {
		assert.Equal(t, tc.want, r.heard(tc.pos), "pos %d", tc.pos)
	}
}
