package score

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// record is one line of a results file: the dataset's non-audio fields plus
// what the runner recorded. Unknown keys are ignored.
type record struct {
	Prompt            string              `json:"prompt"`
	Reference         string              `json:"reference"`
	ID                flexString          `json:"id"`
	SampleID          flexString          `json:"sample_id"` // the runner's own id
	InstructionIDList []string            `json:"instruction_id_list"`
	Kwargs            []map[string]any    `json:"kwargs"`
	Response          string              `json:"response"`
	LatencyMS         map[string]*float64 `json:"latency_ms"` // nil: the stage did not happen
	Error             string              `json:"error"`
}

// flexString accepts a JSON string or number, because dataset ids are
// numbers in some exports and strings in others.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a string or a number, got %s", b)
		}
		*f = flexString(n.String())
	}
	return nil
}

// sample is a record with where it came from, so that errors can name it.
type sample struct {
	file string
	line int
	rec  record
}

func (s sample) where() string { return s.file + ":" + strconv.Itoa(s.line) }

// maxLine bounds one JSONL line; a response of several megabytes is a broken
// runner, not a benchmark answer.
const maxLine = 16 << 20

// readResults reads one JSONL file. A malformed line is an error naming
// file:line.
func readResults(path string) ([]sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseResults(f, filepath.Base(path))
}

func parseResults(r io.Reader, name string) ([]sample, error) {
	var out []sample
	err := scanJSONL(r, name, func(n int, line []byte) error {
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		out = append(out, sample{file: name, line: n, rec: rec})
		return nil
	})
	return out, err
}

// scanJSONL calls fn for each non-blank line; an error names name:line.
func scanJSONL(r io.Reader, name string, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// subsetFiles lists the results files of a subset in dir, in name order. sd-qa
// may be split by region like the dataset (sd-qa_usa.jsonl, ...).
func subsetFiles(dir, name string) ([]string, error) {
	var files []string
	exact := filepath.Join(dir, name+".jsonl")
	if _, err := os.Stat(exact); err == nil {
		files = append(files, exact)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if name == "sd-qa" {
		split, err := filepath.Glob(filepath.Join(dir, "sd-qa?*.jsonl"))
		if err != nil {
			return nil, err
		}
		files = append(files, split...)
	}
	sort.Strings(files)
	return files, nil
}

// percentile is numpy's default (linear interpolation between closest ranks)
// over sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(pos)
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	d := sorted[lo+1] - sorted[lo]
	if math.IsInf(d, 0) { // finite values too far apart for their difference
		return (1-frac)*sorted[lo] + frac*sorted[lo+1]
	}
	return sorted[lo] + frac*d
}

// Latency is the spread of one pipeline stage's latency over a subset.
type Latency struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
}

func latencies(samples []sample) map[string]Latency {
	by := map[string][]float64{}
	for _, s := range samples {
		for stage, ms := range s.rec.LatencyMS {
			if ms != nil {
				by[stage] = append(by[stage], *ms)
			}
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := make(map[string]Latency, len(by))
	for stage, v := range by {
		sort.Float64s(v)
		out[stage] = Latency{N: len(v), P50: percentile(v, 50), P95: percentile(v, 95)}
	}
	return out
}

// verdict is an automatic scorer's judgement of one answer.
type verdict int

const (
	wrong verdict = iota
	right
	unmatched // no rule could read the answer; it counts as wrong
)

// scoreEach scores the samples one by one. A failed sample counts as wrong
// and is not judged.
func scoreEach(samples []sample, judge func(sample) (verdict, error)) (subsetResult, error) {
	var res subsetResult
	for _, s := range samples {
		if s.rec.Error != "" {
			res.errors++
			continue
		}
		v, err := judge(s)
		if err != nil {
			return res, fmt.Errorf("%s: %w", s.where(), err)
		}
		res.scored++
		switch v {
		case right:
			res.correct++
		case unmatched:
			res.unmatched++
		}
	}
	return res, nil
}

// trimTurnPrefix drops the "<1>".."<3>" turn marker some models start with,
// as the reference evaluators do before matching.
func trimTurnPrefix(s string) string {
	if strings.HasPrefix(s, "<1>") || strings.HasPrefix(s, "<2>") || strings.HasPrefix(s, "<3>") {
		return strings.TrimSpace(s[3:])
	}
	return s
}

// trimUserSuffix drops a trailing "<|user|>" turn marker.
func trimUserSuffix(s string) string {
	if t, ok := strings.CutSuffix(s, "<|user|>"); ok {
		return strings.TrimSpace(t)
	}
	return s
}
