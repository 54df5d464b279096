package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/bench"
	"github.com/voiceassistant/voice/internal/memstat"
	"github.com/voiceassistant/voice/wiring"
)

// benchLLMCmd measures the language model like llama-bench and MNN's
// llm_bench: one warm-up, then five runs of each test, reporting medians.
func (a *app) benchLLMCmd() *cobra.Command {
	var runs, turns int
	cmd := &cobra.Command{
		Use: "llm [--llm-model-dir DIR] [--conversation N] [--json]",
		Example: `  voice-agent bench llm --llm-model-dir llm/mnn/testdata/tiny-llm --json
  voice-agent bench llm --conversation 40   # a long conversation, turn by turn
  scripts/bench-llm   # the same beside MNN's own llm_bench`,
		Short: "Prefill and decode speed of the language model (512-token prompt, 128 and 256 tokens out), and its first token in a conversation",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if turns > 0 {
				res, err := bench.Conversation(cmd.Context(), a.cfg.Stages, turns)
				if err != nil {
					return err
				}
				res.Measured = bench.MeasuredNow(buildCommit())
				return a.writeBench(cmd, res, func(w io.Writer) { printConversation(w, res) })
			}
			res, err := bench.LLM(cmd.Context(), a.cfg.Stages, runs)
			if err != nil {
				return err
			}
			res.Measured = bench.MeasuredNow(buildCommit())
			return a.writeBench(cmd, res, func(w io.Writer) { printLLM(w, res) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&runs, "runs", 5, "measured runs per test (after one warm-up; 1 to 1000)")
	limitFlag(f, "runs", func() bool { return runs >= 1 && runs <= 1000 }, "1 to 1000 runs")
	f.IntVar(&turns, "conversation", 0, "instead, N turns of one conversation in English and Chinese, the history bounded as the assistant bounds it: per turn the tokens prefilled and reused and the first token's time (at most 1000)")
	limitFlag(f, "conversation", func() bool { return turns >= 0 && turns <= 1000 }, "0 (the speed tests) or 1 to 1000 turns")
	return a.stageFlags(cmd, wiring.LLMFlags)
}

func printLLM(w io.Writer, res bench.LLMResult) {
	for _, t := range res.Tests {
		fmt.Fprintf(w, "%-11s prompt %4d tok  gen %4d tok  prefill %8.1f tok/s  decode %8.1f tok/s  binding %.2f ms/reply\n",
			t.Name, t.PromptTokens, t.GeneratedTokens, t.PrefillTokS, t.DecodeTokS, t.BindingMS)
	}
	if t := res.Turn; t != nil {
		fmt.Fprintf(w, "%-11s prompt %4d tok, %d new  first token %.1f ms\n", t.Name, t.PromptTokens, t.PromptTokens-t.CachedTokens, t.FirstTokenMS)
	}
	fmt.Fprintf(w, "peak RSS %.1f MiB, %s/%s, %d CPUs\n", float64(res.PeakRSSBytes)/(1<<20), res.GOOS, res.GOARCH, res.CPUs)
}

// printConversation prints the long conversation turn by turn.
func printConversation(out io.Writer, res bench.ConversationResult) {
	fmt.Fprintf(out, "%4s %8s %18s %13s %7s %5s %7s %9s %12s %11s %9s\n", "turn", "history", "idle: start/run", "spoken", "prompt", "new", "reused", "prefilled", "first token", "first text", "anon MiB")
	for _, t := range res.Turns {
		idle := fmt.Sprintf("%d/%d %.0f ms", t.IdleTokens, t.IdlePrefilled, t.IdleMS)
		spoken := fmt.Sprintf("%d %.0f ms", t.SpokenTokens, t.SpokenMS)
		fmt.Fprintf(out, "%4d %8d %18s %13s %7d %5d %7d %9d %9.1f ms %8.1f ms %9.1f\n", t.Turn, t.HistoryChars, idle, spoken, t.PromptTokens, t.NewTokens, t.CachedTokens, t.PrefilledTokens, t.FirstTokenMS, t.FirstTextMS, memstat.MiB(t.AnonBytes))
	}
	fmt.Fprintf(out, "first token p50 %.1f ms, p95 %.1f ms; first text p50 %.1f ms, p95 %.1f ms; at most %d tokens prefilled past a turn's new ones; peak RSS %.1f MiB\n",
		res.FirstTokenP50MS, res.FirstTokenP95MS, res.FirstTextP50MS, res.FirstTextP95MS, res.MostPrefilledPastNew, memstat.MiB(res.PeakRSSBytes))
}
