package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Capture gaps are warned about at once, then at most once per
// gapWarnEvery of session time, each line counting the gaps since the
// last one.
func TestGapWarner(t *testing.T) {
	type gap struct{ at, lost time.Duration }
	type line struct {
		At     time.Duration `json:"at"`
		Gaps   int           `json:"gaps"`
		LostMS int64         `json:"lost_ms"`
	}
	ms := time.Millisecond
	tests := []struct {
		name string
		gaps []gap
		want []line
	}{
		{"one gap", []gap{{1200 * ms, 400 * ms}}, []line{{1200 * ms, 1, 400}}},
		{"a burst is one line", []gap{{time.Second, 100 * ms}, {2 * time.Second, 60 * ms}, {10 * time.Second, 70 * ms}},
			[]line{{time.Second, 1, 100}}},
		{"the next line counts what it held back",
			[]gap{{time.Second, 100 * ms}, {2 * time.Second, 60 * ms}, {10 * time.Second, 70 * ms}, {11 * time.Second, 80 * ms}, {12 * time.Second, 90 * ms}},
			[]line{{time.Second, 1, 100}, {11 * time.Second, 3, 210}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := newLogger(&buf, "warn", "json")
			require.NoError(t, err)
			w := &gapWarner{log: log}
			for _, g := range tc.gaps {
				w.gap(g.at, g.lost)
			}
			var got []line
			for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var v line
				require.NoError(t, json.Unmarshal([]byte(l), &v), l)
				assert.Contains(t, l, `"level":"WARN"`)
				assert.Contains(t, l, "microphone audio lost")
				got = append(got, v)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
