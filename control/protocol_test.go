package control

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWireShape pins the lines a client sees, as docs/control.md shows
// them.
func TestWireShape(t *testing.T) {
	line, err := json.Marshal(Command{Op: OpTalkStart}.request(7))
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"id":7,"cmd":"talk","args":["start"]}`, string(line))
	line, err = json.Marshal(Command{Op: OpSay, Text: "下午好"}.request(8))
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"id":8,"cmd":"say","text":"下午好"}`, string(line))
	assert.JSONEq(t, `{"v":1,"id":7,"ok":true}`, string(mustLine(answer{V: 1, ID: 7, OK: true})))
	event, err := marshalLine(eventLine{V: 1, Event: map[string]string{"type": "state"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"event":{"type":"state"}}`, string(event))
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "no command; commands: " + Usage},
		{[]string{"talk"}, "talk takes one argument, start, stop or toggle"},
		{[]string{"talk", "start", "now"}, "talk takes one argument"},
		{[]string{"say"}, `say takes its words as "text"`},
		{[]string{"say", "  "}, `say takes its words as "text"`},
		{[]string{"wake", "up"}, "wake takes no arguments"},
		{[]string{"tlak", "start"}, `unknown command "tlak"`},
	} {
		_, err := ParseArgs(tc.args)
		assert.ErrorContains(t, err, tc.err, "%q", tc.args)
	}
}

// FuzzParseRequest: any line is a command or an error, never a panic, and
// a command read from a line is the one its own request line reads as.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		`{"v":1,"id":7,"cmd":"talk","args":["start"]}`,
		`{"v":1,"id":8,"cmd":"say","text":"Hello there"}`,
		`{"v":1,"id":9,"cmd":"say","text":"你好，今天天气怎么样？"}`,
		`{"v":1,"cmd":"status"}`,
		`{"v":2,"id":1,"cmd":"wake"}`,
		`{"v":1,"id":1,"cmd":"say","text":"a","args":["b"]}`,
		`{"v":1,"id":-1,"cmd":"talk","args":[null]}`,
		`{"v":1e400}`,
		`{"v":1,"id":1,"cmd":"mute"}{"v":1}`,
		"\xff\xfe",
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, c, err := ParseRequest(line)
		if err != nil {
			assert.Equal(t, Command{}, c)
			return
		}
		again, err := json.Marshal(c.request(id))
		require.NoError(t, err)
		id2, c2, err := ParseRequest(again)
		require.NoError(t, err)
		assert.Equal(t, id, id2)
		assert.Equal(t, c, c2)
	})
}
