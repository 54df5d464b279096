package score

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Where the reference would draw random arguments (or crash), the
// instruction is counted as unsupported and not followed.
func TestIFEvalUnsupported(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		kwargs string
	}{
		{"unknown id", "detectable_format:rephrase", `{}`},
		{"missing count", "length_constraints:number_words", `{"relation":"at least"}`},
		{"zero count is dropped like None", "length_constraints:number_sentences", `{"num_sentences":0,"relation":"less than"}`},
		{"negative count", "detectable_content:number_placeholders", `{"num_placeholders":-1}`},
		{"fractional count", "detectable_format:number_bullet_lists", `{"num_bullets":2.5}`},
		{"missing relation", "keywords:frequency", `{"keyword":"cat","frequency":2}`},
		{"bad relation", "change_case:capital_word_frequency", `{"capital_frequency":2,"capital_relation":"at most"}`},
		{"two letters", "keywords:letter_frequency", `{"letter":"ab","let_frequency":1,"let_relation":"at least"}`},
		{"not a letter", "keywords:letter_frequency", `{"letter":"1","let_frequency":1,"let_relation":"at least"}`},
		{"nth beyond paragraphs", "length_constraints:nth_paragraph_first_word", `{"num_paragraphs":2,"nth_paragraph":3,"first_word":"so"}`},
		{"no first word", "length_constraints:nth_paragraph_first_word", `{"num_paragraphs":2,"nth_paragraph":1}`},
		{"no keywords", "keywords:existence", `{"keywords":[]}`},
		{"keyword not a string", "keywords:forbidden_words", `{"forbidden_words":[1]}`},
		{"invalid keyword regexp", "keywords:existence", `{"keywords":["(unclosed"]}`},
		{"no prompt to repeat", "combination:repeat_prompt", `{"prompt_to_repeat":""}`},
		{"no language", "language:response_language", `{"language":null}`},
		{"no end phrase", "startend:end_checker", `{}`},
		{"no marker", "detectable_content:postscript", `{}`},
		{"no splitter", "detectable_format:multiple_sections", `{"num_sections":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kw map[string]any
			require.NoError(t, json.Unmarshal([]byte(tt.kwargs), &kw))
			rec := record{
				InstructionIDList: []string{tt.id, "punctuation:no_comma"},
				Kwargs:            []map[string]any{kw, {}},
				Response:          "so cat cat. [x] 1 a",
			}
			strict, loose, unsupported, err := ifevalVerdicts(rec)
			require.NoError(t, err)
			assert.Equal(t, 1, unsupported)
			assert.Equal(t, []bool{false, true}, strict)
			assert.Equal(t, []bool{false, true}, loose)
		})
	}
}

func TestIFEvalMissingKwargs(t *testing.T) {
	rec := record{InstructionIDList: []string{"punctuation:no_comma", "startend:quotation"}, Kwargs: []map[string]any{{}}, Response: `"quoted"`}
	strict, _, unsupported, err := ifevalVerdicts(rec)
	require.NoError(t, err)
	assert.Equal(t, 1, unsupported)
	assert.Equal(t, []bool{true, false}, strict)
}

func TestIFEvalFailedSample(t *testing.T) {
	samples := []sample{
		{rec: record{InstructionIDList: []string{"punctuation:no_comma"}, Kwargs: []map[string]any{{}}, Response: "fine", Error: "asr timeout"}},
		{rec: record{InstructionIDList: []string{"punctuation:no_comma"}, Kwargs: []map[string]any{{}}, Response: "fine"}},
	}
	res, err := scoreIFEval(samples)
	require.NoError(t, err)
	assert.Equal(t, 1, res.errors)
	assert.Equal(t, 1, res.scored)
	assert.InDelta(t, 50, res.ifeval.Mean, 1e-9)
}
