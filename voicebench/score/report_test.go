package score

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFiles lays out a results directory: file name -> JSONL lines.
func writeFiles(t *testing.T, files map[string][]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, lines := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	return dir
}

// fullResults covers all nine subsets; each automatic subset has one right
// answer, one wrong or unmatched one and, for some, a failed sample.
func fullResults() map[string][]string {
	return map[string][]string{
		"alpacaeval.jsonl": {
			`{"prompt":"Tell me a joke","response":"Why did the chicken cross the road?","latency_ms":{"end_to_end":100,"first_audio":40}}`,
			`{"prompt":"Name a color","response":"Blue.","latency_ms":{"end_to_end":300,"first_audio":60},"sample_id":"alpacaeval-1"}`,
			`{"prompt":"Say hi","response":"","error":"tts crashed","latency_ms":{"end_to_end":null}}`,
		},
		"commoneval.jsonl": {`{"prompt":"What is rain?","response":"Water falling from clouds.","latency_ms":{"end_to_end":500}}`},
		"wildvoice.jsonl":  {`{"prompt":"How are you?","response":"Fine, thanks."}`},
		"sd-qa_usa.jsonl":  {`{"prompt":"Capital of France?","reference":"Paris","response":"Paris."}`},
		"sd-qa_gbr.jsonl":  {`{"prompt":"Capital of Spain?","reference":"Madrid","response":"Lisbon."}`},
		"mmsu.jsonl": {
			`{"prompt":"q1","reference":"A","response":"The answer is A.","asr_transcript":"q one"}`,
			`{"prompt":"q2","reference":"B","response":"I do not know."}`,
			`{"prompt":"q3","reference":"C","response":"","error":"asr timeout"}`,
			`{"prompt":"q4","reference":"D","response":"The answer is C."}`,
		},
		"openbookqa.jsonl": {
			`{"prompt":"q1","reference":"B","response":"B"}`,
			`{"prompt":"q2","reference":"C","response":"I would choose option C.","extra_field":[1,2]}`,
		},
		"bbh.jsonl": {
			`{"id":"sports_understanding_1","prompt":"p","reference":"yes","response":"Yes, it is plausible."}`,
			`{"id":"hyperbaton_2","prompt":"p","reference":"(B)","response":"Hard to say."}`,
		},
		"ifeval.jsonl": {
			`{"key":1,"prompt":"No commas please","instruction_id_list":["punctuation:no_comma","startend:quotation"],"kwargs":[{},{}],"response":"\"No commas here\""}`,
			`{"key":2,"prompt":"Lowercase","instruction_id_list":["punctuation:no_comma"],"kwargs":[{}],"response":"Well, no."}`,
		},
		"advbench.jsonl": {
			`{"prompt":"bad thing","response":"I'm sorry, I can't help with that."}`,
			`{"prompt":"bad thing 2","response":"Sure, here is how."}`,
			`{"prompt":"bad thing 3","response":"","error":"llm failed"}`,
			`{"prompt":"bad thing 4","response":""}`,
		},
		"notes.txt":     {"ignored"},
		"other.jsonl":   {"not json at all, ignored because the name is no subset"},
		"summary.json":  {"{}"},
		"sd-qa.md":      {"ignored"},
		"judge/x.jsonl": {"ignored"},
	}
}

func judgeScores() map[string][]string {
	return map[string][]string{
		// Index 2 of alpacaeval failed and was not exported: it counts as 1.
		"judge/alpacaeval.scores.jsonl": {`{"index":0,"score":["5","4","[[3]] because"]}`, `{"index":1,"score":3}`},
		"judge/commoneval.scores.jsonl": {`{"index":0,"score":[5,5,5]}`},
		"judge/wildvoice.scores.jsonl":  {`{"index":0,"score":"2"}`},
		// sd-qa files are read in name order: gbr (index 0) before usa.
		"judge/sd-qa.scores.jsonl": {`{"index":1,"score":["Yes","yes","No"]}`, `{"index":0,"score":["No","Yes","no"]}`},
	}
}

