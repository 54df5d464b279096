package voicebench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/voiceassistant/voice/wiring"
)

// Modalities: the sample's audio through the whole pipeline, or its prompt
// straight to the LLM (VoiceBench's text baseline).
const (
	ModalityAudio = "audio"
	ModalityText  = "text"
)

// Config is one run over one subset.
type Config struct {
	// Data holds the subsets (see Open); Split picks a Parquet split ("":
	// all of them).
	Data, Subset, Split string
	// Out receives SUBSET.jsonl and run.json.
	Out string
	// Limit stops after the first Limit samples of the dataset (0: all);
	// finished ones among them are skipped, not replaced.
	Limit int
	// Workers answer samples in parallel, each with its own stages (so
	// models are loaded once per worker).
	Workers  int
	Modality string
	Stages   wiring.Stages
	// Shard is the part of the subset this run answers (the zero Shard:
	// all of it).
	Shard Shard
	// ComputeScale puts the stages' measured compute on each replay's
	// clock (pipeline.Config.ComputeScale), so the latencies recorded
	// are this machine's end to end; 0 leaves compute free.
	ComputeScale float64
	// Log gets warnings and per-sample input errors (default: discarded).
	Log *slog.Logger
	// OnResult, if set, is called after each result is written, from the
	// worker that wrote it.
	OnResult func(Result)
	// Progress, if set, gets how far the run has come, at most once per
	// ProgressEvery (default 10 s) and after the last sample.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Summary counts what a run did.
type Summary struct {
	// Answered samples have a new result line (Failed of them with an
	// error); Skipped were finished by an earlier run; BadInput samples had
	// unreadable audio and were not written, so a rerun tries them again.
	Answered, Failed, Skipped, BadInput int
}

// Run answers the subset's unfinished samples and appends each result to
// OUT/SUBSET.jsonl as it finishes. Samples with unreadable audio are
// reported in the returned error and the run goes on; a dataset that
// cannot be read further, or a cancelled ctx, stops it after the samples
// in flight, and what was written stays for the next run to resume from.
func Run(ctx context.Context, cfg Config) (sum Summary, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.check(); err != nil {
		return sum, err
	}
	ds, err := Open(cfg.Data, cfg.Subset, cfg.Split)
	if err != nil {
		return sum, err
	}
	defer func() { err = errors.Join(err, ds.Close()) }()
	if cfg.Modality == ModalityAudio && !ds.HasAudio() {
		return sum, fmt.Errorf("voicebench: subset %q has no %q column; use --modality text", cfg.Subset, AudioColumn)
	}
	results, err := openResults(cfg.Out, cfg.Subset)
	if err != nil {
		return sum, err
	}
	defer func() { err = errors.Join(err, results.close()) }()
	workers, err := newWorkers(cfg)
	if err != nil {
		return sum, err
	}
	defer func() {
		for _, w := range workers {
			err = errors.Join(err, w.close())
		}
	}()
	if err := recordRun(cfg.Out, cfg.Subset, newRunInfo(cfg)); err != nil {
		return sum, err
	}

	r := &runner{cfg: cfg, results: results}
	if cfg.Progress != nil {
		// Counting first costs a read of the subset, little beside
		// answering it, and gives the total the rate and ETA need.
		total, done, err := r.count(ds)
		if err != nil {
			return sum, err
		}
		r.progress = newProgressMeter(cfg.Subset, total, done, cmp.Or(cfg.ProgressEvery, 10*time.Second), cfg.Progress, time.Now)
	}
	jobs := make(chan Sample)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(jobs)
		r.readErr = r.feed(gctx, ds, jobs)
		return nil // the workers finish what they hold
	})
	for _, w := range workers {
		g.Go(func() error { return r.work(gctx, w, jobs) })
	}
	errs := []error{g.Wait(), r.readErr}
	if r.read && errs[0] == nil && ctx.Err() == nil {
		// The shard's size, for merge to check its results against.
		errs = append(errs, recordSamples(cfg.Out, cfg.Subset, r.assigned))
	}
	if n := len(r.inputErrs); n > 0 {
		errs = append(errs, fmt.Errorf("voicebench: unreadable audio in %d of the samples; they were not answered (a rerun tries them again)", n))
		errs = append(errs, r.inputErrs...)
	}
	return r.sum, errors.Join(append(errs, ctx.Err())...)
}

