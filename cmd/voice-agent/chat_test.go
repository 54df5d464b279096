package main

import (
	"bufio"
	"io"
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
