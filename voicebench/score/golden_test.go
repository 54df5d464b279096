package score

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden files hold VoiceBench's own evaluators' verdicts on the
// fixtures; testdata/reference.py says how they were made.

type golden[T any] struct {
	PerSample []T                `json:"per_sample"`
	Summary   map[string]float64 `json:"summary"`
}

func readGolden(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func readFixture(t *testing.T, name string) []sample {
	t.Helper()
	s, err := readResults(filepath.Join("testdata", "fixtures", name+".jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, s)
	return s
}

func TestGoldenMCQ(t *testing.T) {
	for _, name := range []string{"mmsu", "openbookqa"} {
		t.Run(name, func(t *testing.T) {
			samples := readFixture(t, name)
			var g golden[*string]
			readGolden(t, name, &g)
			require.Len(t, g.PerSample, len(samples))
			for i, s := range samples {
				want := ""
				if g.PerSample[i] != nil {
					want = *g.PerSample[i]
				}
				assert.Equal(t, want, extractChoice(s.rec.Response), "%s response %q", s.where(), s.rec.Response)
			}
			res, err := scoreMCQ(samples)
			require.NoError(t, err)
			n := float64(len(samples))
			assert.InDelta(t, g.Summary["acc"], 100*float64(res.correct)/n, 1e-9)
			assert.InDelta(t, g.Summary["fail"], 100*float64(res.unmatched)/n, 1e-9)
		})
	}
}

func TestGoldenBBH(t *testing.T) {
	samples := readFixture(t, "bbh")
	var g golden[*int]
	readGolden(t, "bbh", &g)
	require.Len(t, g.PerSample, len(samples))
	for i, s := range samples {
		want := -1
		if g.PerSample[i] != nil {
			want = *g.PerSample[i]
		}
		got, err := extractBBH(s.rec.Response, string(s.rec.ID))
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s id %s response %q", s.where(), s.rec.ID, s.rec.Response)
	}
	res, err := scoreBBH(samples)
	require.NoError(t, err)
	assert.InDelta(t, g.Summary["acc"], 100*float64(res.correct)/float64(len(samples)), 1e-9)
}

func TestGoldenAdvbench(t *testing.T) {
	samples := readFixture(t, "advbench")
	var g golden[bool]
	readGolden(t, "advbench", &g)
	require.Len(t, g.PerSample, len(samples))
	for i, s := range samples {
		assert.Equal(t, g.PerSample[i], refused(s.rec.Response), "%s response %q", s.where(), s.rec.Response)
	}
	res, err := scoreRefusal(samples)
	require.NoError(t, err)
	assert.InDelta(t, g.Summary["refusal_rate"], float64(res.correct)/float64(len(samples)), 1e-9)
}

func TestGoldenIFEval(t *testing.T) {
	samples := readFixture(t, "ifeval")
	var g golden[struct{ Strict, Loose []bool }]
	readGolden(t, "ifeval", &g)
	require.Len(t, g.PerSample, len(samples))
	for i, s := range samples {
		strict, loose, unsupported, err := ifevalVerdicts(s.rec)
		require.NoError(t, err)
		assert.Zero(t, unsupported, s.where())
		assert.Equal(t, g.PerSample[i].Strict, strict, "strict: %s %v response %q", s.where(), s.rec.InstructionIDList, s.rec.Response)
		assert.Equal(t, g.PerSample[i].Loose, loose, "loose: %s %v response %q", s.where(), s.rec.InstructionIDList, s.rec.Response)
	}
	res, err := scoreIFEval(samples)
	require.NoError(t, err)
	f := res.ifeval
	for key, got := range map[string]float64{
		"strict-prompt": f.PromptStrict, "strict-instruction": f.InstructionStrict,
		"loose-prompt": f.PromptLoose, "loose-instruction": f.InstructionLoose, "final": f.Mean,
	} {
		assert.InDelta(t, 100*g.Summary[key], got, 1e-9, key)
	}
}

// TestGoldenTexts compares the text measures IFEval relies on with NLTK's
// and langdetect's on the same texts: plain ones, and word salad of
// abbreviations, numbers, quotes and punctuation.
func TestGoldenTexts(t *testing.T) {
	for _, name := range []string{"texts", "texts_random"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name+".jsonl"))
			require.NoError(t, err)
			var texts []string
			for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
				var v struct{ Text string }
				require.NoError(t, json.Unmarshal(line, &v))
				texts = append(texts, v.Text)
			}
			var g []struct {
				Sentences, Words int
				Tokens           []string
				Language         *string
			}
			readGolden(t, name, &g)
			require.Len(t, g, len(texts))
			for i, text := range texts {
				s, err := splitSentences(text)
				require.NoError(t, err)
				assert.Len(t, s, g[i].Sentences, "sentences of %q: %q", text, s)
				assert.Equal(t, g[i].Words, countWords(text), "words of %q", text)
				tokens, err := wordTokenize(text)
				require.NoError(t, err)
				if len(g[i].Tokens) == 0 {
					assert.Empty(t, tokens)
				} else {
					assert.Equal(t, g[i].Tokens, tokens, "tokens of %q", text)
				}
				if want := g[i].Language; want != nil {
					lang, err := detectLanguage(text)
					require.NoError(t, err)
					assert.Equal(t, *want, lang, "language of %q", text)
				}
			}
		})
	}
}

// TestFixtureCoverage keeps the fixtures covering every answer template,
// refusal phrase and IFEval instruction type this package implements.
func TestFixtureCoverage(t *testing.T) {
	responses := func(name string) string {
		var b strings.Builder
		for _, s := range readFixture(t, name) {
			b.WriteString(strings.ToLower(s.rec.Response) + "\n")
		}
		return b.String()
	}

	mmsu := responses("mmsu")
	for _, tpl := range mcqTemplates {
		found := false
		for _, c := range mcqChoices {
			found = found || strings.Contains(mmsu, strings.ReplaceAll(tpl, "[CHOICE]", c))
		}
		assert.True(t, found, "no mmsu fixture for template %q", tpl)
	}

	adv := responses("advbench")
	for _, p := range refusalPhrases {
		assert.Contains(t, adv, p)
	}

	ids := map[string]bool{}
	for _, s := range readFixture(t, "ifeval") {
		for _, id := range s.rec.InstructionIDList {
			ids[id] = true
		}
	}
	for id := range instructions {
		assert.True(t, ids[id], "no ifeval fixture for %s", id)
	}
	assert.Len(t, instructions, 25)

	samples := readFixture(t, "bbh")
	var g golden[*int]
	readGolden(t, "bbh", &g)
	for _, task := range bbhTasks {
		hits := map[int]bool{}
		for i, s := range samples {
			if strings.Contains(string(s.rec.ID), task.name) && g.PerSample[i] != nil {
				hits[*g.PerSample[i]] = true
			}
		}
		assert.Equal(t, map[int]bool{0: true, 1: true}, hits, "bbh fixtures for %s should hit both answers", task.name)
	}
}
