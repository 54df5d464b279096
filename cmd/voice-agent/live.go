package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/wiring"
)

func (a *app) runCmd() *cobra.Command {
	d := &a.cfg.Device
	cmd := &cobra.Command{
		Use: "run",
		Example: `  voice-agent run
  voice-agent run --capture "USB" --playback "USB" --json
  voice-agent run --asr scripted --turn none --llm scripted --tts tone --script test/testdata/demo.json`,
		Short: "Talk to the assistant through the microphone and speaker",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printer := newEventPrinter(a.json, cmd.OutOrStdout(), a.log)
			listening := false
			st, err := wiring.Live{
				Stages:  a.cfg.Stages,
				Device:  *d,
				OnEvent: printer.print,
				Warn:    func(msg string) { a.log.Warn(msg) },
				Listening: func() {
					listening = true
					a.log.Info("listening", "capture", d.Capture, "playback", d.Playback)
				},
			}.Run(cmd.Context())
			if listening {
				a.log.Info("stopped", "capture_overruns", st.CaptureOverruns, "playback_underruns", st.PlaybackUnderruns)
			}
			return err
		},
	}
	a.deviceFlags(cmd.Flags())
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

func (a *app) devicesCmd() *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use: "devices",
		Example: `  voice-agent devices
  voice-agent devices --json`,
		Short: "List audio devices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := device.List(backend)
			if err != nil {
				return err
			}
			if len(infos) == 0 {
				return errors.New("no audio devices found")
			}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(infos)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KIND\tDEFAULT\tNAME")
			for _, in := range infos {
				def := ""
				if in.Default {
					def = "*"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", in.Kind, def, in.Name)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&backend, "backend", "", "audio backend: pulseaudio, alsa, null (default: automatic)")
	return cmd
}
