// Package control is the agent's control socket: a Unix socket over which
// the host around the assistant (the glasses' firmware, a companion app,
// `voice-agent ctl`) sends commands and reads the session's events, as
// JSON lines. docs/control.md describes the wire and why it has this shape.
//
// The package knows nothing of the pipeline: a request becomes a Command,
// which the server hands to a Handler; the front end that runs the
// session maps it onto the pipeline's own command. Nor of the tools: the
// host's tools are ToolDecls and their calls ToolCalls, of the fields of
// llm.ToolSpec and tools.HostCall, which the front end converts.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Version is the protocol's version, which every line carries as "v". A
// change that an old client could misread (a field that changes meaning)
// takes a new version; new commands and new fields do not.
const Version = 1

// MaxLine is the longest request line a server reads, newline included: a
// say of several paragraphs fits many times over, and a client that sends
// more is broken or hostile.
const MaxLine = 64 << 10

// Op names a command. Its values are those of the pipeline's commands
// (pipeline.Op) where there is one, so the mapping is a conversion.
type Op string

const (
	OpTalkStart  Op = "talk_start"
	OpTalkStop   Op = "talk_stop"
	OpTalkToggle Op = "talk_toggle"
	OpWake       Op = "wake"
	OpMute       Op = "mute"
	OpUnmute     Op = "unmute"
	OpCancel     Op = "cancel"
	OpSay        Op = "say"
	// OpStatus asks what the session is doing; the handler answers it
	// without the pipeline.
	OpStatus Op = "status"
	// OpTools declares the host's tools (Command.Tools), in place of those
	// it declared before; none withdraws them. The handler answers it
	// without the pipeline, as it does OpToolResult.
	OpTools Op = "tools"
	// OpToolResult answers one of the server's tool calls (SendToolCall).
	OpToolResult Op = "tool_result"
)

// Command is a request as the handler gets it.
type Command struct {
	Op Op
	// Text is what OpSay speaks.
	Text string
	// Tools are what OpTools declares (nil for none).
	Tools []ToolDecl
	// Call is the id of the tool call that OpToolResult answers, with
	// Result, or, where ToolError is not empty, with the host's word that
	// the tool failed.
	Call      string
	Result    string
	ToolError string
}

// ToolDecl is one tool of the host's as a client declares it. Its fields
// are those of llm.ToolSpec, so the front end's mapping is a conversion;
// the package keeps its own so that the wire does not change with llm's.
type ToolDecl struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON schema of the tool's arguments; the server
	// passes it on unread.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is a call of one of the host's tools, as the server sends it to
// the clients (SendToolCall) for one of them to answer (OpToolResult), or,
// with Cancelled, word that the call is no longer waited for. Its fields
// are those of tools.HostCall.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON object the model wrote ({} where it gave
	// none); a cancellation has none.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Cancelled is told by the line's key (tool_cancel), not a field: a
	// host that reads only tool_call lines can never take a cancellation
	// for a call and run the tool again.
	Cancelled bool `json:"-"`
}

// Handler acts on commands. Its answer's data (nil for none) goes back to
// the client as the answer's "data"; an error goes back as its "error".
// ctx ends when the server closes.
type Handler interface {
	Handle(ctx context.Context, c Command) (any, error)
}

// HandlerFunc is a function as a Handler.
type HandlerFunc func(ctx context.Context, c Command) (any, error)

func (f HandlerFunc) Handle(ctx context.Context, c Command) (any, error) { return f(ctx, c) }

// Usage lists the commands as a client types them, for error messages.
const Usage = "talk start|stop|toggle, wake, mute, unmute, cancel, say (with text), status, " +
	"tools FILE.json|- (the host's tools), tool-result ID (with text), tool-error ID (with text)"

// talkOps are talk's arguments.
var talkOps = map[string]Op{"start": OpTalkStart, "stop": OpTalkStop, "toggle": OpTalkToggle}

// bareOps are the commands that take no argument.
var bareOps = map[string]Op{"wake": OpWake, "mute": OpMute, "unmute": OpUnmute, "cancel": OpCancel, "status": OpStatus}

