package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// replayOptions are replay's flags.
type replayOptions struct {
	out, events  string
	pace         float64
	rate         int
	echoDelay    time.Duration
	echoGain     float64
	computeScale float64
}

func (a *app) replayCmd() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use: "replay IN.wav",
		Example: `  voice-agent replay test/testdata/demo.wav --asr scripted --turn scripted --llm scripted --tts tone --script test/testdata/demo.json
  voice-agent replay talk.wav --out reply.wav --events events.jsonl
  voice-agent replay talk.wav --compute-scale 1 --json`,
		Short: "Run the whole pipeline over a recording on a virtual clock",
		Long: `Replays IN.wav (any rate or channel count) as the microphone, faster than
real time by default, and writes what the assistant played, aligned with the
input, plus every event as JSON lines. Latencies are in audio time and are the
same on every run, unless --compute-scale charges the stages' measured compute
to the replay clock (then each turn's metrics also give every stage's compute).

Each turn's latency line gives end_to_end_ms (end of the user's speech to the
reply's first audio) and the parts of it as they fell on the path (path_*_ms,
adding up to it: what each stage still had to do after the one before);
speculated=true: the reply was started at the user's pause, before the
commit, and its first words were ready by the end of the turn. The
assistant's line is logged when its text is complete (text_done_at).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.replay(cmd, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "write the assistant's audio here (WAV)")
	f.StringVar(&o.events, "events", "", "write events here (JSON lines)")
	f.Float64Var(&o.pace, "pace", 0, "speed relative to real time (0: as fast as possible; else 0.01 to 1000)")
	limitFlag(f, "pace", func() bool { return o.pace == 0 || o.pace >= 0.01 && o.pace <= 1000 }, "0 (as fast as possible) or a speed from 0.01 to 1000")
	f.IntVar(&o.rate, "playback-rate", audio.ProcessingRate, "playback sample rate in Hz (8000 to 384000, as device.rate)")
	// A sound card's rates: below them a 10 ms period holds no sample, and
	// the replay spun on empty periods.
	limitFlag(f, "playback-rate", func() bool { return o.rate >= device.MinRate && o.rate <= device.MaxRate }, "a rate from 8000 to 384000 Hz, as device.rate")
	f.DurationVar(&o.echoDelay, "echo-delay", 50*time.Millisecond, "simulated speaker-to-mic delay (0 to 1s)")
	limitFlag(f, "echo-delay", func() bool { return o.echoDelay >= 0 && o.echoDelay <= time.Second }, "a delay from 0 to 1s")
	f.Float64Var(&o.echoGain, "echo-gain", 0, "simulated echo gain (0: no echo path; at most 10)")
	limitFlag(f, "echo-gain", func() bool { return o.echoGain >= 0 && o.echoGain <= 10 }, "0 (no echo path) or a gain up to 10")
	computeScaleFlag(f, &o.computeScale, 0)
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// replay runs the pipeline over the recording at path, printing its
// events, and logs its summary.
func (a *app) replay(cmd *cobra.Command, path string, o replayOptions) (err error) {
	// The input is read and the output written as the replay goes, so
	// memory stays the same for a minute or an hour.
	input, err := audio.OpenWAVMono16k(cmd.Context(), path)
	if err != nil {
		return err
	}
	defer input.Close()
	clk := clock.NewVirtual()
	cfg, closeStages, err := wiring.Build(a.cfg.Stages, clk)
	if err != nil {
		return err
	}
	defer closeStages()
	cfg.ComputeScale = o.computeScale
	dev := audio.VirtualConfig{Source: input, Pace: o.pace, Playback: audio.Format{Rate: o.rate, Channels: 1}, NoRecording: true}
	fe, closeFE, err := a.echoPath(&dev, &cfg, o)
	if err != nil {
		return err
	}
	defer closeFE()
	printer := newEventPrinter(a.json, cmd.OutOrStdout(), a.log)
	if o.events != "" {
		closeEvents, openErr := printer.logTo(o.events)
		if openErr != nil {
			return openErr
		}
		defer func() { err = errors.Join(err, closeEvents()) }()
	}
	if o.out != "" {
		w, openErr := audio.NewWAVWriter(o.out, dev.Playback, audio.PCM16)
		if openErr != nil {
			return openErr
		}
		// Even an interrupted replay leaves a whole WAV of what was
		// played up to then.
		defer func() {
			// A failed write is the replay's error already.
			if cerr := w.Close(); !errors.Is(err, cerr) {
				err = errors.Join(err, cerr)
			}
		}()
		dev.Record = w
	}
	ctx, stop := printer.watch(cmd.Context())
	defer stop()
	res, err := pipeline.Replay(ctx, clk, cfg, dev, printer.print)
	if res == nil {
		return err
	}
	err = errors.Join(err, printer.Err())
	if err == nil && cmd.Context().Err() != nil {
		// Interrupted, the replay stops without an error of its own.
		err = fmt.Errorf("replay: stopped %v into %v of %s: %w", res.Covered.Round(time.Millisecond),
			audio.Mono16k.Duration(input.Len()).Round(time.Millisecond), path, cmd.Context().Err())
	}
	a.logReplay(res, err, fe)
	return err
}

// echoPath puts a simulated echo path into dev where --echo-gain asks for
// one, with the front-end that cancels it: only an echo puts the
// assistant's voice in the microphone, so only then does the front-end
// matter. Without an echo cancel in this build, cfg runs half duplex.
func (a *app) echoPath(dev *audio.VirtualConfig, cfg *pipeline.Config, o replayOptions) (fe audio.FrontEnd, closeFE func(), err error) {
	if o.echoGain <= 0 {
		return nil, func() {}, nil
	}
	dev.Echo = &audio.Echo{Delay: o.echoDelay, Gain: o.echoGain}
	fe, closeFE, halfDuplex, err := wiring.NewFrontEnd(a.cfg.Stages)
	if err != nil {
		return nil, nil, err
	}
	dev.FrontEnd = fe
	if halfDuplex {
		a.log.Warn("echo cancellation is not in this build (scripts/setup builds it in; docs/how-it-works.md, Echo); running half duplex")
		cfg.HalfDuplex.Enabled = true
	}
	return fe, closeFE, nil
}

// logReplay logs what a replay that ended with err came to.
func (a *app) logReplay(res *pipeline.ReplayResult, err error, fe audio.FrontEnd) {
	sum := pipeline.Summarize(res.Metrics)
	msg := "replay done"
	if err != nil {
		msg = "replay stopped"
	}
	a.log.Info(msg, "turns", sum.Turns, "interrupted", sum.Interrupted,
		"p50_ms", sum.P50["end_to_end"], "p95_ms", sum.P95["end_to_end"], "underruns", res.Underruns,
		"frontend_restarts", wiring.FrontEndRestarts(fe))
}

// computeScaleFlag registers --compute-scale on f, into scale, with the
// default def: replay and voicebench run leave compute free (0) so that a
// run is the same on every machine; bench pipeline charges it (1), as its
// figures are the stages' compute on the clock.
func computeScaleFlag(f *pflag.FlagSet, scale *float64, def float64) {
	f.Float64Var(scale, "compute-scale", def, "charge each stage's measured compute to the replay clock, times this (1: this machine; 50: a device 50 times slower; 0: compute is free; at most 1000)")
	limitFlag(f, "compute-scale", func() bool { return *scale >= 0 && *scale <= 1000 }, "0 (compute is free) or a factor up to 1000")
}