func (c Config) check() error {
	switch {
	case c.Modality != ModalityAudio && c.Modality != ModalityText:
		return fmt.Errorf("voicebench: unknown modality %q (valid: %s, %s)", c.Modality, ModalityAudio, ModalityText)
	case c.Workers < 1:
		return fmt.Errorf("voicebench: workers must be at least 1, not %d", c.Workers)
	case c.Limit < 0:
		return fmt.Errorf("voicebench: limit must not be negative, not %d", c.Limit)
	case c.Out == "":
		return errors.New("voicebench: no output directory")
	}
	return nil
}

// runner is one Run's shared state: one feeder and the workers.
type runner struct {
	cfg     Config
	results *resultsFile
	readErr error // the feeder's, read after it ends
	// assigned counts the samples of the run's shard the feeder met, and
	// read whether it met them all.
	assigned int
	read     bool
	progress *progressMeter // nil without Config.Progress

	mu        sync.Mutex
	sum       Summary
	inputErrs []error
}

// count is how many samples the run is to answer (of its shard, within
// the limit), and how many of them have results already.
func (r *runner) count(ds *Dataset) (total, done int, err error) {
	n := 0
	for s, err := range ds.All() {
		if err != nil {
			return 0, 0, err
		}
		if r.cfg.Limit > 0 && n >= r.cfg.Limit {
			break
		}
		n++
		if r.cfg.Shard.Has(r.cfg.Subset, s.ID) {
			total++
			if r.results.finished(s.ID) {
				done++
			}
		}
	}
	return total, done, nil
}

// feed sends the unfinished samples among the first cfg.Limit to jobs, and
// returns why it stopped early: a dataset it cannot read further, or ids
// that do not tell samples apart.
func (r *runner) feed(ctx context.Context, ds *Dataset, jobs chan<- Sample) error {
	seen := map[string]int{}
	n := 0
	for s, err := range ds.All() {
		if err != nil {
			return err
		}
		if r.cfg.Limit > 0 && n >= r.cfg.Limit {
			r.read = true
			return nil
		}
		if first, dup := seen[s.ID]; dup {
			return fmt.Errorf("voicebench: sample id %q appears at samples %d and %d; resuming needs unique ids", s.ID, first, n)
		}
		seen[s.ID] = n
		n++
		if !r.cfg.Shard.Has(r.cfg.Subset, s.ID) {
			continue
		}
		r.assigned++
		if r.results.finished(s.ID) {
			r.mu.Lock()
			r.sum.Skipped++
			r.mu.Unlock()
			continue
		}
		select {
		case jobs <- s:
		case <-ctx.Done():
			return nil
		}
	}
	r.read = true
	return nil
}

// work answers samples from jobs with w and appends each result.
func (r *runner) work(ctx context.Context, w worker, jobs <-chan Sample) error {
	for s := range jobs {
		res, err := w.answer(ctx, s)
		if ctx.Err() != nil {
			return nil // unfinished: the next run does it
		}
		var inErr *InputError
		switch {
		case errors.As(err, &inErr):
			r.cfg.Log.Error("sample skipped", "id", s.ID, "error", inErr.Err)
			r.mu.Lock()
			r.inputErrs = append(r.inputErrs, err)
			r.sum.BadInput++
			r.mu.Unlock()
			continue
		case err != nil:
			return err
		}
		if err := r.results.append(res); err != nil {
			return err
		}
		r.mu.Lock()
		r.sum.Answered++
		if res.Error != "" {
			r.sum.Failed++
		}
		r.mu.Unlock()
		if r.cfg.OnResult != nil {
			r.cfg.OnResult(res)
		}
		if r.progress != nil {
			r.progress.add()
		}
	}
	return nil
}
