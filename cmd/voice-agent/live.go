package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/wiring"
	"github.com/voiceassistant/voice/pipeline"
)

func (a *app) runCmd() *cobra.Command {
	d := &a.cfg.Device
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Talk to the assistant through the microphone and speaker",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Stages first: a missing model is reported without touching
			// the audio hardware.
			clk := clock.NewStream(audio.ProcessingRate)
			cfg, closeStages, err := wiring.Build(a.cfg.Stages, clk)
			if err != nil {
				return err
			}
			defer closeStages()
			devCfg := *d
			devCfg.Clock = clk
			fe, closeFE, halfDuplex, err := wiring.NewFrontEnd(a.cfg.Stages)
			if err != nil {
				return err
			}
			defer closeFE()
			devCfg.FrontEnd = fe
			if halfDuplex {
				a.log.Warn("echo cancellation is not in this build (see README); running half duplex: no barge-in")
				cfg.HalfDuplex.Enabled = true
			}
			dev, err := device.Open(devCfg)
			if err != nil {
				return err
			}
			defer dev.Close()
			cfg.Clock, cfg.Device = clk, dev
			p, err := pipeline.New(cfg)
			if err != nil {
				return err
			}
			if err := dev.Start(); err != nil {
				return err
			}
			printer := newEventPrinter(a.json, cmd.OutOrStdout(), a.log)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for e := range p.Events() {
					printer.print(e)
				}
			}()
			a.log.Info("listening", "capture", d.Capture, "playback", d.Playback)
			err = p.Run(cmd.Context())
			<-done
			st := dev.Stats()
			a.log.Info("stopped", "capture_overruns", st.CaptureOverruns, "playback_underruns", st.PlaybackUnderruns)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&d.Backend, "backend", "", "audio backend: pulseaudio, alsa, null (default: automatic)")
	f.StringVar(&d.Capture, "capture", "", "capture device name (default: system default)")
	f.StringVar(&d.Playback, "playback", "", "playback device name (default: system default)")
	f.IntVar(&d.Rate, "rate", 48000, "device sample rate")
	return cmd
}

func (a *app) devicesCmd() *cobra.Command {
	var backend string
	cmd := &cobra.Command{
		Use:   "devices",
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
