package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/bench"
	"github.com/voiceassistant/voice/wiring"
)

func (a *app) benchStagesCmd() *cobra.Command {
	o := bench.StagesOptions{Text: "Sure. The capital of France is Paris, a city of about two million people on the Seine."}
	cmd := &cobra.Command{
		Use: "stages IN.wav",
		Example: `  voice-agent bench stages test/testdata/demo.wav
  voice-agent bench stages talk.wav --json > stages.json`,
		Short: "Load time, memory and compute of each installed model, one stage at a time",
		Long: `Opens each stage's installed model in turn (the ones whose backend is real and
whose model is where the agent looks; the others are listed as skipped) and
reports what loading it cost (wall time, resident memory grown) and its
compute: per VAD window and ASR chunk over IN.wav, per turn-model call on its
last 8 s, prefill and decode speed of the LLM (as bench llm), and the TTS's
real-time factor and time to first audio on --text.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := bench.Stages(cmd.Context(), a.cfg.Stages, args[0], o)
			if err != nil {
				return err
			}
			res.Measured = bench.MeasuredNow(buildCommit())
			return a.writeBench(cmd, res, func(w io.Writer) { printStages(w, res) })
		},
	}
	cmd.Flags().StringVar(&o.Text, "text", o.Text, "what the TTS says")
	cmd.Flags().BoolVar(&o.LoadOnly, "load-only", false, "measure only loading each model (memory under emulation, where compute takes hours)")
	cmd.Flags().BoolVar(&o.Profile, "profile", false, "split the TTS's time by graph and operator (ONNX Runtime's profiler, which slows the runs)")
	return a.stageFlags(cmd, wiring.PipelineFlags&^wiring.ToolFlags)
}

func printStages(w io.Writer, r bench.StagesResult) {
	fmt.Fprintf(w, "%-5s %9s %9s %9s %9s %10s  %s\n", "stage", "load ms", "anon MiB", "file MiB", "peak anon", "compute ms", "per")
	for _, s := range r.Stages {
		extra := ""
		switch {
		case s.Stage == "llm":
			extra = fmt.Sprintf("  prefill %.0f tok/s, decode %.0f tok/s, first token of a turn %.0f ms", s.PrefillTokS, s.DecodeTokS, s.FirstTokenMS)
		case s.Stage == "tts":
			extra = fmt.Sprintf("  RTF %.3f, first audio %.0f ms; Go allocated %.1f MB in %d allocations", s.RTF, s.FirstAudioMS, s.GoAllocMB, s.GoAllocs)
		case s.RTF > 0:
			extra = fmt.Sprintf("  RTF %.4f", s.RTF)
		}
		fmt.Fprintf(w, "%-5s %9.1f %9.1f %9.1f %9.1f %10.3f  %s%s\n", s.Stage, s.LoadMS, s.AnonMiB, s.FileMiB, s.PeakAnonMiB, s.ComputeMS, s.Unit, extra)
		for _, g := range s.Graphs {
			fmt.Fprintf(w, "      %-12s %5d calls, %8.1f ms, %7.2f ms a call\n", g.Graph, g.Calls, g.TotalMS, g.MSPerCall)
			if g.OpsMS != nil {
				fmt.Fprintf(w, "%18s of its node time %.0f%% moving data (profiled, over the session's life: %s ms)\n", "", 100*g.MovingMS/max(g.MovingMS+g.ComputeMS, 1e-9), topOps(g.OpsMS, 3))
			}
			if g.BoundMS > 0 {
				fmt.Fprintf(w, "%18s a call's bound %.2f ms (%.1f MB, %.0f M multiply-adds): %.1fx it\n", "", g.BoundMS, g.MBPerCall, g.MMACsPerCall, g.TimesBound)
			}
		}
		if len(s.Graphs) > 0 {
			fmt.Fprintf(w, "      %-12s %20.1f ms\n", "outside them", s.OutsideGraphsMS)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "skipped (a stand-in, off, or no model installed): %v\n", r.Skipped)
	}
	if l := r.Limits; l != nil {
		fmt.Fprintf(w, "bounds against this machine, one thread: read %.1f GB/s; ONNX Runtime's [1,768]x[768,3072] product fp32 %.1f, int8 %.1f, int4 %.1f G multiply-adds/s (on %d rows: %.1f, %.1f, %.1f)\n",
			l.ReadGBs, l.GMACs["fp32"], l.GMACs["int8"], l.GMACs["int4"], bench.GemmRows, l.GMACs[bench.RateKey("fp32", bench.GemmRows)], l.GMACs[bench.RateKey("int8", bench.GemmRows)], l.GMACs[bench.RateKey("int4", bench.GemmRows)])
	}
	fmt.Fprintf(w, "anon, file: memory the load added, anonymous and file-backed; peak anon: the most anonymous memory over load and compute\n")
	fmt.Fprintf(w, "peak %s\nat the end %s\n%s/%s, %d CPUs\n", r.Peak, r.MemoryEnd, r.GOOS, r.GOARCH, r.CPUs)
}

// topOps names the n operators that took longest, with their times.
func topOps(ops map[string]float64, n int) string {
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Slice(names, func(i, j int) bool { return ops[names[i]] > ops[names[j]] })
	var parts []string
	for _, op := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.0f", op, ops[op]))
	}
	return strings.Join(parts, ", ")
}
