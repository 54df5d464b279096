package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/derived"
)

// modelsCmd manages the model cache: the only command that touches the
// network is `models pull`.
func (a *app) modelsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "models", Short: "List, download, verify and locate the models"}
	cmd.AddCommand(a.modelsListCmd(), a.modelsPullCmd(), modelsVerifyCmd(), modelsPathCmd(), modelsPruneCmd(), a.quantizeCmd(), a.compareCmd())
	return cmd
}

// selectModels is a puller into the model cache, from mirror where it is
// not empty, and the models named (all if none named).
func selectModels(mirror string, names []string) (*assets.Puller, []assets.Model, error) {
	m, err := assets.LoadManifest()
	if err != nil {
		return nil, nil, err
	}
	dir, err := assets.CacheDir()
	if err != nil {
		return nil, nil, err
	}
	mods, err := pickModels(m, names)
	return &assets.Puller{Dir: dir, Mirror: mirror}, mods, err
}

// pickModels takes named models as named; "all" means those this
// platform uses (not the other architectures' native libraries).
func pickModels(m assets.Manifest, names []string) ([]assets.Model, error) {
	if len(names) == 0 {
		var out []assets.Model
		for _, mod := range m.Models {
			if mod.ForThisPlatform() {
				out = append(out, mod)
			}
		}
		return out, nil
	}
	var out []assets.Model
	for _, n := range names {
		mod, ok := m.Model(n)
		if !ok {
			return nil, fmt.Errorf("no model %q; the models are: %s", n, strings.Join(modelNames(m.Models), ", "))
		}
		out = append(out, mod)
	}
	return out, nil
}

// modelRow is a model's line of `models list`.
type modelRow struct {
	Model string `json:"model"`
	Stage string `json:"stage"`
	State string `json:"state"`
	// Size is the model's bytes, 0 when some file's size is not known
	// before it is downloaded, unless the manifest gives an estimate
	// (SizeApprox).
	Size       int64  `json:"size_bytes"`
	SizeApprox bool   `json:"size_approximate,omitempty"`
	Path       string `json:"path"`
}

func (a *app) modelsListCmd() *cobra.Command {
	return &cobra.Command{
		Use: "list",
		Example: `  voice-agent models list
  voice-agent models list --json`,
		Short: "What is needed, what is present and verified",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, mods, err := selectModels("", nil)
			if err != nil {
				return err
			}
			var rows []modelRow
			for _, mod := range mods {
				r, err := installedRow(p, mod)
				if err != nil {
					return err
				}
				rows = append(rows, r)
			}
			if a.json {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rows)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MODEL\tSTAGE\tSIZE\tSTATE\tPATH")
			for _, r := range rows {
				size := "size unknown"
				if r.Size > 0 {
					size = assets.FormatEstimate(r.Size, r.SizeApprox)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Model, r.Stage, size, r.State, r.Path)
			}
			fmt.Fprintf(w, "\ncache: %s\n", p.Dir)
			return w.Flush()
		},
	}
}

// installedRow is where mod is installed, its size and its state:
// missing if any of its files is, else the problem of its last unverified
// file.
func installedRow(p *assets.Puller, mod assets.Model) (modelRow, error) {
	dir, st, err := p.Installed(mod)
	if err != nil {
		return modelRow{}, err
	}
	r := modelRow{Model: mod.Name, Stage: mod.Stage, Path: dir, State: "verified"}
	known := true
	for _, f := range st {
		switch {
		case f.Present:
			r.Size += f.Size
		case f.File.Size > 0:
			r.Size += f.File.Size
		default:
			known = false
		}
		switch {
		case !f.Present:
			r.State = "missing: voice-agent models pull " + mod.Name
		case !f.Verified && !strings.HasPrefix(r.State, "missing"):
			r.State = "unverified: " + f.Problem
		}
	}
	if !known {
		r.Size = 0
		if n, approx, _ := mod.DownloadSize(); approx {
			r.Size, r.SizeApprox = n, true
		}
	}
	return r, nil
}

