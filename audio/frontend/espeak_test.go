//go:build webrtcapm

package frontend

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
)

// espeak synthesises text with espeak-ng (22050 Hz) and converts it to
// 16 kHz mono with audio.Convert. The test is skipped without espeak-ng.
func espeak(t *testing.T, text string) []float32 {
	t.Helper()
	bin, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("espeak-ng not installed; synthetic-signal tests still cover AEC")
	}
	path := filepath.Join(t.TempDir(), "s.wav")
	out, err := exec.Command(bin, "-w", path, text).CombinedOutput()
	require.NoError(t, err, "espeak-ng: %s", out)
	f, samples, err := audio.ReadWAV(path)
	require.NoError(t, err)
	conv, err := audio.Convert(samples, f, audio.Format{Rate: SampleRate, Channels: 1})
	require.NoError(t, err)
	return conv
}

func TestEchoCancellationEspeak(t *testing.T) {
	far := espeak(t, "The quick brown fox jumps over the lazy dog. "+
		"Tomorrow will be sunny with a high of twenty two degrees. "+
		"Your timer for the pasta has five minutes left. "+
		"I have added milk, eggs and bread to your shopping list.")
	require.Greater(t, len(far), 6*fs, "espeak output too short")
	echo := convolve(far, room(80, 0.010, 0.5, 4))
	p, err := New(Config{AEC: true, DelayMS: 80})
	require.NoError(t, err)
	defer p.Close()
	out := run(t, p, far, echo)
	m := func(i int) bool { return i >= 2*fs && i < len(out) }
	erle := db(energy(echo[:len(out)], m) / energy(out, m))
	t.Logf("espeak-ng speech, 80 ms delay: ERLE %.1f dB after 2 s", erle)
	assert.GreaterOrEqual(t, erle, 20.0)
}
