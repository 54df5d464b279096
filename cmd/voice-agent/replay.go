package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/internal/wiring"
	"github.com/voiceassistant/voice/pipeline"
)

func (a *app) replayCmd() *cobra.Command {
	var (
		out, events string
		pace        float64
		rate        int
		echoDelay   time.Duration
		echoGain    float64
		compute     float64
	)
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
to the replay clock (then each turn's metrics also give every stage's compute).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			input, err := audio.ReadWAVMono16k(args[0])
			if err != nil {
				return err
			}
			clk := clock.NewVirtual()
			cfg, closeStages, err := wiring.Build(a.cfg.Stages, clk)
			if err != nil {
				return err
			}
			defer closeStages()
			cfg.ComputeScale = compute
			var fe audio.FrontEnd
			dev := audio.VirtualConfig{Input: input, Pace: pace, Playback: audio.Format{Rate: rate, Channels: 1}}
			if echoGain > 0 {
				// Only a simulated echo path puts the assistant's voice in
				// the microphone, so only then does the front-end matter.
				dev.Echo = &audio.Echo{Delay: echoDelay, Gain: echoGain}
				var closeFE func()
				var halfDuplex bool
				fe, closeFE, halfDuplex, err = wiring.NewFrontEnd(a.cfg.Stages)
				if err != nil {
					return err
				}
				defer closeFE()
				dev.FrontEnd = fe
				if halfDuplex {
					a.log.Warn("echo cancellation is not in this build (scripts/setup builds it in; docs/how-it-works.md, Echo); running half duplex")
					cfg.HalfDuplex.Enabled = true
				}
			}
			printer := newEventPrinter(a.json, cmd.OutOrStdout(), a.log)
			sink, closeSink, err := eventFile(events)
			if err != nil {
				return err
			}
			res, runErr := pipeline.Replay(cmd.Context(), clk, cfg, dev, func(e pipeline.Event) {
				printer.print(e)
				sink(e)
			})
			err = errors.Join(runErr, closeSink())
			if res != nil && out != "" {
				err = errors.Join(err, audio.WriteWAV(out, res.Format, res.Recording, audio.PCM16))
			}
			if res != nil {
				sum := pipeline.Summarize(res.Metrics)
				a.log.Info("replay done", "turns", sum.Turns, "interrupted", sum.Interrupted,
					"p50_ms", sum.P50["end_to_end"], "p95_ms", sum.P95["end_to_end"], "underruns", res.Underruns,
					"frontend_restarts", wiring.FrontEndRestarts(fe))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "write the assistant's audio here (WAV)")
	f.StringVar(&events, "events", "", "write events here (JSON lines)")
	f.Float64Var(&pace, "pace", 0, "speed relative to real time (0: as fast as possible)")
	f.IntVar(&rate, "playback-rate", audio.ProcessingRate, "playback sample rate")
	f.DurationVar(&echoDelay, "echo-delay", 50*time.Millisecond, "simulated speaker-to-mic delay")
	f.Float64Var(&echoGain, "echo-gain", 0, "simulated echo gain (0: no echo path)")
	f.Float64Var(&compute, "compute-scale", 0, "charge each stage's measured compute to the replay clock, times this (1: this machine; 50: a device 50x slower; 0: compute is free)")
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// eventFile opens a JSON-lines event log, or a no-op sink for "".
func eventFile(path string) (func(pipeline.Event), func() error, error) {
	if path == "" {
		return func(pipeline.Event) {}, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("events: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	var werr error
	sink := func(e pipeline.Event) {
		if werr == nil {
			werr = enc.Encode(e)
		}
	}
	return sink, func() error {
		return errors.Join(werr, w.Flush(), f.Close())
	}, nil
}
