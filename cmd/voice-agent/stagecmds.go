package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/vad"
	"github.com/voiceassistant/voice/wiring"
)

// vadCmd prints the speech segments Silero finds in a recording.
func (a *app) vadCmd() *cobra.Command {
	return a.stageFlags(&cobra.Command{
		Use:     "vad IN.wav",
		Example: `  voice-agent vad test/testdata/demo.wav --json`,
		Short:   "Print the speech segments in a recording (Silero VAD)",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			in, err := audio.OpenWAVMono16k(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			det, closeVAD, err := wiring.NewVAD(a.cfg.Stages)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeVAD()) }()
			segs, err := vad.Segments(cmd.Context(), det, in)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			type segment struct {
				Start float64 `json:"start_s"`
				End   float64 `json:"end_s"`
			}
			out := struct {
				Segments []segment `json:"segments"`
			}{Segments: []segment{}}
			for _, s := range segs {
				out.Segments = append(out.Segments, segment{
					Start: audio.Mono16k.Duration(s.Start).Seconds(),
					End:   audio.Mono16k.Duration(s.End).Seconds(),
				})
			}
			w := cmd.OutOrStdout()
			if a.json {
				return json.NewEncoder(w).Encode(out)
			}
			for _, s := range out.Segments {
				fmt.Fprintf(w, "%8.3fs  %8.3fs  (%.3fs)\n", s.Start, s.End, s.End-s.Start)
			}
			return nil
		},
	}, wiring.VADFlags)
}

// turnCmd prints Smart Turn's completion probability for a recording.
func (a *app) turnCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "turn IN.wav [--turn-model PATH]",
		Example: `  voice-agent turn question.wav
  voice-agent turn question.wav --turn-model smart-turn-v3.2-cpu.onnx`,
		Short: "Print the probability that the speaker has finished (Smart Turn v3)",
		Long:  "Runs Smart Turn on the last 8 s of the recording, as the pipeline does at each pause.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			pcm, err := audio.ReadWAVMono16k(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			m, err := wiring.NewTurnDetector(a.cfg.Stages)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, m.Close()) }()
			start := time.Now()
			p, err := m.Predict(cmd.Context(), pcm)
			if err != nil {
				return err
			}
			out := struct {
				Probability float64 `json:"probability"`
				Complete    bool    `json:"complete"`
				MS          float64 `json:"compute_ms"`
			}{p, p >= 0.5, float64(time.Since(start).Microseconds()) / 1000}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			verdict := "incomplete"
			if out.Complete {
				verdict = "complete"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%.4f (%s)\n", p, verdict)
			return nil
		},
	}
	return a.stageFlags(cmd, wiring.TurnFlags)
}

// asrCmd transcribes a recording with X-ASR, printing partial results as
// they change, as a live session would see them.
func (a *app) asrCmd() *cobra.Command {
	return a.stageFlags(&cobra.Command{
		Use: "asr IN.wav [--asr-model-dir DIR]",
		Example: `  voice-agent asr test/testdata/demo.wav
  voice-agent asr talk.wav --asr-model-dir ~/models/xasr-zh-en-streaming-160ms --json`,
		Short: "Transcribe a recording with the streaming recognizer (X-ASR)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			in, err := audio.OpenWAVMono16k(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer in.Close()
			r, err := wiring.NewRecognizer(a.cfg.Stages)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, r.Close()) }()
			type line struct {
				Type string  `json:"type"`
				AtS  float64 `json:"at_s"`
				Text string  `json:"text"`
				RTF  float64 `json:"rtf,omitempty"`
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			show := func(l line) error {
				if a.json {
					return enc.Encode(l)
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%7.2fs %-7s %s\n", l.AtS, l.Type, l.Text)
				return err
			}
			start := time.Now()
			block := make([]float32, audio.Mono16k.Samples(100*time.Millisecond))
			last := ""
			for pos := int64(0); pos < in.Len(); pos += int64(len(block)) {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				f := audio.Frame{Format: audio.Mono16k, Pos: pos, Samples: block[:min(int64(len(block)), in.Len()-pos)]}
				if err := in.Read(pos, f.Samples); err != nil {
					return err
				}
				partial, err := r.Accept(f)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if partial != last {
					last = partial
					if err := show(line{Type: "partial", AtS: f.Stop().Seconds(), Text: partial}); err != nil {
						return err
					}
				}
			}
			final, err := r.Finalize()
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			dur := audio.Mono16k.Duration(in.Len())
			return show(line{Type: "final", AtS: dur.Seconds(), Text: final, RTF: time.Since(start).Seconds() / dur.Seconds()})
		},
	}, wiring.ASRFlags)
}
