package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/tts/normalize"
	"github.com/voiceassistant/voice/wiring"
)

// ttsCmd synthesizes text to a WAV file with the configured synthesizer.
func (a *app) ttsCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: `tts "TEXT" --out OUT.wav`,
		Example: `  voice-agent tts "Hello, how can I help?" --out hello.wav
  voice-agent tts "Hello" --out hello.wav --tts tone`,
		Short: "Speak text into a WAV file",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if out == "" {
				return errors.New("--out OUT.wav is required")
			}
			if a.cfg.Stages.TTS == wiring.TTSNone {
				return errors.New("the tts command needs a synthesizer: --tts moss (the default) or --tts tone (the stand-in)")
			}
			tts, closeTTS, err := wiring.NewSynthesizer(a.cfg.Stages)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeTTS()) }()
			w, err := audio.NewWAVWriter(out, tts.Format(), audio.PCM16)
			if err != nil {
				return err
			}
			start := time.Now()
			var firstAudio time.Duration
			text := strings.Join(args, " ")
			synthErr := tts.Synthesize(cmd.Context(), text, normalize.Detect(text), func(samples []float32) error {
				if firstAudio == 0 {
					firstAudio = time.Since(start)
				}
				return w.Write(samples)
			})
			if err := errors.Join(synthErr, w.Close()); err != nil {
				return err
			}
			dur := tts.Format().Duration(w.Frames())
			a.log.Info("wrote", "file", out, "audio_s", dur.Seconds(), "first_audio_ms", firstAudio.Milliseconds(),
				"rtf", fmt.Sprintf("%.3f", time.Since(start).Seconds()/max(dur.Seconds(), 1e-9)))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "WAV file to write")
	return a.stageFlags(cmd, wiring.TTSFlags)
}
