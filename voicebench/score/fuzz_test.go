package score

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseResults feeds parseResults, the reader of OUT/SUBSET.jsonl,
// with damaged results files. An error must name file:line; a file that
// parses gives one sample per non-blank line, in order, and latency
// spreads that lie within the values they summarize.
func FuzzParseResults(f *testing.F) {
	fixtures, err := filepath.Glob("testdata/fixtures/*.jsonl")
	require.NoError(f, err, "no fixtures")
	require.NotEmpty(f, fixtures, "no fixtures")
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		lines := bytes.SplitAfter(data, []byte("\n"))
		f.Add(bytes.Join(lines[:min(len(lines), 3)], nil))
	}
	for _, s := range []string{
		`{"sample_id":"usa/q1","id":17,"prompt":"p","reference":"paris","response":"Paris.","latency_ms":{"endpoint":12.5,"asr_final":30,"first_audio":null}}` + "\n" +
			`{"sample_id":"usa/q2","id":"q2","response":"","error":"timeout","latency_ms":{"endpoint":1e308,"asr_final":-1e308}}` + "\r\n\n",
		`{"latency_ms":{"end_to_end":-1.5e308}}` + "\n" + `{"latency_ms":{"end_to_end":1.7e308}}`,
		`{"prompt":"q","reference":"A","response":"A"}` + "\n" + `{"prompt":`,
		`{"prompt":"q","response":7}`, `{"id":[1]}`, `{"latency_ms":{"x":"fast"}}`, "  \n\t\n", "null\n[]\n",
		`{"key":1,"instruction_id_list":["keywords:existence"],"kwargs":[{"keywords":["a"]},null]}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := parseResults(bytes.NewReader(data), "x.jsonl")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "x.jsonl:"), "error %q does not name the file", err)
			return
		}
		lines := 0
		for _, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) > 0 {
				lines++
			}
		}
		require.Len(t, samples, lines, "%d samples from %d lines", len(samples), lines)
		for i, s := range samples {
			require.Equal(t, "x.jsonl", s.file, "sample %d at %s", i, s.where())
			require.GreaterOrEqual(t, s.line, 1, "sample %d at %s", i, s.where())
			if i > 0 {
				require.Greater(t, s.line, samples[i-1].line, "sample %d at %s", i, s.where())
			}
		}
		for stage, l := range latencies(samples) {
			lo, hi := math.Inf(1), math.Inf(-1)
			n := 0
			for _, s := range samples {
				if v := s.rec.LatencyMS[stage]; v != nil {
					lo, hi, n = min(lo, *v), max(hi, *v), n+1
				}
			}
			require.Equal(t, n, l.N, "stage %s: %+v from %d values in [%v, %v]", stage, l, n, lo, hi)
			require.True(t, lo <= l.P50 && l.P50 <= l.P95 && l.P95 <= hi, "stage %s: %+v from %d values in [%v, %v]", stage, l, n, lo, hi)
		}
	})
}

// FuzzJudgeScores feeds parseJudgeScores, the reader of the judge's
// verdicts (judge/SUBSET.scores.jsonl), with damaged files, for n
// exported samples of an open-ended (1-5 rating) or QA (yes/no) subset.
// An error must name file:line; a file that parses gives a value per
// sample it scores: a mean rating within 1..5, or 0 or 1.
func FuzzJudgeScores(f *testing.F) {
	for _, tc := range []struct {
		data string
		n    uint8
		qa   bool
	}{
		{`{"index":0,"score":["5","4","[[3]] because"]}` + "\n" + `{"index":1,"score":3}`, 2, false},
		{`{"index":0,"score":[5,5,5]}`, 1, false},
		{`{"index":0,"score":"2"}` + "\n\n", 3, false},
		{`{"index":1,"score":["Yes","yes","No"]}` + "\n" + `{"index":0,"score":["No","Yes","no"]}`, 2, true},
		{`{"index":0,"score":[true,[false,"yes"]]}`, 1, true},
		{`{"index":3,"score":4}`, 1, false},
		{`{"index":0,"score":"great answer"}`, 1, false},
		{`{"index":0,"score":{"a":1}}`, 1, true},
		{`{"index":0,"score":"NaN"}`, 1, false},
		{`{"index":0,"score":[]}`, 1, false},
		{`{"score":4}`, 1, false},
		{`{"index":-1,"score":4}`, 0, false},
	} {
		f.Add([]byte(tc.data), tc.n, tc.qa)
	}

	f.Fuzz(func(t *testing.T, data []byte, n uint8, qa bool) {
		kind := judgeOpen
		if qa {
			kind = judgeQA
		}
		values, err := parseJudgeScores(bytes.NewReader(data), "judge/x.scores.jsonl", kind, int(n))
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "judge/x.scores.jsonl:"), "error %q does not name the file", err)
			return
		}
		require.Len(t, values, int(n), "%d values for %d samples", len(values), n)
		for i, v := range values {
			switch {
			case v == nil:
			case kind == judgeQA:
				require.Contains(t, []float64{0, 1}, *v, "sample %d: QA value %v", i, *v)
			case kind == judgeOpen:
				require.True(t, *v >= 1 && *v <= 5, "sample %d: mean rating %v", i, *v)
			}
		}
	})
}
