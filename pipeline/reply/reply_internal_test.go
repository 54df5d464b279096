package reply

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/tts/chunk"
)

func TestHeardText(t *testing.T) {
	r := &Reply{words: chunk.New(chunk.DefaultConfig()), spoken: []spokenChunk{
		{text: "Once upon a time,", start: 0, end: 1000},
		{text: "there was a small robot.", start: 1000, end: 2000},
		{text: "从前有一个小机器人。", start: 2000, end: 3000},
	}}
	r.reply.WriteString(" **Once** upon a time,\nthere was a *small* robot. 从前有一个小机器人。")
	for _, tc := range []struct {
		pos             uint64
		spoken, written string
	}{
		{0, "", ""},
		{500, "Once upon", " **Once** upon"},
		{1000, "Once upon a time,", " **Once** upon a time,"},
		{1400, "Once upon a time, there was", " **Once** upon a time,\nthere was"},
		{2000, "Once upon a time, there was a small robot.", " **Once** upon a time,\nthere was a *small* robot."},
		{2500, "Once upon a time, there was a small robot.从前有一个", " **Once** upon a time,\nthere was a *small* robot. 从前有一个"},
		{9999, "Once upon a time, there was a small robot.从前有一个小机器人。", r.reply.String()},
	} {
		spoken, written := r.Heard(tc.pos)
		assert.Equal(t, tc.spoken, spoken, "pos %d", tc.pos)
		assert.Equal(t, tc.written, written, "pos %d", tc.pos)
	}

	// Words the reply does not say (it cannot happen, but the history
	// must not lose them) are remembered as heard.
	r.reply.Reset()
	r.reply.WriteString("Something else entirely.")
	spoken, written := r.Heard(500)
	assert.Equal(t, "Once upon", spoken)
	assert.Equal(t, spoken, written)
}
