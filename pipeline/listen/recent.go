package listen

import (
	"time"

	"github.com/voiceassistant/voice/audio"
)

// recentAudio keeps the last few seconds of capture so a turn can start
// before the VAD's (delayed) speech-start decision.
type recentAudio struct {
	ring []float32
	end  int64 // stream position just past the newest sample
}

func newRecentAudio(keep time.Duration) recentAudio {
	return recentAudio{ring: make([]float32, audio.Mono16k.Samples(keep))}
}

func (h *recentAudio) add(f audio.Frame) {
	if f.Pos != h.end {
		clear(h.ring) // a gap in the stream: what is kept no longer precedes f
	}
	samples := f.Samples[max(0, len(f.Samples)-len(h.ring)):]
	at := int((f.End() - int64(len(samples))) % int64(len(h.ring)))
	n := copy(h.ring[at:], samples)
	copy(h.ring, samples[n:])
	h.end = f.End()
}

// since returns the kept audio in [from, before) as one frame, clipped to
// what is still kept.
func (h *recentAudio) since(from, before int64) audio.Frame {
	from = max(from, h.end-int64(len(h.ring)), 0)
	before = min(before, h.end)
	f := audio.Frame{Format: audio.Mono16k, Pos: from}
	if before <= from {
		return f
	}
	f.Samples = make([]float32, before-from)
	at := int(from % int64(len(h.ring)))
	n := copy(f.Samples, h.ring[at:])
	copy(f.Samples[n:], h.ring)
	return f
}
