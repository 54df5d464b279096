package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/bench"
)

// The script makes a doc's tables from a small committed set of runs:
// each cell the newest figure measured, with the letter of its runs, a
// range over the runs of one commit and day, and a figure no run has left
// blank; a hand table dated above it is left as it is. Checking the doc
// it wrote passes; checking the doc before fails.
func TestMakesTheTablesFromTheRuns(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "performance.md")
	before, err := os.ReadFile("testdata/doc.md")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(doc, before, 0o644))

	require.ErrorContains(t, makeDocs([]string{doc}, "testdata/perf", true), "is not what testdata/perf makes: run go run ./cmd/perfdoc")
	require.NoError(t, makeDocs([]string{doc}, "testdata/perf", false))
	got, err := os.ReadFile(doc)
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/doc.want.md")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	assert.NoError(t, makeDocs([]string{doc}, "testdata/perf", true))
}

// docs/performance.md and README.md are what docs/perf makes, with every
// generated table in one of them: the figures cannot drift from their
// data. Every other table of docs/performance.md is dated by hand.
func TestDocsAreWhatTheirDataMakes(t *testing.T) {
	docs := []string{"../../docs/performance.md", "../../README.md"}
	require.NoError(t, makeDocs(docs, "../../docs/perf", true))
	var text string
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		text += string(b)
	}
	for _, tb := range tables {
		assert.True(t, strings.Contains(text, "<!-- perfdoc:"+tb.name+" -->"), "no table %s in %v", tb.name, docs)
	}
	perf, err := os.ReadFile(docs[0])
	require.NoError(t, err)
	assert.Empty(t, undatedHandTables(string(perf)),
		"a table of docs/performance.md that cmd/perfdoc does not make says when and where it was measured in the paragraph right above it (\"Measured by hand on 2026-12-06 at 46a6244 on ...\"), or in a last column named \"measured\"")
}

// Every figure a table reads is one the bench commands write: a renamed
// JSON name fails here, not as a blank row in the doc.
func TestTablesReadWhatBenchWrites(t *testing.T) {
	parts := map[string]bench.Percentiles{}
	for _, name := range bench.VoiceToVoicePartNames {
		parts[name] = bench.Percentiles{P50: 1, P95: 2}
	}
	stage := func(name string) bench.StageResult {
		return bench.StageResult{Stage: name, ComputeMS: 1, RTF: 1, FirstAudioMS: 1, FirstTokenMS: 1}
	}
	tts := stage("tts")
	for _, g := range []string{"text rows", "decode step", "local frame", "codec"} {
		tts.Graphs = append(tts.Graphs, bench.GraphResult{Graph: g, MSPerCall: 1, TimesBound: 1})
	}
	var idle bench.IdleResult
	for _, name := range bench.IdlePartNames {
		idle.Parts = append(idle.Parts, bench.IdlePart{Part: name, CPUPercent: 1})
	}
	written := map[string]any{
		"idle":     idle,
		"pipeline": bench.PipelineResult{VoiceToVoiceParts: parts},
		"stages":   bench.StagesResult{Stages: []bench.StageResult{stage("asr"), stage("turn"), stage("llm"), tts}},
	}
	for _, tb := range tables {
		for _, row := range tb.rows {
			text, err := json.Marshal(written[row.command])
			require.NoError(t, err)
			r := run{command: row.command}
			require.NoError(t, json.Unmarshal(text, &r.figures))
			for _, f := range row.figures {
				_, ok := r.figure(f.path)
				assert.True(t, ok, "table %s, row %q: bench %s writes no %s", tb.name, row.label, row.command, f.path)
			}
		}
	}
}

// A cell shows each figure's range over its runs as the doc writes
// figures.
func TestCellText(t *testing.T) {
	v := pipelineRow("v", "%s ms", figure{"v", ms})
	for _, tc := range []struct {
		name   string
		row    row
		values [][]float64
		want   string
	}{
		{"one run", v, [][]float64{{612.4}}, "612 ms"},
		{"a range, in thousands", v, [][]float64{{1512, 1060.2, 1300}}, "1,060-1,512 ms"},
		{"a range shown as one value", v, [][]float64{{264.2, 263.9}}, "264 ms"},
		{"two figures", peakAnon, [][]float64{{296 << 20, 317 << 20}, {85 << 20, 85 << 20}}, "296-317 MiB (85)"},
		{"a ratio", ttsRTF, [][]float64{{0.356, 0.32}}, "0.32-0.36"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.row.cellText(tc.values))
		})
	}
}