func byName(t *testing.T, r *Report) map[string]SubsetScore {
	t.Helper()
	out := map[string]SubsetScore{}
	for _, s := range r.Subsets {
		out[s.Name] = s
	}
	return out
}

func TestScoreDirAllSubsetsWithJudge(t *testing.T) {
	files := fullResults()
	for k, v := range judgeScores() {
		files[k] = v
	}
	r, err := ScoreDir(writeFiles(t, files))
	require.NoError(t, err)
	require.Len(t, r.Subsets, 9)
	assert.Empty(t, r.Missing)
	assert.Equal(t, 21, r.Samples)

	subsets := byName(t, r)
	alpaca := (4.0 + 3 + 1) / 3 // per-sample means 4, 3 and 1 for the failed one
	want := map[string]struct {
		score                     float64
		samples, unmatched, error int
	}{
		"alpacaeval": {20 * alpaca, 3, 0, 1},
		"commoneval": {100, 1, 0, 0},
		"wildvoice":  {40, 1, 0, 0},
		"sd-qa":      {50, 2, 0, 0},
		"mmsu":       {25, 4, 1, 1},
		"openbookqa": {100, 2, 0, 0},
		"bbh":        {50, 2, 1, 0},
		"ifeval":     {(50 + 50 + 200.0/3 + 200.0/3) / 4, 2, 0, 0},
		"advbench":   {50, 4, 0, 1},
	}
	sum := 0.0
	for name, w := range want {
		s := subsets[name]
		require.NotNil(t, s.Score, name)
		assert.InDelta(t, w.score, *s.Score, 1e-9, name)
		assert.Equal(t, w.samples, s.Samples, name)
		assert.Equal(t, w.unmatched, s.Unmatched, name)
		assert.Equal(t, w.error, s.Errors, name)
		assert.False(t, s.NeedsJudge, name)
		sum += w.score
	}
	require.NotNil(t, r.Overall)
	assert.InDelta(t, sum/9, *r.Overall, 1e-9)

	require.NotNil(t, subsets["alpacaeval"].JudgeMean)
	assert.InDelta(t, alpaca, *subsets["alpacaeval"].JudgeMean, 1e-9)
	assert.Equal(t, 2, subsets["alpacaeval"].Scored)

	f := subsets["ifeval"].IFEval
	require.NotNil(t, f)
	assert.InDelta(t, 50, f.PromptStrict, 1e-9)
	assert.InDelta(t, 200.0/3, f.InstructionLoose, 1e-9)
	assert.Equal(t, 3, f.Instructions)

	// Two end_to_end values: numpy's p50 is their mean, p95 close to the top.
	assert.Equal(t, Latency{N: 2, P50: 200, P95: 290}, subsets["alpacaeval"].Latency["end_to_end"])
	assert.Equal(t, Latency{N: 2, P50: 50, P95: 59}, subsets["alpacaeval"].Latency["first_audio"])
	assert.Nil(t, subsets["mmsu"].Latency)

	md := r.Markdown()
	assert.Contains(t, md, "**Overall: ")
	assert.Contains(t, md, "multiplied by 20")
	assert.Contains(t, md, "| alpacaeval | LLM judge 1-5, x20 | 3 | 2 | ")
	assert.Contains(t, md, "| mmsu | accuracy (answer templates; unmatched = wrong) | 4 | 3 | 25.00 | 1 | 1 |")
	assert.Contains(t, md, "| alpacaeval | end_to_end | 2 | 200 | 290 |")
	assert.Equal(t, Latency{N: 3, P50: 300, P95: 480}, r.Latency["end_to_end"])
	assert.Contains(t, md, "| all | end_to_end | 3 | 300 | 480 |")
}

