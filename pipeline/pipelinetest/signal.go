package pipelinetest

import (
	"math"
	"time"

	"github.com/voiceassistant/voice/audio"
)

// Voice returns 16 kHz mono audio of the given length with a voiced,
// speech-like signal (a 140 Hz harmonic series at about -20 dBFS RMS)
// during each utterance and silence elsewhere.
func Voice(length time.Duration, utterances ...Utterance) []float32 {
	pcm := make([]float32, audio.Mono16k.Samples(length))
	for _, u := range utterances {
		from := audio.Mono16k.Samples(u.Start)
		to := min(audio.Mono16k.Samples(u.End), int64(len(pcm)))
		for i := from; i < to; i++ {
			t := float64(i) / audio.ProcessingRate
			var s float64
			for h := 1; h <= 5; h++ {
				s += math.Sin(2*math.Pi*140*float64(h)*t) / float64(h)
			}
			pcm[i] = float32(0.07 * s)
		}
	}
	return pcm
}