// request is a request line: {"v":1,"id":7,"cmd":"talk","args":["start"]},
// {"v":1,"id":8,"cmd":"say","text":"..."}, {"v":1,"id":9,"cmd":"tools",
// "tools":[...]} or {"v":1,"id":10,"cmd":"tool_result","call":"call-7",
// "result":"..."}. The pointers tell a field that is absent from one that
// is empty: "tools":[] withdraws, and "result":"" is a result.
type request struct {
	V      int         `json:"v"`
	ID     int64       `json:"id,omitempty"`
	Cmd    string      `json:"cmd"`
	Args   []string    `json:"args,omitempty"`
	Text   string      `json:"text,omitempty"`
	Tools  *[]ToolDecl `json:"tools,omitempty"`
	Call   string      `json:"call,omitempty"`
	Result *string     `json:"result,omitempty"`
	Error  *string     `json:"error,omitempty"`
}

// answer is the server's line for a request; ID is the request's, left
// out when the request had none or could not be read.
type answer struct {
	V     int    `json:"v"`
	ID    int64  `json:"id,omitempty"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Data  any    `json:"data,omitempty"`
}

// eventLine carries one event, as --json prints it.
type eventLine struct {
	V     int `json:"v"`
	Event any `json:"event"`
}

// toolCallLine carries a tool call, {"v":1,"tool_call":{...}}, or its
// cancellation, {"v":1,"tool_cancel":{...}}.
type toolCallLine struct {
	V      int       `json:"v"`
	Call   *ToolCall `json:"tool_call,omitempty"`
	Cancel *ToolCall `json:"tool_cancel,omitempty"`
}

// hello is the first line a client reads.
type hello struct {
	V        int    `json:"v"`
	Hello    string `json:"hello"`
	Commands string `json:"commands"`
}

// ParseRequest reads one request line (without its newline). id is the
// request's, where it could be read, for the error's answer.
func ParseRequest(line []byte) (id int64, c Command, err error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	// A misspelt field ("txt") is an error, not a say of nothing.
	dec.DisallowUnknownFields()
	var r request
	if err := dec.Decode(&r); err != nil {
		return peekID(line), c, fmt.Errorf("not a request: %v; a request is one JSON object on a line, such as {\"v\":%d,\"id\":1,\"cmd\":\"status\"}", err, Version)
	}
	if dec.More() {
		return r.ID, c, errors.New("more than one JSON value on the line; send one request a line")
	}
	if r.V != Version {
		return r.ID, c, fmt.Errorf("protocol version %d; this server speaks version %d (\"v\":%d)", r.V, Version, Version)
	}
	c, err = r.command()
	return r.ID, c, err
}

// peekID is the id of a line that is not a whole request, if it has one,
// so that even its error answer can be matched.
func peekID(line []byte) int64 {
	var r struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(line, &r) // what cannot be read has no id
	return r.ID
}

func (r request) command() (Command, error) {
	switch {
	case r.Cmd == "talk":
		if len(r.others("args")) > 0 || len(r.Args) != 1 || talkOps[r.Args[0]] == "" {
			return Command{}, fmt.Errorf("talk takes one argument, start, stop or toggle (\"args\":[\"start\"]), not %q", r.Args)
		}
		return Command{Op: talkOps[r.Args[0]]}, nil
	case r.Cmd == "say":
		if len(r.others("text")) > 0 || strings.TrimSpace(r.Text) == "" {
			return Command{}, errors.New("say takes its words as \"text\" (\"text\":\"hello\"), and no args")
		}
		return Command{Op: OpSay, Text: r.Text}, nil
	case r.Cmd == string(OpTools):
		if others := r.others("tools"); len(others) > 0 {
			return Command{}, fmt.Errorf("tools takes the host's tools as \"tools\" alone, not %s", strings.Join(others, ", "))
		}
		if r.Tools == nil {
			return Command{}, errors.New(`tools takes the host's tools as "tools" ("tools":[{"name":"take_photo","description":"...","parameters":{"type":"object","properties":{}}}]; [] withdraws them)`)
		}
		c := Command{Op: OpTools}
		if len(*r.Tools) > 0 {
			c.Tools = *r.Tools
		}
		return c, nil
	case r.Cmd == string(OpToolResult):
		if others := r.others("call", "result", "error"); len(others) > 0 {
			return Command{}, fmt.Errorf("tool_result takes \"call\" and \"result\" or \"error\", not %s", strings.Join(others, ", "))
		}
		if r.Call == "" {
			return Command{}, errors.New(`tool_result names the tool call it answers ("call":"call-7")`)
		}
		if (r.Result == nil) == (r.Error == nil) {
			return Command{}, fmt.Errorf(`tool_result answers call %s with its "result", or with an "error" where the tool failed: one of the two`, r.Call)
		}
		c := Command{Op: OpToolResult, Call: r.Call}
		if r.Error != nil {
			if strings.TrimSpace(*r.Error) == "" {
				return Command{}, fmt.Errorf("tool_result: the error of call %s says nothing; an error says why the tool failed", r.Call)
			}
			c.ToolError = *r.Error
		} else {
			c.Result = *r.Result
		}
		return c, nil
	case bareOps[r.Cmd] != "":
		if others := r.others(); len(others) > 0 {
			return Command{}, fmt.Errorf("%s takes no arguments, not %s", r.Cmd, strings.Join(others, ", "))
		}
		return Command{Op: bareOps[r.Cmd]}, nil
	}
	return Command{}, fmt.Errorf("unknown command %q; commands: %s", r.Cmd, Usage)
}

