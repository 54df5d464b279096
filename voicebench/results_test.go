package voicebench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDone(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		done       []string
		complete   int
		err        string
	}{
		{"empty", "", nil, 0, ""},
		{"two results", "{\"sample_id\":\"0\"}\n\n{\"sample_id\":\"usa/1\",\"response\":\"x\"}\n", []string{"0", "usa/1"}, 56, ""},
		{"a partial last line", "{\"sample_id\":\"0\"}\n{\"sample_id\":\"1\",\"resp", []string{"0"}, 18, ""},
		{"no sample_id", "{\"prompt\":\"x\"}\n", nil, 0, `line 1: no "sample_id"`},
		{"a null sample_id", "{\"sample_id\":null}\n", nil, 0, `line 1: no "sample_id"`},
		{"a number", "{\"sample_id\":\"0\"}\n{\"sample_id\":7}\n", nil, 0, `line 2: "sample_id": json: cannot unmarshal number`},
		{"not an object", "null\n", nil, 0, `line 1: no "sample_id"`},
		{"garbage", "not json\n", nil, 0, "line 1: invalid character"},
		// Found by FuzzParseDone: keys matched in any case, as struct
		// fields are, so this line counted as sample "" being done.
		{"a key that differs in case", "{\"sAmple_id\":\"\"}\n", nil, 0, `line 1: no "sample_id"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, complete, err := parseDone("out/x.jsonl", []byte(tc.data))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "out/x.jsonl "+tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.complete, complete)
			want := map[string]bool{}
			for _, id := range tc.done {
				want[id] = true
			}
			assert.Equal(t, want, done)
		})
	}
}
