package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/tools"
	"github.com/voiceassistant/voice/wiring"
)

// envOffline, when set, keeps `run --pull` off the network.
const envOffline = "VOICE_OFFLINE"

func (a *app) runCmd() *cobra.Command {
	d := &a.cfg.Device
	var pull, offline bool
	var mirror string
	cmd := &cobra.Command{
		Use: "run",
		Example: `  voice-agent run
  voice-agent run --pull            # first download the models the assistant lacks
  voice-agent run --capture "USB" --playback "USB" --json
  voice-agent run --asr scripted --turn none --llm scripted --tts tone --script test/testdata/demo.json`,
		Short: "Talk to the assistant through the microphone and speaker",
		Long: `Talks to the assistant through the microphone and speaker. Without --pull it
uses no network: a missing model stops it with one line each naming the
command that gets it. With --pull it first downloads, verified and into the
model cache, every model the configured stages lack (as voice-agent models
pull does), then starts; --offline or $` + envOffline + ` skips the downloads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			svc, err := newService(a.log)
			if err != nil {
				return err
			}
			if pull && !offline && os.Getenv(envOffline) == "" {
				if err := a.pullMissing(cmd, mirror); err != nil {
					return err
				}
			}
			printer := newEventPrinter(a.json, cmd.OutOrStdout(), a.log)
			ctx, stop := printer.watch(cmd.Context())
			defer stop()
			// With tools on, the host's tools (the control socket's) go
			// into the session's registry beside the built-ins.
			var registry *tools.Registry
			var hostTools hostToolsFunc
			if t := a.cfg.Stages.Tools; t.Enabled {
				registry = &tools.Registry{}
				hostTools = func(send func(tools.HostCall) error) *tools.HostTools {
					return tools.NewHostTools(registry, send, cmp.Or(t.HostTimeout, wiring.DefaultHostTimeout))
				}
			}
			onEvent, commands, closeControl, err := serveControl(a.cfg.Control, hostTools, printer.print, a.log)
			if err != nil {
				return err
			}
			defer func() { err = errors.Join(err, closeControl()) }()
			listening := false
			dev := *d
			dev.OnCaptureGap = (&gapWarner{log: a.log}).gap
			// A signal says STOPPING=1 at once, before the models close.
			unwatch := context.AfterFunc(ctx, svc.stopping)
			st, runErr := wiring.Live{
				Stages:   a.cfg.Stages,
				Device:   dev,
				OnEvent:  onEvent,
				Commands: commands,
				Warn:     func(msg string) { a.log.Warn(msg) },
				Alive:    svc.alive,
				Tools:    registry,
				Listening: func() {
					listening = true
					svc.listening(ctx)
					a.log.Info("listening", "capture", orDefault(d.Capture), "playback", orDefault(d.Playback))
				},
			}.Run(ctx)
			unwatch()
			svc.stopping()
			if listening {
				a.log.Info("stopped", "capture_overruns", st.CaptureOverruns, "capture_gaps", st.CaptureGaps,
					"capture_lost_ms", st.CaptureLost.Milliseconds(), "playback_underruns", st.PlaybackUnderruns)
			}
			return errors.Join(runErr, printer.Err())
		},
	}
	f := cmd.Flags()
	a.deviceFlags(f)
	f.BoolVar(&pull, "pull", false, "first download the models the configured stages lack (the only network use)")
	f.BoolVar(&offline, "offline", false, "no downloads, even with --pull (also $"+envOffline+")")
	f.StringVar(&mirror, "mirror", "", "with --pull: base URL replacing the scheme and host of every source")
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// gapWarnEvery is the least session time between two capture gap
// warnings.
const gapWarnEvery = 10 * time.Second

// gapWarner logs capture the sound server lost (device.Config's
// OnCaptureGap), which is otherwise only a count at the end: words the
// user said may be missing from what the assistant heard. A starved
// machine can lose audio every few hundred milliseconds, and a line for
// each would bury the conversation, so it warns at most once per
// gapWarnEvery of session time, counting the gaps since the last line.
// The device calls it from one goroutine.
type gapWarner struct {
	log  *slog.Logger
	next time.Duration // no line before this session time
	gaps int
	lost time.Duration
}

func (w *gapWarner) gap(at, lost time.Duration) {
	w.gaps++
	w.lost += lost
	if at < w.next {
		return
	}
	w.log.Warn("microphone audio lost before it reached the assistant (CPU starved?); silence stands in for it",
		"at", at, "gaps", w.gaps, "lost_ms", w.lost.Milliseconds())
	w.next = at + gapWarnEvery
	w.gaps, w.lost = 0, 0
}

// pullMissing downloads the models the configured stages lack, saying
// first in one line what and how much. What could not be had is left to
// the stages' build, which stops with one line per missing model and the
// command or manual copy that gets it.
func (a *app) pullMissing(cmd *cobra.Command, mirror string) error {
	mods, err := a.cfg.Stages.MissingModels()
	if err != nil || len(mods) == 0 {
		return err
	}
	dir, err := assets.CacheDir()
	if err != nil {
		return err
	}
	var names []string
	var size int64
	approx, unknown := false, false
	for _, m := range mods {
		names = append(names, m.Name)
		n, a, u := m.DownloadSize()
		size += n
		approx, unknown = approx || a, unknown || u
	}
	total := assets.FormatEstimate(size, approx)
	if unknown {
		total += " and more"
	}
	what := fmt.Sprintf("%d models", len(mods))
	if len(mods) == 1 {
		what = "1 model"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "voice-agent: downloading %s (%s) into %s: %s\n", what, total, dir, strings.Join(names, ", "))
	_, err = a.pullModels(cmd, &assets.Puller{Dir: dir, Mirror: mirror}, mods)
	return err
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

// orDefault names the device opened for name: no name is the system's
// default device.
func orDefault(name string) string {
	if name == "" {
		return "default"
	}
	return name
}