// others names the fields that r has beyond own, for the error of a
// command given what it does not take.
func (r request) others(own ...string) []string {
	var names []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"args", len(r.Args) > 0}, {"text", r.Text != ""}, {"tools", r.Tools != nil},
		{"call", r.Call != ""}, {"result", r.Result != nil}, {"error", r.Error != nil},
	} {
		if f.set && !slices.Contains(own, f.name) {
			names = append(names, strconv.Quote(f.name))
		}
	}
	return names
}

// ParseArgs is a command as a shell types it (talk start; say hello
// there): say's words are its text; tools reads the host's tools from the
// file named, - for stdin, a JSON list as the request's "tools"; tool-result
// and tool-error take a call's id and then its result, or why the tool
// failed.
func ParseArgs(args []string) (Command, error) {
	if len(args) == 0 {
		return Command{}, fmt.Errorf("no command; commands: %s", Usage)
	}
	r := request{Cmd: args[0], Args: args[1:]}
	switch r.Cmd {
	case "say":
		r.Text, r.Args = strings.Join(r.Args, " "), nil
	case "tools":
		if len(r.Args) != 1 {
			return Command{}, errors.New("tools takes one file of the host's tools, a JSON list of {\"name\", \"description\", \"parameters\"} ([] withdraws them), or - to read it from stdin")
		}
		tools, err := readTools(r.Args[0])
		if err != nil {
			return Command{}, err
		}
		r.Tools, r.Args = &tools, nil
	case "tool-result", "tool-error":
		if len(r.Args) == 0 {
			return Command{}, fmt.Errorf("%s takes the id of the call it answers, then its text (%[1]s call-7 ...)", r.Cmd)
		}
		text := strings.Join(r.Args[1:], " ")
		r.Call, r.Args = r.Args[0], nil
		if r.Cmd == "tool-error" {
			r.Error = &text
		} else {
			r.Result = &text
		}
		r.Cmd = string(OpToolResult)
	}
	return r.command()
}

// readTools reads a declaration of tools from the file at path, or stdin
// for -.
func readTools(path string) ([]ToolDecl, error) {
	var data []byte
	var err error
	if path == "-" {
		path = "stdin"
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	// As in a request: a misspelt "paramters" is an error, not a tool
	// that takes none.
	dec.DisallowUnknownFields()
	var tools []ToolDecl
	if err := dec.Decode(&tools); err != nil {
		return nil, fmt.Errorf(`tools: %s: %v; it is a JSON list, [{"name":"take_photo","description":"...","parameters":{"type":"object","properties":{}}}]`, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("tools: %s: more than one JSON value; the tools are one list", path)
	}
	if tools == nil {
		return nil, fmt.Errorf("tools: %s: null; the tools are a list ([] withdraws them)", path)
	}
	return tools, nil
}

// request is c as a request line's fields.
func (c Command) request(id int64) request {
	r := request{V: Version, ID: id, Cmd: string(c.Op), Text: c.Text}
	switch c.Op {
	case OpTools:
		tools := c.Tools
		if tools == nil {
			tools = []ToolDecl{} // [] withdraws; no list at all is an error
		}
		r.Tools = &tools
	case OpToolResult:
		r.Call = c.Call
		if c.ToolError != "" {
			r.Error = &c.ToolError
		} else {
			r.Result = &c.Result
		}
	}
	if arg, ok := strings.CutPrefix(string(c.Op), "talk_"); ok {
		r.Cmd, r.Args = "talk", []string{arg}
	}
	return r
}

// Config is the control socket's settings in the config file.
type Config struct {
	// Socket is the socket's path; "" serves none.
	Socket string `yaml:"socket"`
	// Group, if set, is the group that may use the socket besides its
	// user (Options.Group).
	Group string `yaml:"group"`
}
