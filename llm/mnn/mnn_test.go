package mnn

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// The pipeline tells the model of its tools through llm.ToolUser, with
// MNN or without.
var _ llm.ToolUser = (*Model)(nil)

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
		// As Qwen3 starts a reply when told /no_think.
		{"an empty thinking is dropped", []string{"<think>\n\n</think>\n\n", "你", "好"}, []string{"你", "好"}},
		{"thinking over pieces that split a tag and a character", []string{"<th", "ink>\xe6\x83", "\xb3</th", "ink>\n\xe5\xa5", "\xbd"}, []string{"好"}},
		{"unclosed thinking at the end", []string{"Hi.", "<think>", "hmm"}, []string{"Hi."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := newStream(func(p string) error { got = append(got, p); return nil })
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
	s := newStream(func(string) error { calls++; return assert.AnError })
	s.write([]byte("a"))
	s.write([]byte("b"))
	assert.ErrorIs(t, s.flush(), assert.AnError)
	assert.Equal(t, 1, calls)
}

func TestStepTokensFitTheBudget(t *testing.T) {
	for _, tc := range []struct {
		took  time.Duration
		batch int
		want  int
	}{
		{30 * time.Millisecond, 1, 1},    // a real model on a device: one token a call
		{time.Millisecond, 1, 5},         // 1 ms a token: five fit in 5 ms
		{5 * time.Millisecond, 50, 50},   // 0.1 ms a token
		{time.Millisecond, 100, maxStep}, // very fast: bounded
		{0, 1, maxStep},                  // too fast to time
		{200 * time.Millisecond, 64, 1},  // a slow batch goes back to one
	} {
		assert.Equal(t, tc.want, stepTokens(tc.took, tc.batch), "%v for %d", tc.took, tc.batch)
	}
}

// The second decoding call of a reply is one token long whatever the
// first step took (its text came after sampling alone); from then on each
// call is sized by the time between two steps' texts, which spans the
// call before's tokens.
func TestPaceSizesCallsFromTheTokensBetweenTexts(t *testing.T) {
	var p pace
	at := time.Unix(0, 0)
	assert.Equal(t, 1, p.next(at, 1), "after the first text, sampled in no time")
	at = at.Add(40 * time.Millisecond) // a real model's token
	assert.Equal(t, 1, p.next(at, 1))
	at = at.Add(40 * time.Millisecond)
	assert.Equal(t, 1, p.next(at, 1))

	var fast pace
	at = time.Unix(0, 0)
	assert.Equal(t, 1, fast.next(at, 1))
	at = at.Add(100 * time.Microsecond) // the tiny model's token
	assert.Equal(t, 50, fast.next(at, 1))
	at = at.Add(100 * time.Microsecond) // the second call's one token
	assert.Equal(t, 50, fast.next(at, 50))
	at = at.Add(50 * 100 * time.Microsecond) // the third call's 50
	assert.Equal(t, 50, fast.next(at, 50))
	at = at.Add(50 * 400 * time.Microsecond) // slower now
	assert.Equal(t, 12, fast.next(at, 12))
}

func TestPrefillTokensFitTheBudget(t *testing.T) {
	for _, tc := range []struct {
		took  time.Duration
		batch int
		want  int
	}{
		{70 * time.Millisecond, 8, minPrefill},  // MNN-Pocket on two x86 cores
		{8 * time.Millisecond, 8, 50},           // a device ten times faster
		{50 * time.Millisecond, 8, 8},           // just fits
		{100 * time.Microsecond, 8, maxPrefill}, // the tiny model: bounded
		{0, minPrefill, maxPrefill},             // too fast to time
	} {
		assert.Equal(t, tc.want, prefillTokens(tc.took, tc.batch), "%v for %d", tc.took, tc.batch)
	}
}

func TestDefaultThreadsLeaveACore(t *testing.T) {
	for cores, want := range map[int]int{1: 1, 2: 1, 4: 3, 8: 4, 64: 4} {
		assert.Equal(t, want, defaultThreads(cores), "%d cores", cores)
	}
}

// use_mmap with the model's own tmp_path: MNN sets tmp_path as the
// weights' external dir when use_mmap is on (alibaba/MNN
// transformers/llm/engine/src/llm.cpp:214-216) and reuses what it wrote
// there (use_cached_mmap, on by default: llm.cpp:195-197).
func TestEngineSettings(t *testing.T) {
	c := Config{Threads: 2, MaxNewTokens: 64, Settings: map[string]any{"sampler_type": "greedy", "thread_num": 3}}
	assert.Equal(t, map[string]any{
		"thread_num": 3, "max_new_tokens": 64, "reuse_kv": true, "async": false, "prompt_cache": false, "use_mmap": true, "tmp_path": "/tmp/x", "sampler_type": "greedy",
		"jinja": map[string]any{"context": map[string]any{"enable_thinking": false}},
	}, c.engineSettings("/tmp/x"), "explicit settings win over the defaults")
	heap := c.engineSettings("")
	assert.Equal(t, false, heap["use_mmap"], "no pool: the weights on the heap")
	assert.NotContains(t, heap, "tmp_path")
	assert.Equal(t, 64, c.maxNewTokens())
	assert.Equal(t, 512, Config{}.maxNewTokens())
}

// Thinking is off unless Settings turn it on; Settings that give the
// template's context something else keep it off. What is given again
// after loading is the template's context alone.
func TestTemplateContext(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
		want     map[string]any
	}{
		{"default", `{}`, map[string]any{"enable_thinking": false}},
		{"thinking on", `{"jinja": {"context": {"enable_thinking": true}}}`, map[string]any{"enable_thinking": true}},
		{"other context", `{"jinja": {"context": {"tools": []}}}`, map[string]any{"enable_thinking": false, "tools": []any{}}},
		{"a chat template of one's own", `{"jinja": {"chat_template": "{{ messages }}"}}`, map[string]any{"enable_thinking": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var settings map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.settings), &settings))
			again, ok := templateSettings(Config{Settings: settings}.engineSettings(""))
			require.True(t, ok)
			assert.Equal(t, map[string]any{"jinja": map[string]any{"context": tc.want}}, again)
		})
	}
	_, ok := templateSettings(Config{Settings: map[string]any{"jinja": nil}}.engineSettings(""))
	assert.False(t, ok, "settings that drop the template's settings: nothing to give again")
}

func TestMissingModelDirectory(t *testing.T) {
	_, err := Config{Dir: "/nonexistent/mnn-pocket"}.configPath()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/mnn-pocket")
	assert.Contains(t, err.Error(), "llm.mnn")
}
