package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/bench"
)

// A run is one bench command's JSON, kept under the data directory as
// SET/COMMAND-ANYTHING.json: SET names what was measured (a column of the
// doc's tables: "int4", "lean"), COMMAND the bench command that wrote it
// ("pipeline", "stages").
type run struct {
	file     string
	set      string
	command  string
	measured bench.Measured
	// figures is the JSON as decoded into any: a figure is read by its
	// JSON path, so a file written by hand for a run whose JSON was not
	// kept holds only the figures measured, and absent is told from zero.
	figures any
}

// loadRuns reads every run under data.
func loadRuns(data fs.FS) ([]run, error) {
	files, err := fs.Glob(data, "*/*.json")
	if err != nil {
		return nil, err
	}
	var runs []run
	for _, file := range files {
		r, err := loadRun(data, file)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func loadRun(data fs.FS, file string) (run, error) {
	set, name := path.Split(file)
	command, _, ok := strings.Cut(strings.TrimSuffix(name, ".json"), "-")
	if !ok {
		return run{}, fmt.Errorf("%s: not named COMMAND-ANYTHING.json (pipeline-1.json)", file)
	}
	text, err := fs.ReadFile(data, file)
	if err != nil {
		return run{}, err
	}
	r := run{file: file, set: strings.TrimSuffix(set, "/"), command: command}
	var head struct{ Measured bench.Measured }
	if err := json.Unmarshal(text, &head); err != nil {
		return run{}, fmt.Errorf("%s: %w", file, err)
	}
	if err := json.Unmarshal(text, &r.figures); err != nil {
		return run{}, fmt.Errorf("%s: %w", file, err)
	}
	if r.measured = head.Measured; r.measured.Date.IsZero() || r.measured.Machine == "" {
		return run{}, fmt.Errorf("%s: says neither when nor where it was measured (\"measured\": {\"commit\", \"machine\", \"date\"}): a figure nobody can date is not current", file)
	}
	return r, nil
}

// figure reads the number at the JSON path p of r: keys joined by dots,
// where KEY[FIELD=VALUE] picks the element of the array at KEY whose
// FIELD is VALUE (stages[stage=asr].compute_ms).
func (r run) figure(p string) (float64, bool) {
	v := r.figures
	for _, key := range strings.Split(p, ".") {
		key, pick, picks := strings.Cut(strings.TrimSuffix(key, "]"), "[")
		obj, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		if v, ok = obj[key]; !ok {
			return 0, false
		}
		if picks {
			field, want, _ := strings.Cut(pick, "=")
			list, _ := v.([]any)
			i := slices.IndexFunc(list, func(e any) bool {
				m, ok := e.(map[string]any)
				return ok && m[field] == want
			})
			if i < 0 {
				return 0, false
			}
			v = list[i]
		}
	}
	n, ok := v.(float64)
	return n, ok
}
