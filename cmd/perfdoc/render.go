package main

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/voiceassistant/voice/bench"
)

// A runSet is the runs of one commit on one machine on one day, whose
// spread a range shows.
type runSet struct{ commit, machine, day string }

func setOf(m bench.Measured) runSet {
	return runSet{m.Commit, m.Machine, m.Date.Format(time.DateOnly)}
}

func (s runSet) String() string {
	return fmt.Sprintf("on %s, %s", s.machine, s.when())
}

// when is the set's commit and day.
func (s runSet) when() string {
	commit := "an unstamped build"
	if s.commit != "" {
		hash, dirty, _ := strings.Cut(s.commit, "-")
		commit = hash[:min(7, len(hash))]
		if dirty != "" {
			commit += "-" + dirty
		}
	}
	return fmt.Sprintf("at %s, %s", commit, s.day)
}

// text makes t from runs: each cell from the newest run set that has its
// figures, said over the table with the commit, machine and date.
func (t table) text(runs []run) (string, error) {
	runs = slices.DeleteFunc(slices.Clone(runs), func(r run) bool {
		return !slices.Contains(t.sets, r.set) || !slices.ContainsFunc(t.rows, func(row row) bool { return row.command == r.command })
	})
	if len(runs) == 0 {
		return "", fmt.Errorf("table %s: no runs under %s", t.name, strings.Join(t.sets, ", "))
	}
	latest := map[runSet]time.Time{}
	for _, r := range runs {
		if s := setOf(r.measured); r.measured.Date.After(latest[s]) {
			latest[s] = r.measured.Date
		}
	}
	newestFirst := slices.Collect(maps.Keys(latest))
	slices.SortFunc(newestFirst, func(a, b runSet) int {
		return cmp.Or(latest[b].Compare(latest[a]), strings.Compare(a.commit, b.commit), strings.Compare(a.machine, b.machine))
	})
	cells := make([][]string, len(t.rows))
	from := make([][]runSet, len(t.rows))
	gave := map[runSet]map[string]bool{} // the runs each set's figures came from
	for i, r := range t.rows {
		for _, set := range t.sets {
			text, s, files := r.newestCell(runs, set, newestFirst)
			cells[i], from[i] = append(cells[i], text), append(from[i], s)
			for _, f := range files {
				if gave[s] == nil {
					gave[s] = map[string]bool{}
				}
				gave[s][f] = true
			}
		}
	}
	used := slices.DeleteFunc(newestFirst, func(s runSet) bool { return len(gave[s]) == 0 })
	return legend(used, gave) + "\n\n" + t.markdown(cells, from, used), nil
}

// newestCell is the row's cell for set from the newest run set that has
// all its figures ("" if none has), with that set and the runs it read.
func (r row) newestCell(runs []run, set string, newestFirst []runSet) (string, runSet, []string) {
	for _, s := range newestFirst {
		values := make([][]float64, len(r.figures))
		var files []string
		for _, run := range runs {
			if run.set != set || run.command != r.command || setOf(run.measured) != s {
				continue
			}
			got := make([]float64, 0, len(r.figures))
			for _, f := range r.figures {
				if v, ok := run.figure(f.path); ok {
					got = append(got, v)
				}
			}
			if len(got) < len(r.figures) {
				continue // a run written by hand without this figure
			}
			for i, v := range got {
				values[i] = append(values[i], v)
			}
			files = append(files, run.file)
		}
		if len(files) > 0 {
			return r.cellText(values), s, files
		}
	}
	return "", runSet{}, nil
}

// legend says where and when the figures were measured; where they come
// from more than one run set, each set has a letter its figures carry.
func legend(used []runSet, gave map[runSet]map[string]bool) string {
	runsOf := func(s runSet) string {
		if len(gave[s]) == 1 {
			return "one run"
		}
		return fmt.Sprintf("%d runs", len(gave[s]))
	}
	if len(used) == 1 {
		return fmt.Sprintf("Measured %s (%s; a range spans them).", used[0], runsOf(used[0]))
	}
	oneMachine := !slices.ContainsFunc(used, func(s runSet) bool { return s.machine != used[0].machine })
	parts := make([]string, len(used))
	for i, s := range used {
		where := s.String()
		if oneMachine {
			where = s.when()
		}
		parts[i] = fmt.Sprintf("%s %s (%s)", tag(i), where, runsOf(s))
	}
	on := ""
	if oneMachine {
		on = " on " + used[0].machine
	}
	return "Measured" + on + ": " + strings.Join(parts, "; ") + ". Each figure is the newest measured; its letter says which runs gave it, and a range spans them."
}

// tag is the letter of the i-th run set of a table.
func tag(i int) string { return fmt.Sprintf("[%c]", 'a'+i) }

func (t table) markdown(cells [][]string, from [][]runSet, used []runSet) string {
	var b strings.Builder
	heads := t.sets
	if t.heads != nil {
		heads = t.heads
	}
	fmt.Fprintf(&b, "| figure | %s |\n|---%s|\n", strings.Join(heads, " | "), strings.Repeat("|---", len(t.sets)))
	for i, r := range t.rows {
		b.WriteString("| " + r.label)
		for j, text := range cells[i] {
			if text != "" && len(used) > 1 {
				text += " " + tag(slices.Index(used, from[i][j]))
			}
			b.WriteString(" | " + text)
		}
		b.WriteString(" |\n")
	}
	return b.String()
}

// marker opens or (with its slash) closes a generated region of the doc.
var marker = regexp.MustCompile(`<!-- (/?)perfdoc:([a-z0-9-]+) -->`)

// rewrite replaces each generated region of doc with what tableText makes of
// its name.
func rewrite(doc string, tableText func(name string) (string, error)) (string, error) {
	var out strings.Builder
	rest := doc
	for {
		m := marker.FindStringSubmatchIndex(rest)
		if m == nil {
			out.WriteString(rest)
			return out.String(), nil
		}
		open, name := rest[m[2]:m[3]] == "", rest[m[4]:m[5]]
		if !open {
			return "", fmt.Errorf("<!-- /perfdoc:%s --> closes no region", name)
		}
		out.WriteString(rest[:m[1]])
		rest = rest[m[1]:]
		closing := "<!-- /perfdoc:" + name + " -->"
		end := strings.Index(rest, closing)
		if end < 0 {
			return "", fmt.Errorf("<!-- perfdoc:%s --> is not closed by %s", name, closing)
		}
		text, err := tableText(name)
		if err != nil {
			return "", err
		}
		out.WriteString("\n\n" + text + "\n")
		rest = rest[end:]
		out.WriteString(closing)
		rest = rest[len(closing):]
	}
}