// A table the script does not make must be dated in the paragraph right
// above it, or row by row in a "measured" column.
func TestUndatedHandTables(t *testing.T) {
	const table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
	for _, tc := range []struct {
		name, doc string
		undated   int
	}{
		{"dated", "Measured by hand on 2026-12-06 at 46a6244 on the build machine:\n\n" + table, 0},
		{"dated, over two lines", "Measured by hand on\n2026-12-06 at 46a6244:\n" + table, 0},
		{"dated row by row", "Figures:\n\n| a | measured |\n|---|---|\n| 1 | 2026-12-06, 46a6244 |\n", 0},
		{"generated", "<!-- perfdoc:x -->\n\nMeasured at 1.\n\n" + table + "\n<!-- /perfdoc:x -->\n", 0},
		{"in a fence", "```\n" + table + "```\n", 0},
		{"not dated", "Command: voice-agent bench stages.\n\n" + table, 1},
		{"no commit", "Measured by hand on 2026-12-06 on the build machine.\n\n" + table, 1},
		{"no date", "Measured by hand at 46a6244.\n\n" + table, 1},
		{"dated further up", "Measured by hand on 2026-12-06 at 46a6244.\n\nThen some words.\n\n" + table, 1},
		{"two tables, the second not dated", "Measured by hand on 2026-12-06 at 46a6244.\n\n" + table + "\n" + table, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Len(t, undatedHandTables(tc.doc), tc.undated)
		})
	}
}

// A doc whose markers do not pair, or name no table, is refused.
func TestRewriteRefusesBadMarkers(t *testing.T) {
	made := func(name string) (string, error) { return "T", nil }
	for _, tc := range []struct{ doc, want string }{
		{"a\n<!-- perfdoc:x -->\nb\n", "<!-- perfdoc:x --> is not closed by <!-- /perfdoc:x -->"},
		{"a\n<!-- perfdoc:x -->\n<!-- /perfdoc:y -->\n", "is not closed"},
		{"a\n<!-- /perfdoc:x -->\n", "<!-- /perfdoc:x --> closes no region"},
	} {
		_, err := rewrite(tc.doc, made)
		assert.ErrorContains(t, err, tc.want, tc.doc)
	}
	got, err := rewrite("a\n<!-- perfdoc:x -->\nold\n<!-- /perfdoc:x -->\nb\n", made)
	require.NoError(t, err)
	assert.Equal(t, "a\n<!-- perfdoc:x -->\n\nT\n<!-- /perfdoc:x -->\nb\n", got)

	doc := filepath.Join(t.TempDir(), "doc.md")
	require.NoError(t, os.WriteFile(doc, []byte("<!-- perfdoc:no-such-table -->\n<!-- /perfdoc:no-such-table -->\n"), 0o644))
	assert.ErrorContains(t, makeDocs([]string{doc}, "testdata/perf", true), `no table is named "no-such-table"`)
}

// A run that does not say when and where it was measured is refused: its
// figures could not be dated.
func TestRunsSayWhereTheyWereMeasured(t *testing.T) {
	for _, tc := range []struct{ name, file, text, want string }{
		{"undated", "int4/pipeline-1.json", `{"measured": {"machine": "m"}, "turns": 3}`, "says neither when nor where"},
		{"no machine", "int4/pipeline-1.json", `{"measured": {"date": "2026-12-01T00:00:00Z"}}`, "says neither when nor where"},
		{"no command in its name", "int4/run.json", `{}`, "not named COMMAND-ANYTHING.json"},
		{"not JSON", "int4/pipeline-1.json", `{`, "int4/pipeline-1.json: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadRuns(fstest.MapFS{tc.file: {Data: []byte(tc.text)}})
			assert.ErrorContains(t, err, tc.want)
		})
	}
	runs, err := loadRuns(os.DirFS("testdata/perf"))
	require.NoError(t, err)
	assert.Len(t, runs, 4)
	for _, r := range runs {
		assert.Equal(t, "pipeline", r.command)
		assert.True(t, strings.HasPrefix(r.measured.Machine, "Test CPU"))
	}
}

var (
	dated  = regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b`)
	commit = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
)

// undatedHandTables names the tables of doc outside its generated regions
// whose paragraph above does not start "Measured by hand" with a date and
// a commit in it, unless the table's last column is "measured" (each row
// dated on its own).
func undatedHandTables(doc string) []string {
	var undated []string
	lines := strings.Split(doc, "\n")
	generated, fenced := false, false
	for i, line := range lines {
		switch m := marker.FindStringSubmatch(line); {
		case m != nil:
			generated = m[1] == ""
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
		}
		if generated || fenced || !strings.HasPrefix(line, "|") || i > 0 && strings.HasPrefix(lines[i-1], "|") {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(line), "| measured |") {
			continue
		}
		above := paragraphAbove(lines, i)
		if !strings.HasPrefix(above, "Measured by hand") || !dated.MatchString(above) || !commit.MatchString(above) {
			undated = append(undated, fmt.Sprintf("line %d: %s", i+1, line))
		}
	}
	return undated
}

// paragraphAbove is the paragraph that ends right above line i, blank
// lines between skipped.
func paragraphAbove(lines []string, i int) string {
	end := i
	for end > 0 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	start := end
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	return strings.Join(lines[start:end], " ")
}
