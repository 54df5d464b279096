package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A typed line is read whatever its length, past bufio's buffer; what is
// kept of it is bounded, cut back to a whole character, and the next line
// starts where it should.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("a", 10_000)
	for _, tc := range []struct {
		name, input string
		max         int
		want        []string
		cut         []bool
	}{
		{"short lines", "hello\nworld\n", 100, []string{"hello", "world"}, []bool{false, false}},
		{"past the reader's buffer", long + "\nnext\n", 20_000, []string{long, "next"}, []bool{false, false}},
		{"past max", long + "\nnext\n", 100, []string{long[:100], "next"}, []bool{true, false}},
		{"past max inside a character", "一二三四五\n六\n", 10, []string{"一二三", "六"}, []bool{true, false}},
		{"the last line without its newline", "a\nb", 10, []string{"a", "b"}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bufio.NewReaderSize(strings.NewReader(tc.input), 16)
			for i, want := range tc.want {
				text, cut, err := readLine(in, tc.max)
				if err != nil {
					require.ErrorIs(t, err, io.EOF)
				}
				assert.Equal(t, want, text)
				assert.Equal(t, tc.cut[i], cut)
				assert.True(t, utf8.ValidString(text))
			}
			text, _, err := readLine(in, tc.max)
			assert.Empty(t, text)
			assert.ErrorIs(t, err, io.EOF)
		})
	}
}

// readLines gives the lines and then the input's end, and stop ends its
// goroutine even when nobody takes the next line.
func TestReadLines(t *testing.T) {
	lines, stop := readLines(strings.NewReader("one\n\ntwo"))
	for _, want := range []string{"one", "", "two"} {
		l := <-lines
		require.NoError(t, l.err)
		assert.Equal(t, want, l.text)
	}
	assert.ErrorIs(t, (<-lines).err, io.EOF)
	stop()

	_, stop = readLines(strings.NewReader("never taken\n"))
	stop() // goleak checks the goroutine ended
}

// `chat --tools` with the scripted LLM shows a tool round trip: the call
// and its result on a line of their own, the answer from the result, and
// never the call's markup; a tool the registry lacks gets an apology. The
// script (test/testdata/tools.json) is the one docs/running.md shows.
func TestChatToolRoundTrip(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	a := newApp()
	root := a.root()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetIn(strings.NewReader("what time is it\nset a tea timer for five minutes\n记住我的车停在三层\ntake a selfie\n"))
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	root.SetArgs([]string{"chat", "--tools", "--llm", "scripted", "--script", filepath.Join("..", "..", "test", "testdata", "tools.json"), "--config", empty})
	require.NoError(t, root.Execute())
	got := out.String()
	assert.Regexp(t, `\[tool get_time \{\} → \{"time":"[0-9:]+","date":"[0-9-]+",`, got)
	assert.Regexp(t, `It is [0-9]{2}:[0-9]{2} on [A-Z][a-z]+day\.`, got)
	assert.Contains(t, got, `[tool timer {"action": "set", "seconds": 300, "label": "tea"} → {"id":1,`)
	assert.Contains(t, got, "Your tea timer runs for five minutes.")
	assert.Contains(t, got, `[tool note {"action": "remember", "text": "我的车停在三层"} → {"remembered":"我的车停在三层"`)
	assert.Contains(t, got, "好的，记住了。")
	assert.Contains(t, got, "[tool take_a_selfie {} failed: no such tool \"take_a_selfie\"]")
	assert.Contains(t, got, "Sorry, I couldn't do that.")
	assert.NotContains(t, got, "<tool_call>")
}
