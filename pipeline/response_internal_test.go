package pipeline

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/tts/chunk"
)

func TestHeardText(t *testing.T) {
	r := &response{words: chunk.New(chunk.DefaultConfig()), spoken: []spokenChunk{
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
		spoken, written := r.heard(tc.pos)
		assert.Equal(t, tc.spoken, spoken, "pos %d", tc.pos)
		assert.Equal(t, tc.written, written, "pos %d", tc.pos)
	}

	// Words the reply does not say (it cannot happen, but the history
	// must not lose them) are remembered as heard.
	r.reply.Reset()
	r.reply.WriteString("Something else entirely.")
	spoken, written := r.heard(500)
	assert.Equal(t, "Once upon", spoken)
	assert.Equal(t, spoken, written)
}

func TestRecentAudioKeepsTheLatestSamples(t *testing.T) {
	h := newRecentAudio(100 * time.Millisecond) // 1600 samples
	ramp := func(from, n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(from + i)
		}
		return out
	}
	for pos := 0; pos < 5000; pos += 160 {
		h.add(audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: ramp(pos, 160)})
	}
	// 5120 samples were added; the last 1600 are kept.
	assert.Equal(t, ramp(3520, 1600), h.since(0, 9999).Samples)
	got := h.since(4000, 4100)
	assert.Equal(t, int64(4000), got.Pos)
	assert.Equal(t, ramp(4000, 100), got.Samples)
	assert.Empty(t, h.since(6000, 7000).Samples)

	// A gap forgets what came before it.
	h.add(audio.Frame{Format: audio.Mono16k, Pos: 10000, Samples: ramp(10000, 160)})
	assert.Equal(t, append(make([]float32, 1440), ramp(10000, 160)...), h.since(0, 99999).Samples)
}
