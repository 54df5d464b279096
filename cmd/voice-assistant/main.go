// Command voice-assistant is the desktop app: the same pipeline as
// `voice-agent run` in a window with the conversation, the assistant's
// state, the input level and latency figures.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/app"
	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/derived"
	_ "github.com/voiceassistant/voice/internal/fynelocale" // before fyne reads the locale
	_ "github.com/voiceassistant/voice/internal/gogc"
	_ "github.com/voiceassistant/voice/internal/malloc" // before anything allocates
	"github.com/voiceassistant/voice/wiring"
)

// appID names the app to fyne (its preferences live under it).
const appID = "io.github.voiceassistant.voice"

type options struct {
	stages      wiring.Stages
	backend     string
	rate        int
	replay      string
	pace        float64
	dump        string
	modelsCache string
	mirror      string
	start       bool
	pull        bool
}

func main() {
	if err := command().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "voice-assistant: %v\n", err)
		os.Exit(1)
	}
}

func command() *cobra.Command {
	o := options{stages: wiring.DefaultStages()}
	cmd := &cobra.Command{
		Use:   "voice-assistant",
		Short: "On-device voice assistant (desktop app)",
		Long: `Talk to the assistant through the microphone and speaker, with the
conversation, its state and latency on screen. Devices, the model directory,
barge-in, echo cancellation and the system prompt are set in the window
(Settings, or Ctrl+,) and kept between runs. The window lists each stage's
model and downloads the missing ones. Space is push-to-talk, Esc stops a
reply. With --replay a recording stands in for the microphone.`,
		Example: `  voice-assistant
  voice-assistant --pull --start
  voice-assistant --replay test/testdata/demo.wav --script test/testdata/demo.json \
    --vad energy --asr scripted --turn scripted --llm scripted --tts tone`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), o) },
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w (`voice-assistant --help` lists the flags)", err)
	})
	f := cmd.Flags()
	st := &o.stages
	st.AddBackendFlags(f, wiring.PipelineFlags)
	f.StringVar(&o.backend, "backend", "", "audio backend: pulseaudio, alsa, null (default: automatic), as voice-agent's")
	// The name this flag had before it matched voice-agent's.
	f.StringVar(&o.backend, "audio-backend", "", "")
	_ = f.MarkDeprecated("audio-backend", "use --backend")
	f.IntVar(&o.rate, "rate", 48000, "device sample rate")
	f.StringVar(&o.replay, "replay", "", "use this WAV file as the microphone instead of the sound card")
	f.Float64Var(&o.pace, "pace", 1, "replay speed relative to real time (0: as fast as possible)")
	f.StringVar(&o.dump, "dump-when-done", "", "after each session, write the window's content as text to this file")
	f.StringVar(&o.modelsCache, "models-cache", "", "model cache directory (default $VOICE_MODELS, else $XDG_DATA_HOME/voice-agent/models)")
	f.StringVar(&o.mirror, "mirror", "", "base URL replacing the scheme and host of model download sources")
	f.BoolVar(&o.start, "start", false, "start listening at once (always so with --replay)")
	f.BoolVar(&o.pull, "pull", false, "download the missing models at once (then start, with --start or --replay)")
	return cmd
}

func run(ctx context.Context, o options) error {
	opts := app.Options{Stages: o.stages}
	opts.Device.Backend, opts.Device.Rate = o.backend, o.rate
	if o.replay != "" {
		input, err := audio.ReadWAVMono16k(ctx, o.replay)
		if err != nil {
			return err
		}
		opts.Source = app.Replay{Input: input, Pace: o.pace}
		o.start = true
	}
	if o.modelsCache != "" {
		// The cache is found through the environment everywhere.
		if err := os.Setenv(assets.EnvCache, o.modelsCache); err != nil {
			return err
		}
	}
	cache, err := assets.CacheDir()
	if err != nil {
		return err
	}
	opts.Puller = assets.Puller{Dir: cache, Mirror: o.mirror}
	var dumpErr error
	if o.dump != "" {
		opts.OnSessionEnd = func(u *app.UI) {
			if err := writeAtomic(o.dump, u.Dump()); err != nil {
				dumpErr = err
			}
		}
	}

	// Past this point fyne panics without a display, with a trace that
	// hides the cause.
	if err := checkDisplay(); err != nil {
		return err
	}
	if err := checkPreferences(); err != nil {
		return err
	}
	a := fyneapp.NewWithID(appID)
	u := app.New(a, opts)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	derived.StopWaitingOn(ctx.Done())
	go func() {
		<-ctx.Done()
		fyne.Do(a.Quit)
	}()
	switch {
	case o.pull:
		u.DownloadMissing(o.start)
	case o.start:
		u.Start()
	}
	u.Window().ShowAndRun()
	stop()
	// Release the models and the device before exiting.
	u.Close()
	return dumpErr
}

// checkPreferences sets aside saved settings fyne could not read, and
// says so.
func checkPreferences() error {
	path, err := preferencesPath(appID)
	if err != nil {
		return nil // fyne finds no place for them either, and keeps none
	}
	msg, err := setAsideUnreadablePreferences(path)
	if msg != "" {
		fmt.Fprintln(os.Stderr, "voice-assistant: "+msg)
	}
	return err
}

// checkDisplay says how to go on where fyne would find no display: on
// Linux and the BSDs it draws through X11 or Wayland, found through these
// variables; elsewhere the system's own windowing needs none.
func checkDisplay() error {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
	default:
		return nil
	}
	if os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" {
		return nil
	}
	return errors.New("no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session, " +
		"under a virtual X server (xvfb-run -a voice-assistant ...), or use the headless `voice-agent run`")
}

// writeAtomic replaces path with text in one step, so a reader polling for
// it never sees half of it.
func writeAtomic(path, text string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dump-*")
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	_, err = tmp.WriteString(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}
