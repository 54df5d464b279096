package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/bench"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/wiring"
)

func (a *app) benchIdleCmd() *cobra.Command {
	o := bench.IdleOptions{Warmup: 20 * time.Second, Measure: time.Minute}
	cmd := &cobra.Command{
		Use: "idle",
		Example: `  voice-agent bench idle --activation push
  voice-agent bench idle --noise room.wav --json > idle.json`,
		Short: "What the assistant costs while nobody speaks: CPU by part, memory",
		Long: `Runs the assistant as run does, in real time, with nobody speaking: on the
device's capture (by default the null backend's silence) or, with --noise,
on a recording of a room without speech put in place of the capture, looped.
After --warmup it measures over --measure the process's CPU time, in percent
of one core, split by where it went (a CPU profile: the front end, the VAD,
the resampler, the device's goroutines, the Go runtime, threads outside Go),
and its resident and anonymous memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dev := a.cfg.Device
			if dev.Backend == "" {
				dev.Backend = "null"
			}
			res, err := bench.Idle(cmd.Context(), a.cfg.Stages, dev, o)
			if err != nil {
				return err
			}
			res.Measured = bench.MeasuredNow(buildCommit())
			return a.writeBench(cmd, res, func(w io.Writer) { printIdle(w, res) })
		},
	}
	f := cmd.Flags()
	a.deviceFlags(f)
	f.DurationVar(&o.Warmup, "warmup", o.Warmup, "how long to run before measuring")
	f.DurationVar(&o.Measure, "measure", o.Measure, "how long to measure")
	f.StringVar(&o.Noise, "noise", "", "a recording of a room without speech (WAV) to listen to instead of the capture")
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

func printIdle(w io.Writer, r bench.IdleResult) {
	fmt.Fprintf(w, "idle for %.0f s: activation %s, input %s, front end %s\n", r.Seconds, r.Activation, r.Input, r.FrontEnd)
	fmt.Fprintf(w, "CPU %.2f%% of one core (%.2f s a minute), by part (%d samples):\n", r.CPUPercent, 0.6*r.CPUPercent, r.Samples)
	for _, p := range r.Parts {
		fmt.Fprintf(w, "  %6.2f%%  %s\n", p.CPUPercent, p.Part)
	}
	fmt.Fprintf(w, "memory: RSS %.0f MiB, anonymous %.0f MiB (peaks %.0f and %.0f)\n",
		memstat.MiB(r.Memory.RSS), memstat.MiB(r.Memory.Anon), memstat.MiB(r.Peak.RSS), memstat.MiB(r.Peak.Anon))
}
