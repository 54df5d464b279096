//go:build !novoicebench

package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/voicebench"
	"github.com/voiceassistant/voice/voicebench/score"
	"github.com/voiceassistant/voice/wiring"
)

// The harness roughly doubles the binary (Parquet and the scorers), so the
// device build leaves it out with -tags novoicebench.
func init() { optionalCommands = append(optionalCommands, (*app).voicebenchCmd) }

func (a *app) voicebenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "voicebench",
		Short: "Run the VoiceBench benchmark through the pipeline, and score it",
	}
	cmd.AddCommand(a.voicebenchRunCmd(), a.voicebenchMergeCmd(), a.voicebenchScoreCmd())
	return cmd
}

func (a *app) voicebenchRunCmd() *cobra.Command {
	cfg := voicebench.Config{Workers: 1, Modality: voicebench.ModalityAudio}
	cmd := &cobra.Command{
		Use:   "run --data DIR --subset NAME --out DIR",
		Short: "Answer a VoiceBench subset with the assistant",
		Long: `Replays each sample of a VoiceBench subset through the pipeline on a virtual
clock (or, with --modality text, gives its prompt straight to the LLM) and
appends the answers to OUT/SUBSET.jsonl as they finish. Run it again to resume:
finished samples are skipped. The stage flags choose the models; OUT/run.json
records which stages were stand-ins. With --compute-scale and several
--workers, the workers' compute shares the cores.

DIR holds the subsets as published (SUBSET/SPLIT-00000-of-00001.parquet) or
as SUBSET.jsonl with an "audio" field naming a WAV file relative to DIR.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Stages, cfg.Log = a.cfg.Stages, a.log
			// On a terminal a line every ProgressEvery; with --log-format
			// json, the same as JSON lines for a log collector.
			cfg.Progress = func(p voicebench.Progress) {
				a.log.Info("progress", "subset", p.Subset, "shard", cfg.Shard.String(), "done", p.Done, "total", p.Total,
					"per_min", math.Round(p.PerMinute*10)/10, "eta", p.ETA.Round(time.Second).String())
			}
			cfg.OnResult = func(r voicebench.Result) {
				if r.Error != "" {
					a.log.Warn("sample failed", "id", r.Sample.ID, "error", r.Error)
					return
				}
				a.log.Debug("sample done", "id", r.Sample.ID, "response", r.Response)
			}
			sum, err := voicebench.Run(cmd.Context(), cfg)
			if cmd.Context().Err() != nil {
				return fmt.Errorf("interrupted after %d answers; run the same command again to resume: %w", sum.Answered, err)
			}
			if sum == (voicebench.Summary{}) && err != nil {
				return err // nothing ran
			}
			a.log.Info("voicebench run", "subset", cfg.Subset, "answered", sum.Answered, "failed", sum.Failed,
				"skipped", sum.Skipped, "bad_input", sum.BadInput, "results", voicebench.ResultsPath(cfg.Out, cfg.Subset))
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Data, "data", "", "dataset directory")
	f.StringVar(&cfg.Subset, "subset", "", "subset to run (alpacaeval, sd-qa, ifeval, ...)")
	f.StringVar(&cfg.Split, "split", "", "Parquet split (sd-qa: a region such as usa; default: every split)")
	f.StringVar(&cfg.Out, "out", "", "results directory")
	f.IntVar(&cfg.Limit, "limit", 0, "only the first N samples (0: all)")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "samples answered in parallel, each worker with its own models")
	f.StringVar(&cfg.Modality, "modality", cfg.Modality, "audio (the whole pipeline) or text (the prompt straight to the LLM)")
	f.DurationVar(&cfg.ProgressEvery, "progress-every", 10*time.Second, "how often to log progress (done/total, rate, time left)")
	f.Var((*shardFlag)(&cfg.Shard), "shard", "answer only shard K of N of every subset (K/N, K from 0): each machine of a split run takes one, and voicebench merge joins them")
	computeScaleFlag(f, &cfg.ComputeScale, 0)
	for _, name := range []string{"data", "subset", "out"} {
		_ = cmd.MarkFlagRequired(name) // fails only for an undefined flag
	}
	return a.stageFlags(cmd, wiring.PipelineFlags)
}

// shardFlag is --shard K/N.
type shardFlag voicebench.Shard

func (s *shardFlag) String() string {
	if s.Count == 0 {
		return ""
	}
	return voicebench.Shard(*s).String()
}
func (*shardFlag) Type() string { return "K/N" }
func (s *shardFlag) Set(v string) error {
	sh, err := voicebench.ParseShard(v)
	*s = shardFlag(sh)
	return err
}

func (a *app) voicebenchMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use: "merge --out DIR SHARD_DIR...",
		Example: `  voice-agent voicebench merge --out results results-0 results-1 results-2 results-3
  voice-agent voicebench score --results results`,
		Short: "Join the results of a run split with --shard into one directory",
		Long: `Joins the result directories of every shard of one run (voicebench run
--shard K/N) into DIR, as one machine would have written them, so that score
gives the same summary. Shards of different set-ups, a shard missing or given
twice, a sample answered twice and a shard that has not finished are refused,
by name.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			info, err := voicebench.Merge(out, dirs)
			if err != nil {
				return err
			}
			total := 0
			for _, n := range info.Samples {
				total += n
			}
			a.log.Info("voicebench merge", "shards", len(dirs), "subsets", len(info.Subsets), "samples", total, "results", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "merged results directory (new or empty)")
	_ = cmd.MarkFlagRequired("out") // fails only for an undefined flag
	return cmd
}

func (a *app) voicebenchScoreCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "score --results DIR",
		Short: "Score VoiceBench results and print the summary",
		Long: `Scores every SUBSET.jsonl in DIR that can be scored deterministically,
writes DIR/summary.json, DIR/summary.md and the judge exports, and prints the
summary as Markdown.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := score.ScoreDir(dir)
			if err != nil {
				return err
			}
			info, err := voicebench.ReadRunInfo(dir)
			switch {
			case errors.Is(err, os.ErrNotExist):
				a.log.Warn("no run.json: which stages produced these results is unknown", "dir", dir)
				r.Notes = append(r.Notes, "No run.json: which stages produced these results is unknown.")
			case err != nil:
				return err
			case len(info.StandIns) > 0:
				// A score of stand-ins says nothing about the assistant.
				r.Notes = append(r.Notes, fmt.Sprintf("Stand-ins answered these results (%s): the scores test the harness, not the assistant.",
					strings.Join(info.StandIns, ", ")))
			}
			if err := score.WriteReport(dir, r); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), r.Markdown())
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "results", "", "results directory (voicebench run --out)")
	_ = cmd.MarkFlagRequired("results") // fails only for an undefined flag
	return cmd
}
