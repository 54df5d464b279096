package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/bench"
	"github.com/voiceassistant/voice/wiring"
)

func (a *app) benchPipelineCmd() *cobra.Command {
	var scale float64
	var heapProfile string
	cmd := &cobra.Command{
		Use: "pipeline IN.wav",
		Example: `  voice-agent bench pipeline test/testdata/demo.wav --asr scripted --llm scripted --script test/testdata/demo.json
  voice-agent bench pipeline talk.wav --json > pipeline.json`,
		Short: "Per-stage compute and voice-to-voice latency of a recorded conversation, with the stages' compute on the clock",
		Long: `Replays IN.wav through the whole pipeline with each stage's measured compute
charged to the replay clock (--compute-scale, 1: this machine), and reports
what each stage computed per turn and the voice-to-voice latency (end of the
user's speech to the first reply audio), p50 and p95, with --json as JSON.

Stages use the installed models; a stage whose model is not installed runs
its stand-in instead (energy VAD, no turn model, tone TTS, and with --script
the scripted recognizer and LLM), and the report names it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o := bench.PipelineOptions{ComputeScale: scale}
			if heapProfile != "" {
				f, err := os.Create(heapProfile)
				if err != nil {
					return err
				}
				defer func() { err = errors.Join(err, f.Close()) }()
				o.HeapProfile = f
			}
			b, err := bench.Pipeline(cmd.Context(), args[0], a.cfg.Stages, o)
			if a.cfg.Stages.Script == "" && errors.Is(err, wiring.ErrUnavailable) {
				// Every other stage has a stand-in of its own; the
				// recognizer and the LLM need the script's words.
				err = errors.Join(err, errors.New("or --script FILE (JSON with \"user\" and \"replies\") runs the scripted recognizer and LLM in place of the missing models"))
			}
			if err != nil {
				return err
			}
			b.Measured = bench.MeasuredNow(buildCommit())
			return a.writeBench(cmd, b, func(w io.Writer) { printBench(w, b) })
		},
	}
	computeScaleFlag(cmd.Flags(), &scale, 1)
	cmd.Flags().StringVar(&heapProfile, "heap-profile", "", "write the Go heap's profile at the replay's peak of live objects to this file (go tool pprof reads it)")
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

func printBench(w io.Writer, b bench.PipelineResult) {
	fmt.Fprintf(w, "%s: %d turns, %d answered (%d speculated), compute x%g on the clock\n", b.Input, b.Turns, b.Answered, b.Speculated, b.ComputeScale)
	fmt.Fprintf(w, "stages: vad %s, asr %s, turn %s, llm %s, tts %s", b.Stages["vad"], b.Stages["asr"], b.Stages["turn"], b.Stages["llm"], b.Stages["tts"])
	if len(b.Swapped) > 0 {
		fmt.Fprintf(w, " (stand-ins for %s: models not installed)", listOf(b.Swapped))
	}
	fmt.Fprintln(w)
	g := b.Guesses
	fmt.Fprintf(w, "guesses: %d speculations, %d hits, dropped %s; %d continuations (committed too early), %d barge-ins\n",
		g.Speculations, g.Hits, countsOf(g.Dropped), g.Continuations, g.BargeIns)
	fmt.Fprintf(w, "voice to voice: p50 %.0f ms, p95 %.0f ms; compute only (no endpointing wait, buffering or queueing): p50 %.0f ms, p95 %.0f ms\n",
		b.VoiceToVoice.P50, b.VoiceToVoice.P95, b.ComputeOnly.P50, b.ComputeOnly.P95)
	fmt.Fprintf(w, "playback underruns after a reply's first audio: %d\npeak %s\nat the end %s\n", b.Underruns, b.Peak, b.MemoryEnd)
	for _, g := range b.UnderrunGaps {
		where := fmt.Sprintf("inside chunk %d of %d (synthesized slower than it played)", g.Chunk, g.Chunks)
		if g.Between {
			where = fmt.Sprintf("after chunk %d of %d (the next began late)", g.Chunk, g.Chunks)
		}
		fmt.Fprintf(w, "  dry %.0f ms in reply %d, %.2f s into its audio, %s\n", g.GapMS, g.Reply, g.AtMS/1000, where)
	}
	fmt.Fprintf(w, "voice to voice on the path (mean ms, adding up to the mean, %.0f ms):\n", b.VoiceToVoiceMean)
	for _, name := range bench.VoiceToVoicePartNames {
		fmt.Fprintf(w, "  %-12s %10.1f\n", name, b.VoiceToVoicePath[name])
	}
	fmt.Fprintln(w, "each stage's own latency (ms, overlapping the endpointing wait when speculated): p50 p95")
	for _, name := range bench.VoiceToVoicePartNames {
		p := b.VoiceToVoiceParts[name]
		fmt.Fprintf(w, "  %-12s %10.1f %8.1f\n", name, p.P50, p.P95)
	}
	fmt.Fprintln(w, "compute per turn (ms):       p50      p95")
	for _, name := range []string{"vad", "asr", "turn", "llm", "llm_prefill", "llm_decode", "tts", "asr_final", "llm_first_token", "tts_first_audio"} {
		c := b.Compute[name]
		fmt.Fprintf(w, "  %-16s %10.1f %8.1f\n", name, c.P50, c.P95)
	}
}

// countsOf writes counts by name, in the names' order: "none",
// "speech_resumed 2, transcript_changed 1".
func countsOf(counts map[string]int) string {
	if len(counts) == 0 {
		return "none"
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%s %d", name, counts[name]))
	}
	return strings.Join(parts, ", ")
}

// listOf writes names as a sentence would: "turn", "turn and tts",
// "vad, turn and tts".
func listOf(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