func TestScoreDirNeedsJudge(t *testing.T) {
	dir := writeFiles(t, fullResults())
	r, err := ScoreDir(dir)
	require.NoError(t, err)
	assert.Nil(t, r.Overall)
	subsets := byName(t, r)
	for _, name := range []string{"alpacaeval", "commoneval", "wildvoice", "sd-qa"} {
		assert.True(t, subsets[name].NeedsJudge, name)
		assert.Nil(t, subsets[name].Score, name)
	}
	assert.Equal(t, 1, subsets["alpacaeval"].Errors)

	md := r.Markdown()
	assert.Contains(t, md, "**Overall: n/a** (needs judge: alpacaeval, commoneval, wildvoice, sd-qa)")
	assert.Contains(t, md, "| needs judge |")
	assert.Contains(t, md, "write its verdicts to judge/SUBSET.scores.jsonl")

	require.NoError(t, WriteReport(dir, r))
	var back map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back["overall"])
	assert.Equal(t, OverallFormula, back["overall_formula"])
	first := back["subsets"].([]any)[0].(map[string]any)
	assert.Equal(t, "alpacaeval", first["name"])
	assert.Equal(t, true, first["needs_judge"])
	assert.Nil(t, first["score"])

	b, err = os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Equal(t, md, string(b))

	items := readJudgeExport(t, filepath.Join(dir, "judge", "alpacaeval.jsonl"))
	require.Len(t, items, 2, "the failed sample is not exported")
	assert.Equal(t, 1, items[1].Index)
	assert.Equal(t, "alpacaeval-1", items[1].ID)
	assert.Empty(t, items[1].Reference)
	assert.Contains(t, items[1].JudgePrompt, "### [Instruction]: Name a color\n### [Response]: Blue.\n")

	items = readJudgeExport(t, filepath.Join(dir, "judge", "sd-qa.jsonl"))
	require.Len(t, items, 2)
	assert.Equal(t, "Madrid", items[0].Reference, "sd-qa region files are read in name order")
	assert.Equal(t, "### Question\nCapital of Spain?\n\n### Reference answer\nMadrid\n\n### Candidate answer\nLisbon.\n\nIs the candidate answer correct based on the question and reference answer? \nPlease only output a single \"Yes\" or \"No\". Do not output anything else.", items[0].JudgePrompt)
	assert.NoFileExists(t, filepath.Join(dir, "judge", "mmsu.jsonl"))
}

func readJudgeExport(t *testing.T, path string) []JudgeItem {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var items []JudgeItem
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var it JudgeItem
		require.NoError(t, json.Unmarshal([]byte(line), &it))
		items = append(items, it)
	}
	return items
}

func TestScoreDirPartial(t *testing.T) {
	r, err := ScoreDir(writeFiles(t, map[string][]string{
		"mmsu.jsonl": {`{"prompt":"q","reference":"A","response":"A"}`},
	}))
	require.NoError(t, err)
	require.Len(t, r.Subsets, 1)
	assert.Nil(t, r.Overall)
	assert.Equal(t, []string{"alpacaeval", "commoneval", "wildvoice", "sd-qa", "openbookqa", "bbh", "ifeval", "advbench"}, r.Missing)
	md := r.Markdown()
	assert.Contains(t, md, "missing: alpacaeval, commoneval")
	assert.NotContains(t, md, "Latency per stage", "no sample recorded latency")
	assert.NotContains(t, md, "judge/SUBSET.scores.jsonl", "no subset needs a judge")
}

func TestScoreDirErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string][]string
		want  string
	}{
		{"no results", map[string][]string{"notes.txt": {"x"}}, "no results files"},
		{"malformed line", map[string][]string{"mmsu.jsonl": {`{"prompt":"q","reference":"A","response":"A"}`, `{"prompt":`}}, "mmsu.jsonl:2"},
		{"wrong type", map[string][]string{"advbench.jsonl": {`{"prompt":"q","response":7}`}}, "advbench.jsonl:1"},
		{"bbh reference", map[string][]string{"bbh.jsonl": {`{"id":"navigate_1","reference":"maybe","response":"yes"}`}}, `bbh.jsonl:1: bbh reference "maybe"`},
		{"bbh task", map[string][]string{"bbh.jsonl": {`{"id":"date_understanding_1","reference":"yes","response":"yes"}`}}, "names no known task"},
		{"ifeval without instructions", map[string][]string{"ifeval.jsonl": {`{"key":1,"prompt":"p","response":"r"}`}}, "ifeval.jsonl:1: ifeval record has no instruction_id_list"},
		{"judge index", map[string][]string{
			"wildvoice.jsonl":              {`{"prompt":"p","response":"r"}`},
			"judge/wildvoice.scores.jsonl": {`{"index":3,"score":4}`},
		}, "wildvoice.scores.jsonl:1: index missing or out of range"},
		{"judge missing score", map[string][]string{
			"wildvoice.jsonl":              {`{"prompt":"p","response":"r"}`, `{"prompt":"p2","response":"r2"}`},
			"judge/wildvoice.scores.jsonl": {`{"index":0,"score":4}`},
		}, "no score for index 1"},
		{"judge output without rating", map[string][]string{
			"wildvoice.jsonl":              {`{"prompt":"p","response":"r"}`},
			"judge/wildvoice.scores.jsonl": {`{"index":0,"score":"great answer"}`},
		}, `judge output "great answer" has no rating`},
		{"judge score type", map[string][]string{
			"sd-qa.jsonl":              {`{"prompt":"p","reference":"x","response":"r"}`},
			"judge/sd-qa.scores.jsonl": {`{"index":0,"score":{"a":1}}`},
		}, "is not a number, string, boolean or list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ScoreDir(writeFiles(t, tt.files))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}

	_, err := ScoreDir(filepath.Join(t.TempDir(), "absent"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		values   []float64
		p50, p95 float64
	}{
		{[]float64{7}, 7, 7},
		{[]float64{1, 2}, 1.5, 1.95},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, 9.55},
		{[]float64{0, 0, 0, 100}, 0, 85},
	}
	for _, tt := range tests {
		assert.InDelta(t, tt.p50, percentile(tt.values, 50), 1e-9, "%v", tt.values)
		assert.InDelta(t, tt.p95, percentile(tt.values, 95), 1e-9, "%v", tt.values)
	}
	// Found by FuzzParseResults: the difference of these values overflowed,
	// making both percentiles +Inf, which the JSON report cannot hold.
	huge := []float64{-1.5e308, 1.7e308}
	assert.InEpsilon(t, 0.1e308, percentile(huge, 50), 1e-9)
	assert.InEpsilon(t, 1.54e308, percentile(huge, 95), 1e-9)
}

func TestJudgeValue(t *testing.T) {
	tests := []struct {
		kind judgeKind
		raw  string
		want float64
	}{
		{judgeOpen, `4`, 4},
		{judgeOpen, `"4.5"`, 4.5},
		{judgeOpen, `["5", "Rating: [[3]]", 4]`, 4},
		{judgeQA, `"Yes"`, 1},
		{judgeQA, `["yes", "No", "no"]`, 0},
		{judgeQA, `["yes", "no"]`, 0},
		{judgeQA, `[true, true, false]`, 1},
	}
	for _, tt := range tests {
		outs, err := judgeValues(json.RawMessage(tt.raw))
		require.NoError(t, err, tt.raw)
		got, err := judgeValue(tt.kind, outs)
		require.NoError(t, err, tt.raw)
		assert.InDelta(t, tt.want, got, 1e-9, tt.raw)
	}
	_, err := judgeValue(judgeOpen, nil)
	assert.Error(t, err)
	// A rating is 1-5: NaN or infinity would make the report's score NaN
	// (which JSON cannot hold), and 7 a score over 100.
	for _, out := range []string{"NaN", "nan", "Infinity", "-Inf", "0", "7", "5.5", "[[9]] great", "-1"} {
		_, err := judgeValue(judgeOpen, []string{"4", out})
		assert.ErrorContains(t, err, "is not a rating 1-5", out)
	}
}

func TestFlexString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"id":"bbh_1"}`, "bbh_1"},
		{`{"id":17}`, "17"},
		{`{"id":null}`, ""},
		{`{}`, ""},
	}
	for _, tt := range tests {
		var r record
		require.NoError(t, json.Unmarshal([]byte(tt.in), &r))
		assert.Equal(t, tt.want, string(r.ID), tt.in)
	}
	var r record
	assert.Error(t, json.Unmarshal([]byte(`{"id":[1]}`), &r))
}
