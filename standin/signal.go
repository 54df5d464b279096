package standin

import (
	"math"
	"sort"
	"time"

	"github.com/voiceassistant/voice/audio"
)

// Voice returns 16 kHz mono audio of the given length with a voiced,
// speech-like signal (a 140 Hz harmonic series at about -20 dBFS RMS)
// during each utterance and silence elsewhere.
func Voice(length time.Duration, utterances ...Utterance) []float32 {
	pcm := make([]float32, audio.Mono16k.Samples(length))
	_ = VoiceSource{Length: length, Utterances: utterances}.Read(0, pcm) // never fails
	return pcm
}

// VoiceSource is Voice made as it is read, for sessions too long to hold
// in memory; it is an audio.CaptureSource.
type VoiceSource struct {
	Length     time.Duration
	Utterances []Utterance // in time order
}

func (v VoiceSource) Len() int64 { return audio.Mono16k.Samples(v.Length) }

func (v VoiceSource) Read(pos int64, out []float32) error {
	end := min(pos+int64(len(out)), v.Len())
	first := sort.Search(len(v.Utterances), func(i int) bool { return audio.Mono16k.Samples(v.Utterances[i].End) > pos })
	for _, u := range v.Utterances[first:] {
		from, to := max(audio.Mono16k.Samples(u.Start), pos), min(audio.Mono16k.Samples(u.End), end)
		if from >= end {
			break
		}
		for i := from; i < to; i++ {
			out[i-pos] = voiced(i)
		}
	}
	return nil
}

// voiced is sample i of the voice signal.
func voiced(i int64) float32 {
	t := float64(i) / audio.ProcessingRate
	var s float64
	for h := 1; h <= 5; h++ {
		s += math.Sin(2*math.Pi*140*float64(h)*t) / float64(h)
	}
	return float32(0.07 * s)
}
