package mnn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStreamReassemblesUTF8(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		want   []string
	}{
		{"ascii passes through", []string{"Hel", "lo"}, []string{"Hel", "lo"}},
		{"a character split over two tokens", []string{"你", "\xe5\xa5", "\xbd!"}, []string{"你", "好!"}},
		{"split after the first byte", []string{"\xe4", "\xbd\xa0"}, []string{"你"}},
		{"emoji over three tokens", []string{"a\xf0\x9f", "\x98", "\x80b"}, []string{"a", "😀b"}},
		{"a broken tail is repaired at the end", []string{"ok\xe4\xbd"}, []string{"ok", "\ufffd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := &stream{emit: func(p string) error { got = append(got, p); return nil }}
			for _, p := range tc.pieces {
				s.write([]byte(p))
			}
			require.NoError(t, s.flush())
			assert.Equal(t, tc.want, got)
			for _, g := range got {
				assert.True(t, strings.ToValidUTF8(g, "") == g || strings.Contains(g, "\ufffd"))
			}
		})
	}
}

func TestStreamStopsOnEmitError(t *testing.T) {
	calls := 0
	s := &stream{emit: func(string) error { calls++; return assert.AnError }}
	s.write([]byte("a"))
	s.write([]byte("b"))
	assert.ErrorIs(t, s.flush(), assert.AnError)
	assert.Equal(t, 1, calls)
}

// Text generated after a reply was stopped is not emitted, but it is part
// of the text the engine is told its KV cache holds, with any half
// character left before it.
func TestStreamRecordsUnsaidText(t *testing.T) {
	var emitted []string
	s := &stream{emit: func(p string) error { emitted = append(emitted, p); return nil }}
	s.write([]byte("ab\xe4\xbd"))
	s.unsaid([]byte("\xa0cd"))
	assert.Equal(t, []string{"ab"}, emitted)
	assert.Equal(t, "ab你cd", s.text.String())
}

func TestEngineSettings(t *testing.T) {
	c := Config{Threads: 2, MaxNewTokens: 64, Settings: map[string]any{"sampler_type": "greedy", "thread_num": 3}}
	js, err := c.engineSettings("/tmp/x")
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(js), &got))
	assert.Equal(t, map[string]any{
		"thread_num": 3.0, "max_new_tokens": 64.0, "reuse_kv": true, "async": false, "prompt_cache": true, "tmp_path": "/tmp/x", "sampler_type": "greedy",
	}, got, "explicit settings win over the defaults")
	assert.Equal(t, 64, c.maxNewTokens())
	assert.Equal(t, 512, Config{}.maxNewTokens())
}

func TestMissingModelDirectory(t *testing.T) {
	_, err := Config{Dir: "/nonexistent/mnn-pocket"}.configPath()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/mnn-pocket")
	assert.Contains(t, err.Error(), "llm.mnn")
}
