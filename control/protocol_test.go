package control

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

	for _, tc := range []struct {
		c    Command
		line string
	}{
		{Command{Op: OpTools, Tools: []ToolDecl{{Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}}},
			`{"v":1,"id":9,"cmd":"tools","tools":[{"name":"take_photo","description":"Takes a photo.","parameters":{"type":"object","properties":{}}}]}`},
		{Command{Op: OpTools}, `{"v":1,"id":9,"cmd":"tools","tools":[]}`},
		{Command{Op: OpToolResult, Call: "call-7", Result: "a red bicycle"}, `{"v":1,"id":9,"cmd":"tool_result","call":"call-7","result":"a red bicycle"}`},
		{Command{Op: OpToolResult, Call: "call-7"}, `{"v":1,"id":9,"cmd":"tool_result","call":"call-7","result":""}`},
		{Command{Op: OpToolResult, Call: "call-7", ToolError: "the camera is off"}, `{"v":1,"id":9,"cmd":"tool_result","call":"call-7","error":"the camera is off"}`},
	} {
		line, err := json.Marshal(tc.c.request(9))
		require.NoError(t, err)
		assert.JSONEq(t, tc.line, string(line))
	}
	call, err := marshalLine(toolCallLine{V: 1, Call: &ToolCall{ID: "call-7", Name: "take_photo", Arguments: json.RawMessage(`{}`)}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"tool_call":{"id":"call-7","name":"take_photo","arguments":{}}}`, string(call))
	cancel, err := marshalLine(toolCallLine{V: 1, Cancel: &ToolCall{ID: "call-7", Name: "take_photo", Cancelled: true}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"tool_cancel":{"id":"call-7","name":"take_photo"}}`, string(cancel))
}

// TestParseToolRequests: the tool commands as lines, read or refused with
// an error that says what was wrong.
func TestParseToolRequests(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Command
		err  string
	}{
		{line: `{"v":1,"id":1,"cmd":"tools","tools":[{"name":"take_photo","description":"Takes a photo.","parameters":{"type":"object"}}]}`,
			want: Command{Op: OpTools, Tools: []ToolDecl{{Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type":"object"}`)}}}},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":[{"name":"battery_level","description":"d"}]}`,
			want: Command{Op: OpTools, Tools: []ToolDecl{{Name: "battery_level", Description: "d"}}}},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":[]}`, want: Command{Op: OpTools}},
		{line: `{"v":1,"id":1,"cmd":"tools"}`, err: `tools takes the host's tools as "tools" ("tools":[{"name":"take_photo"`},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":null}`, err: `tools takes the host's tools as "tools"`},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":{"name":"x"}}`, err: "not a request: json: cannot unmarshal object"},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":[{"name":"x","paramters":{}}]}`, err: `unknown field "paramters"`},
		{line: `{"v":1,"id":1,"cmd":"tools","tools":[],"text":"hi"}`, err: `tools takes the host's tools as "tools" alone, not "text"`},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","result":"82%"}`, want: Command{Op: OpToolResult, Call: "call-7", Result: "82%"}},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","result":""}`, want: Command{Op: OpToolResult, Call: "call-7"}},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","error":"no camera"}`, want: Command{Op: OpToolResult, Call: "call-7", ToolError: "no camera"}},
		{line: `{"v":1,"id":1,"cmd":"tool_result","result":"82%"}`, err: `tool_result names the tool call it answers ("call":"call-7")`},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7"}`, err: `tool_result answers call call-7 with its "result", or with an "error" where the tool failed: one of the two`},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","result":"a","error":"b"}`, err: "one of the two"},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","error":" "}`, err: "the error of call call-7 says nothing"},
		{line: `{"v":1,"id":1,"cmd":"tool_result","call":"call-7","result":"a","args":["b"]}`, err: `tool_result takes "call" and "result" or "error", not "args"`},
		{line: `{"v":1,"id":1,"cmd":"wake","call":"call-7"}`, err: `wake takes no arguments, not "call"`},
		{line: `{"v":1,"id":1,"cmd":"say","text":"hi","result":"x"}`, err: `say takes its words as "text"`},
		{line: `{"v":1,"id":1,"cmd":"talk","args":["start"],"tools":[]}`, err: "talk takes one argument"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			id, c, err := ParseRequest([]byte(tc.line))
			assert.Equal(t, int64(1), id)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				assert.Equal(t, Command{}, c)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c)
		})
	}
}

