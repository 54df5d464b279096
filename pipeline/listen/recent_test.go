package listen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/voiceassistant/voice/audio"
)

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
