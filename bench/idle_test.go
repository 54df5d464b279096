package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
)

// A sample's time goes to the innermost of the assistant's functions on
// its stack, whatever runs under it; the parts share the total by their
// samples.
func TestIdleSplitsByPart(t *testing.T) {
	stack := func(names ...string) *profile.Sample { // innermost first
		s := &profile.Sample{Value: []int64{1}}
		for _, n := range names {
			s.Location = append(s.Location, &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: n}}}})
		}
		return s
	}
	p := &profile.Profile{Sample: []*profile.Sample{
		stack("runtime.cgocall", "github.com/yalue/onnxruntime_go.(*AdvancedSession).Run",
			"github.com/voiceassistant/voice/vad/silero.(*Model).Window", "github.com/voiceassistant/voice/vad.(*Detector).Process",
			"github.com/voiceassistant/voice/pipeline.(*Pipeline).frame"),
		stack("github.com/voiceassistant/voice/audio.dot", "github.com/voiceassistant/voice/audio.(*Resampler).drain",
			"github.com/voiceassistant/voice/audio/device.(*Duplex).resample"),
		stack("runtime.memmove", "github.com/voiceassistant/voice/audio.(*Ring).Write",
			"github.com/voiceassistant/voice/audio/device.(*Duplex).process", "github.com/gen2brain/malgo.goDataCallback"),
		stack("runtime.futex", "runtime.findRunnable", "runtime.schedule"),
		stack("runtime._ExternalCode"),
		stack("runtime.futex", "runtime.findRunnable", "runtime.schedule"),
	}}
	parts, n := split(p, 3)
	assert.Equal(t, 6, n)
	assert.Equal(t, []IdlePart{
		{"Go runtime", 1}, {"device callback", 0.5}, {"outside Go", 0.5}, {"resampler", 0.5}, {"vad", 0.5},
	}, parts)
	parts, n = split(&profile.Profile{}, 3)
	assert.Empty(t, parts)
	assert.Zero(t, n)
}

// The benchmark runs the assistant on the null device, here with the
// doubles and a noise recording in place of the capture, and measures it.
func TestIdleMeasuresTheSession(t *testing.T) {
	noise := filepath.Join(t.TempDir(), "room.wav")
	pcm := make([]float32, 16000)
	for i := range pcm {
		pcm[i] = float32(i%7-3) * 0.001
	}
	require.NoError(t, audio.WriteWAV(noise, audio.Mono16k, pcm, audio.PCM16))
	res, err := Idle(context.Background(), doubles(), device.Config{Backend: "null"},
		IdleOptions{Warmup: 100 * time.Millisecond, Measure: 400 * time.Millisecond, Noise: noise})
	require.NoError(t, err)
	assert.Equal(t, "always", res.Activation)
	assert.Equal(t, "room.wav", res.Input)
	assert.Equal(t, "none", res.FrontEnd)
	assert.InDelta(t, 0.4, res.Seconds, 1e-9)
	assert.Positive(t, res.CPUPercent)
	assert.Positive(t, res.Memory.RSS)
	assert.GreaterOrEqual(t, res.Peak.RSS, res.Memory.Anon)

	_, err = Idle(context.Background(), doubles(), device.Config{Backend: "null"}, IdleOptions{})
	assert.ErrorContains(t, err, "must be positive")
	_, err = Idle(context.Background(), doubles(), device.Config{Backend: "null"}, IdleOptions{Measure: time.Second, Noise: "missing.wav"})
	assert.ErrorContains(t, err, "missing.wav")
}
