package score

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Subset names, in VoiceBench's order.
var SubsetNames = []string{"alpacaeval", "commoneval", "wildvoice", "sd-qa", "mmsu", "openbookqa", "bbh", "ifeval", "advbench"}

// OverallFormula says how Report.Overall is computed.
const OverallFormula = "overall = mean of the nine subset scores (0-100); the 1-5 judge scores of alpacaeval, commoneval and wildvoice are multiplied by 20"

type scorer func([]sample) (subsetResult, error)

type subsetSpec struct {
	metric string
	score  scorer // nil: needs an LLM judge
	judge  judgeKind
}

var specs = map[string]subsetSpec{
	"alpacaeval": {metric: "LLM judge 1-5, x20", judge: judgeOpen},
	"commoneval": {metric: "LLM judge 1-5, x20", judge: judgeOpen},
	"wildvoice":  {metric: "LLM judge 1-5, x20", judge: judgeOpen},
	"sd-qa":      {metric: "LLM judge yes/no accuracy (majority of verdicts)", judge: judgeQA},
	"mmsu":       {metric: "accuracy (answer templates; unmatched = wrong)", score: scoreMCQ},
	"openbookqa": {metric: "accuracy (answer templates; unmatched = wrong)", score: scoreMCQ},
	"bbh":        {metric: "accuracy (per-task answer rules; unmatched = wrong)", score: scoreBBH},
	"ifeval":     {metric: "mean of prompt/instruction x strict/loose accuracy", score: scoreIFEval},
	"advbench":   {metric: "refusal rate (refusal phrases)", score: scoreRefusal},
}

// subsetResult is what a scorer counts; scoreIFEval also fills ifeval.
type subsetResult struct {
	scored, correct, unmatched, errors, unsupported int
	ifeval                                          *IFEvalScores
}

// Report is the summary of a results directory.
type Report struct {
	Subsets []SubsetScore `json:"subsets"`
	// Overall is nil unless all nine subsets are present and scored.
	Overall        *float64 `json:"overall"`
	OverallFormula string   `json:"overall_formula"`
	Samples        int      `json:"samples"`
	// Missing lists the subsets with no results file.
	Missing []string `json:"missing,omitempty"`
	// Latency pools the samples of all subsets.
	Latency map[string]Latency `json:"latency_ms,omitempty"`
	// Notes are what the reader must know about how the results were
	// made (e.g. that stand-ins answered); the caller adds them.
	Notes []string `json:"notes,omitempty"`

	// samples keeps what was read, for the judge export.
	samples map[string][]sample
}

// SubsetScore is one subset's line of the report.
type SubsetScore struct {
	Name    string `json:"name"`
	Metric  string `json:"metric"`
	Samples int    `json:"samples"`
	// Scored counts the samples that have a verdict.
	Scored int `json:"scored"`
	// Score is on a 0-100 scale; nil while the subset needs a judge.
	Score      *float64 `json:"score"`
	NeedsJudge bool     `json:"needs_judge"`
	// JudgeMean is the raw mean judge rating (1-5) of open-ended subsets.
	JudgeMean *float64 `json:"judge_mean,omitempty"`
	// Unmatched counts answers no rule could read; they count as wrong.
	Unmatched int `json:"unmatched"`
	// Errors counts samples the runner failed on; they count as wrong.
	Errors int `json:"errors"`
	// Unsupported counts IFEval instructions that could not be checked.
	Unsupported int                `json:"unsupported,omitempty"`
	IFEval      *IFEvalScores      `json:"ifeval,omitempty"`
	Latency     map[string]Latency `json:"latency_ms,omitempty"`
}

// ScoreDir reads every SUBSET.jsonl present in dir and scores it. Files of
// other names are ignored.
func ScoreDir(dir string) (*Report, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("voicebench score: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("voicebench score: %s is not a directory", dir)
	}
	rep := &Report{OverallFormula: OverallFormula, samples: map[string][]sample{}}
	for _, name := range SubsetNames {
		files, err := subsetFiles(dir, name)
		if err != nil {
			return nil, fmt.Errorf("voicebench score: %w", err)
		}
		if len(files) == 0 {
			rep.Missing = append(rep.Missing, name)
			continue
		}
		var samples []sample
		for _, f := range files {
			s, err := readResults(f)
			if err != nil {
				return nil, fmt.Errorf("voicebench score: %w", err)
			}
			samples = append(samples, s...)
		}
		sc, err := scoreSubset(dir, name, samples)
		if err != nil {
			return nil, fmt.Errorf("voicebench score: %s: %w", name, err)
		}
		rep.samples[name] = samples
		rep.Subsets = append(rep.Subsets, sc)
		rep.Samples += sc.Samples
	}
	if len(rep.Subsets) == 0 {
		return nil, fmt.Errorf("voicebench score: no results files (SUBSET.jsonl) in %s", dir)
	}
	rep.Overall = overall(rep.Subsets)
	var all []sample
	for _, name := range SubsetNames {
		all = append(all, rep.samples[name]...)
	}
	rep.Latency = latencies(all)
	return rep, nil
}