func TestParseToolArgs(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
		return path
	}
	photo := file("photo.json", `[{"name": "take_photo", "description": "Takes a photo.", "parameters": {"type": "object", "properties": {}}}]`)
	for _, tc := range []struct {
		args []string
		want Command
	}{
		{[]string{"tools", photo}, Command{Op: OpTools, Tools: []ToolDecl{{Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type": "object", "properties": {}}`)}}}},
		{[]string{"tools", file("none.json", "[]\n")}, Command{Op: OpTools}},
		{[]string{"tool-result", "call-7", "a", "red", "bicycle"}, Command{Op: OpToolResult, Call: "call-7", Result: "a red bicycle"}},
		{[]string{"tool-result", "call-7"}, Command{Op: OpToolResult, Call: "call-7"}},
		{[]string{"tool-error", "call-7", "the", "camera", "is", "off"}, Command{Op: OpToolResult, Call: "call-7", ToolError: "the camera is off"}},
	} {
		c, err := ParseArgs(tc.args)
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, c, "%q", tc.args)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"tools"}, "tools takes one file of the host's tools"},
		{[]string{"tools", "a.json", "b.json"}, "tools takes one file of the host's tools"},
		{[]string{"tools", filepath.Join(dir, "absent.json")}, "tools: open " + filepath.Join(dir, "absent.json")},
		{[]string{"tools", file("object.json", `{"name":"take_photo"}`)}, "object.json: json: cannot unmarshal object into Go value of type []control.ToolDecl; it is a JSON list"},
		{[]string{"tools", file("typo.json", `[{"name":"take_photo","paramters":{}}]`)}, `typo.json: json: unknown field "paramters"`},
		{[]string{"tools", file("two.json", `[] []`)}, "two.json: more than one JSON value"},
		{[]string{"tools", file("null.json", `null`)}, "null.json: null; the tools are a list"},
		{[]string{"tool-result"}, "tool-result takes the id of the call it answers, then its text (tool-result call-7 ...)"},
		{[]string{"tool-error", "call-7"}, "the error of call call-7 says nothing"},
	} {
		_, err := ParseArgs(tc.args)
		assert.ErrorContains(t, err, tc.err, "%q", tc.args)
	}
}

// TestParseToolArgsFromStdin: tools - reads the declaration from stdin.
func TestParseToolArgsFromStdin(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdin := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = stdin; r.Close() })
	_, err = w.WriteString(`[{"name":"battery_level","description":"The battery, in percent."}]`)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	c, err := ParseArgs([]string{"tools", "-"})
	require.NoError(t, err)
	assert.Equal(t, Command{Op: OpTools, Tools: []ToolDecl{{Name: "battery_level", Description: "The battery, in percent."}}}, c)
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
		{[]string{"wake", "up"}, `wake takes no arguments, not "args"`},
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
		`{"v":1,"id":3,"cmd":"tools","tools":[{"name":"take_photo","description":"d","parameters":{ "type" : "object", "x": "<&>" }}]}`,
		`{"v":1,"id":3,"cmd":"tools","tools":[{"name":"n","description":"d","parameters":null},null]}`,
		`{"v":1,"id":3,"cmd":"tools","tools":[]}`,
		`{"v":1,"id":4,"cmd":"tool_result","call":"call-7","result":""}`,
		`{"v":1,"id":4,"cmd":"tool_result","call":"call-7","error":"no camera"}`,
		`{"v":1,"id":4,"cmd":"tool_result","call":"call-7","error":""}`,
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
		assert.Equal(t, wireForm(t, c), wireForm(t, c2))
	})
}

// wireForm is c with its tools' parameters as a line carries them:
// compacted, and escaped as encoding/json escapes HTML. The server passes
// a schema on as the client wrote it; only its spelling changes on the
// way.
func wireForm(t *testing.T, c Command) Command {
	c.Tools = slices.Clone(c.Tools)
	for i, d := range c.Tools {
		if d.Parameters == nil {
			continue
		}
		var compact, escaped bytes.Buffer
		require.NoError(t, json.Compact(&compact, d.Parameters))
		json.HTMLEscape(&escaped, compact.Bytes())
		c.Tools[i].Parameters = escaped.Bytes()
	}
	return c
}
