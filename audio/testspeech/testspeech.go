// Package testspeech makes real speech for tests with espeak-ng: spoken
// utterances spliced with silences of known length, so tests know where
// each utterance starts and ends.
package testspeech

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/voiceassistant/voice/audio"
)

// Available reports whether espeak-ng is installed (scripts/setup
// installs it).
func Available() error {
	_, err := exec.LookPath("espeak-ng")
	if err != nil {
		return fmt.Errorf("espeak-ng not installed (scripts/setup installs it): %w", err)
	}
	return nil
}

// Say speaks text with espeak-ng's American English voice (see SayIn).
func Say(text string) ([]float32, error) { return SayIn("en-us", text) }

// SayIn speaks text with an espeak-ng voice ("en-us", "cmn" for Mandarin)
// and returns it as 16 kHz mono, trimmed to where the voice starts and
// stops, so splice points are exact.
func SayIn(voice, text string) ([]float32, error) {
	dir, err := os.MkdirTemp("", "testspeech")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "say.wav")
	if out, err := exec.Command("espeak-ng", "-v", voice, "-s", "150", "-w", path, text).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("espeak-ng: %v: %s", err, out)
	}
	format, pcm, err := audio.ReadWAV(path)
	if err != nil {
		return nil, err
	}
	pcm, err = audio.Convert(pcm, format, audio.Mono16k)
	if err != nil {
		return nil, err
	}
	return trim(pcm, 0.01), nil
}

// trim cuts leading and trailing samples quieter than threshold.
func trim(pcm []float32, threshold float32) []float32 {
	loud := func(s float32) bool { return s > threshold || s < -threshold }
	start, end := 0, len(pcm)
	for start < end && !loud(pcm[start]) {
		start++
	}
	for end > start && !loud(pcm[end-1]) {
		end--
	}
	return pcm[start:end]
}

// Part is a piece of a spliced recording: speech or silence.
type Part struct {
	Text    string        // spoken if not empty
	Voice   string        // espeak-ng's voice for it (default en-us)
	Silence time.Duration // otherwise this much silence
}

// Span is where an utterance ended up in the recording.
type Span struct {
	Text       string
	Start, End time.Duration
}

// Splice speaks and joins the parts, returning the audio and the span of
// each utterance.
func Splice(parts ...Part) ([]float32, []Span, error) {
	var pcm []float32
	var spans []Span
	for _, p := range parts {
		if p.Text == "" {
			pcm = append(pcm, make([]float32, audio.Mono16k.Samples(p.Silence))...)
			continue
		}
		speech, err := SayIn(cmp.Or(p.Voice, "en-us"), p.Text)
		if err != nil {
			return nil, nil, err
		}
		start := audio.Mono16k.Duration(int64(len(pcm)))
		pcm = append(pcm, speech...)
		spans = append(spans, Span{Text: p.Text, Start: start, End: audio.Mono16k.Duration(int64(len(pcm)))})
	}
	return pcm, spans, nil
}