func scoreSubset(dir, name string, samples []sample) (SubsetScore, error) {
	spec := specs[name]
	sc := SubsetScore{Name: name, Metric: spec.metric, Samples: len(samples), Latency: latencies(samples)}
	if spec.score == nil {
		return sc, applyJudge(&sc, spec.judge, filepath.Join(dir, "judge", name+".scores.jsonl"), samples)
	}
	res, err := spec.score(samples)
	if err != nil {
		return sc, err
	}
	sc.Scored, sc.Unmatched, sc.Errors, sc.Unsupported, sc.IFEval = res.scored, res.unmatched, res.errors, res.unsupported, res.ifeval
	var v float64
	switch {
	case res.ifeval != nil:
		v = res.ifeval.Mean
	case len(samples) > 0:
		v = 100 * float64(res.correct) / float64(len(samples))
	}
	sc.Score = &v
	return sc, nil
}

func overall(subsets []SubsetScore) *float64 {
	if len(subsets) != len(SubsetNames) {
		return nil
	}
	var sum float64
	for _, s := range subsets {
		if s.Score == nil {
			return nil
		}
		sum += *s.Score
	}
	v := sum / float64(len(subsets))
	return &v
}

// Markdown renders the report as a summary table.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("# VoiceBench summary\n\n")
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "**%s**\n\n", n)
	}
	if r.Overall != nil {
		fmt.Fprintf(&b, "**Overall: %.2f**\n\n", *r.Overall)
	} else {
		b.WriteString("**Overall: n/a**")
		var why []string
		if len(r.Missing) > 0 {
			why = append(why, "missing: "+strings.Join(r.Missing, ", "))
		}
		var judge []string
		for _, s := range r.Subsets {
			if s.Score == nil {
				judge = append(judge, s.Name)
			}
		}
		if len(judge) > 0 {
			why = append(why, "needs judge: "+strings.Join(judge, ", "))
		}
		if len(why) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(why, "; "))
		}
		b.WriteString("\n\n")
		if len(judge) > 0 {
			b.WriteString("Samples for the LLM judge are in judge/SUBSET.jsonl; write its verdicts to judge/SUBSET.scores.jsonl " +
				"(one `{\"index\": N, \"score\": ...}` line per sample) and score again.\n\n")
		}
	}
	fmt.Fprintf(&b, "%s. Samples: %d.\n\n", strings.ToUpper(OverallFormula[:1])+OverallFormula[1:], r.Samples)

	b.WriteString("| subset | metric | samples | scored | score | unmatched | errors | end_to_end p50 ms | end_to_end p95 ms |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range r.Subsets {
		score := "needs judge"
		if s.Score != nil {
			score = fmt.Sprintf("%.2f", *s.Score)
			if s.JudgeMean != nil {
				score += fmt.Sprintf(" (%.2f/5)", *s.JudgeMean)
			}
		}
		p50, p95 := "-", "-"
		if l, ok := s.Latency["end_to_end"]; ok {
			p50, p95 = fmt.Sprintf("%.0f", l.P50), fmt.Sprintf("%.0f", l.P95)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %d | %d | %s | %s |\n",
			s.Name, s.Metric, s.Samples, s.Scored, score, s.Unmatched, s.Errors, p50, p95)
	}

	for _, s := range r.Subsets {
		if s.IFEval == nil {
			continue
		}
		f := s.IFEval
		b.WriteString("\n## IFEval\n\n| level | strict | loose |\n|---|---:|---:|\n")
		fmt.Fprintf(&b, "| prompt | %.2f | %.2f |\n| instruction | %.2f | %.2f |\n",
			f.PromptStrict, f.PromptLoose, f.InstructionStrict, f.InstructionLoose)
		if s.Unsupported > 0 {
			fmt.Fprintf(&b, "\n%d instruction(s) could not be checked (missing or invalid arguments); they count as not followed.\n", s.Unsupported)
		}
	}

	if len(r.Latency) > 0 {
		b.WriteString("\n## Latency per stage\n\n| subset | stage | n | p50 ms | p95 ms |\n|---|---|---:|---:|---:|\n")
		for _, s := range r.Subsets {
			writeLatencyRows(&b, s.Name, s.Latency)
		}
		writeLatencyRows(&b, "all", r.Latency)
	}
	return b.String()
}

func writeLatencyRows(b *strings.Builder, name string, lat map[string]Latency) {
	stages := make([]string, 0, len(lat))
	for st := range lat {
		stages = append(stages, st)
	}
	sort.Strings(stages)
	for _, st := range stages {
		l := lat[st]
		fmt.Fprintf(b, "| %s | %s | %d | %.0f | %.0f |\n", name, st, l.N, l.P50, l.P95)
	}
}

// WriteReport writes dir/summary.json, dir/summary.md and, for each subset
// that needs a judge, dir/judge/SUBSET.jsonl.
func WriteReport(dir string, r *Report) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("voicebench score: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("voicebench score: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(r.Markdown()), 0o644); err != nil {
		return fmt.Errorf("voicebench score: %w", err)
	}
	for _, s := range r.Subsets {
		spec := specs[s.Name]
		if spec.score != nil {
			continue
		}
		if err := writeJudgeExport(filepath.Join(dir, "judge"), s.Name, spec.judge, r.samples[s.Name]); err != nil {
			return fmt.Errorf("voicebench score: %w", err)
		}
	}
	return nil
}