func (a *app) modelsPullCmd() *cobra.Command {
	var (
		mirror  string
		timeout time.Duration
	)
	pull := &cobra.Command{
		Use: "pull [NAME...]",
		Example: `  voice-agent models pull
  voice-agent models pull silero-vad-v5 smart-turn-v3.2-cpu
  voice-agent models pull --mirror http://mirror.local:8080`,
		Short: "Download models into the cache, verified (all models if none named)",
		RunE: func(cmd *cobra.Command, names []string) error {
			p, mods, err := selectModels(mirror, names)
			if err != nil {
				return err
			}
			// Offline means no network use, as for run --pull; pulling
			// is the one thing this command does, so it refuses.
			if os.Getenv(envOffline) != "" {
				return fmt.Errorf("$%s is set (offline), so nothing is downloaded; unset it to pull, "+
					"or copy the model files into %s/NAME/ by hand and run voice-agent models verify", envOffline, p.Dir)
			}
			if timeout > 0 {
				ctx, cancel := context.WithTimeoutCause(cmd.Context(), timeout, errPullTimeout)
				defer cancel()
				cmd.SetContext(ctx)
			}
			failed, err := a.pullModels(cmd, p, mods)
			if errors.Is(context.Cause(cmd.Context()), errPullTimeout) {
				return fmt.Errorf("stopped after --timeout %v (%w); what was downloaded is kept: run it again to resume", timeout, err)
			}
			if err != nil || len(failed) == 0 {
				return err
			}
			return fmt.Errorf("could not pull %s (above, why); try again (a partial download resumes), "+
				"or --mirror URL for a mirror of the sources, or copy the files into %s/NAME/ by hand and run voice-agent models verify",
				strings.Join(failed, ", "), p.Dir)
		},
	}
	pull.Flags().StringVar(&mirror, "mirror", "", "base URL replacing the scheme and host of every source")
	pull.Flags().DurationVar(&timeout, "timeout", 0, "stop the whole pull after this long (e.g. 30m; 0: no limit; a source under 1 KiB/s is dropped anyway)")
	limitFlag(pull.Flags(), "timeout", func() bool { return timeout >= 0 }, "0 (no limit) or a positive duration such as 30m")
	return pull
}

func modelsVerifyCmd() *cobra.Command {
	return &cobra.Command{
		Use: "verify [NAME...]",
		Example: `  voice-agent models verify
  voice-agent models verify mnn-pocket-0.3b-int4`,
		Short: "Check the installed files' sizes and checksums (the cache, or third_party/)",
		RunE: func(cmd *cobra.Command, names []string) error {
			p, mods, err := selectModels("", names)
			if err != nil {
				return err
			}
			bad := 0
			for _, mod := range mods {
				_, st, err := p.Installed(mod)
				if err != nil {
					return err
				}
				for _, f := range st {
					state := "ok"
					if !f.Verified {
						bad++
						state = f.Problem
						if !f.Present {
							state = "missing"
						}
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", f.Path, state)
				}
			}
			if bad > 0 {
				return fmt.Errorf("%d file(s) missing or not verified; run voice-agent models pull", bad)
			}
			return nil
		},
	}
}

func modelsPathCmd() *cobra.Command {
	return &cobra.Command{
		Use: "path [NAME]",
		Example: `  voice-agent models path                  # the model cache
  voice-agent models path silero-vad-v5    # one model's folder`,
		Short: "Print the model cache, or where a model is loaded from: the cache, or third_party/ where scripts/setup installs it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, mods, err := selectModels("", args)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), p.Dir)
				return nil
			}
			dir, _, err := p.Installed(mods[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), dir)
			return nil
		},
	}
}

func modelsPruneCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "prune",
		Example: `  voice-agent models prune`,
		Short:   "Remove the derived weights (mapped copies) of models that are gone or changed",
		Long: `The agent derives files from each model at its first load (MNN's mapped weights, ONNX Runtime's
optimized copies), under $XDG_CACHE_HOME/voice-agent/derived, a folder per model and setting that
shapes them (MNN's threads). A new derivation removes those of models whose files are gone and
keeps the three settings of each model used last; prune also finds the models changed since, by
their checksums, and keeps only the setting used last.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pruned, err := derived.Prune(true)
			var freed int64
			for _, p := range pruned {
				freed += p.Bytes
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s (%d MiB): %s\n", p.Dir, p.Bytes>>20, p.Why)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d folder(s) removed, %d MiB freed\n", len(pruned), freed>>20)
			return err
		},
	}
}

// errPullTimeout ends a pull at its --timeout.
var errPullTimeout = errors.New("the pull's time is up")

// pullModels downloads mods with p, with progress on stderr, trying every
// one so that a model that cannot be had does not keep the others from the
// user; it returns the names of those that failed (each logged with why).
// A cancelled command is an error, and so is a model none of whose
// sources can be connected to: the network (or the mirror) is out of
// reach, the other models' sources are no nearer, and the error says in
// one line what to do instead.
func (a *app) pullModels(cmd *cobra.Command, p *assets.Puller, mods []assets.Model) (failed []string, err error) {
	p.Progress = progressPrinter(cmd, isatty.IsTerminal(os.Stderr.Fd()))
	p.Retrying = func(model, file string, attempt int, err error, wait time.Duration) {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s/%s: attempt %d failed (%v); trying again in %v\n", model, file, attempt, err, wait)
	}
	p.Waiting = waitingPrinter(cmd.ErrOrStderr())
	var pulled []string
	defer func() {
		if len(pulled) > 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "pulled: %s\n", strings.Join(pulled, ", "))
		}
	}()
	for i, mod := range mods {
		if err := p.Pull(cmd.Context(), mod); err != nil {
			var unreachable *assets.UnreachableError
			switch {
			case cmd.Context().Err() != nil:
				return nil, err
			case errors.As(err, &unreachable):
				return nil, offlineError(p, unreachable, append(failed, modelNames(mods[i:])...))
			}
			a.log.Error("pull failed", "model", mod.Name, "error", err)
			failed = append(failed, mod.Name)
			continue
		}
		a.log.Info("pulled", "model", mod.Name, "path", assets.Path(p.Dir, mod))
		pulled = append(pulled, mod.Name)
	}
	return failed, nil
}

// offlineError is the one line for a pull whose sources could not be
// reached (u), leaving the models named missing: the three ways on.
func offlineError(p *assets.Puller, u *assets.UnreachableError, missing []string) error {
	what := "the network"
	if p.Mirror != "" {
		what = "the mirror " + assets.Redacted(p.Mirror)
	}
	return fmt.Errorf("%s cannot be reached (%s): set %s=1 to run with what is installed, "+
		"pass --mirror URL for a mirror this machine can reach, or copy the model files by hand into %s/NAME/ (missing: %s)",
		what, strings.Join(u.Hosts, "; "), envOffline, p.Dir, strings.Join(missing, ", "))
}

// waitingPrinter says on w, once for each model, that its pull waits
// for another (a second `models pull` of the same model waited without
// a word for as long as the first took).
func waitingPrinter(w io.Writer) func(model, dir string) {
	said := map[string]bool{}
	return func(model, dir string) {
		if !said[model] {
			said[model] = true
			fmt.Fprintf(w, "%s: waiting for another pull of it (into %s) to finish; Ctrl-C stops waiting\n", model, dir)
		}
	}
}

// modelNames is the models' names.
func modelNames(mods []assets.Model) []string {
	out := make([]string, len(mods))
	for i, m := range mods {
		out[i] = m.Name
	}
	return out
}

// progressPrinter draws a progress line on a terminal and plain lines
// (at most one per file and 10% step) otherwise.
func progressPrinter(cmd *cobra.Command, tty bool) func(assets.Progress) {
	lastPct := map[string]int{}
	return func(pr assets.Progress) {
		key := pr.Model + "/" + pr.File
		pct := -1
		if pr.Total > 0 {
			pct = int(100 * pr.Done / pr.Total)
		}
		line := fmt.Sprintf("%s %s/%s %s/s eta %s", key, assets.FormatSize(pr.Done), assets.FormatSize(pr.Total), assets.FormatSize(int64(pr.Rate)), pr.ETA.Round(time.Second))
		if tty {
			fmt.Fprintf(cmd.ErrOrStderr(), "\r%-100s", line)
			if pct == 100 {
				fmt.Fprintln(cmd.ErrOrStderr())
			}
			return
		}
		if last, seen := lastPct[key]; !seen || pct/10 > last/10 {
			lastPct[key] = pct
			fmt.Fprintln(cmd.ErrOrStderr(), line)
		}
	}
}
