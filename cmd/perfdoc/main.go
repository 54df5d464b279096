// Command perfdoc makes the generated tables of docs/performance.md and
// README.md from the JSON the bench commands write, kept under docs/perf,
// so that each row shows the newest figure measured, said with the commit,
// machine and date it was measured on. What no bench command writes (a
// micro-benchmark, a figure read off a profiler) stays in the doc as
// written, dated by hand in the paragraph above it.
//
//	go run ./cmd/perfdoc          # rewrites docs/performance.md and README.md
//	go run ./cmd/perfdoc -check   # fails if a doc is not what its data makes
//
// A generated table sits between <!-- perfdoc:NAME --> and
// <!-- /perfdoc:NAME -->, NAME one of tables. A run is saved as
// docs/perf/SET/COMMAND-ANYTHING.json, SET a column of the tables (int4,
// lean): `voice-agent bench pipeline ... --json >
// docs/perf/int4/pipeline-2026-12-08.json`, or every report of a
// `scripts/bench-scale -r docs/perf` at once.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
)

func main() {
	data := flag.String("data", "docs/perf", "the runs' JSON, as SET/COMMAND-ANYTHING.json")
	check := flag.Bool("check", false, "only check that each doc is what its data makes")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: perfdoc [-check] [-data DIR] [DOC.md...] (default docs/performance.md README.md)")
		flag.PrintDefaults()
	}
	flag.Parse()
	docs := flag.Args()
	if len(docs) == 0 {
		docs = []string{"docs/performance.md", "README.md"}
	}
	if err := makeDocs(docs, *data, *check); err != nil {
		fmt.Fprintln(os.Stderr, "perfdoc:", err)
		os.Exit(1)
	}
}

// makeDocs rewrites the generated tables of each of docs from the runs
// under dataDir, or with check only says which doc is not what they make.
func makeDocs(docs []string, dataDir string, check bool) error {
	runs, err := loadRuns(os.DirFS(dataDir))
	if err != nil {
		return err
	}
	for _, path := range docs {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := rewrite(string(old), func(name string) (string, error) {
			i := slices.IndexFunc(tables, func(t table) bool { return t.name == name })
			if i < 0 {
				return "", fmt.Errorf("%s: no table is named %q", path, name)
			}
			return tables[i].text(runs)
		})
		switch {
		case err != nil:
			return err
		case doc == string(old):
			continue
		case check:
			return errors.New(path + " is not what " + dataDir + " makes: run go run ./cmd/perfdoc")
		}
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			return err
		}
	}
	return nil
}
