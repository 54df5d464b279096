// Package control is the agent's control socket: a Unix socket over which
// the host around the assistant (the glasses' firmware, a companion app,
// `voice-agent ctl`) sends commands and reads the session's events, as
// JSON lines. docs/control.md describes the wire and why it has this shape.
//
// The package knows nothing of the pipeline: a request becomes a Command,
// which the server hands to a Handler; the front end that runs the
// session maps it onto the pipeline's own command.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
)

// Command is a request as the handler gets it.
type Command struct {
	Op Op
	// Text is what OpSay speaks.
	Text string
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
const Usage = "talk start|stop|toggle, wake, mute, unmute, cancel, say (with text), status"

// talkOps are talk's arguments.
var talkOps = map[string]Op{"start": OpTalkStart, "stop": OpTalkStop, "toggle": OpTalkToggle}

// bareOps are the commands that take no argument.
var bareOps = map[string]Op{"wake": OpWake, "mute": OpMute, "unmute": OpUnmute, "cancel": OpCancel, "status": OpStatus}

// request is a request line: {"v":1,"id":7,"cmd":"talk","args":["start"]}
// or {"v":1,"id":8,"cmd":"say","text":"..."}.
type request struct {
	V    int      `json:"v"`
	ID   int64    `json:"id,omitempty"`
	Cmd  string   `json:"cmd"`
	Args []string `json:"args,omitempty"`
	Text string   `json:"text,omitempty"`
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
		if r.Text != "" || len(r.Args) != 1 || talkOps[r.Args[0]] == "" {
			return Command{}, fmt.Errorf("talk takes one argument, start, stop or toggle (\"args\":[\"start\"]), not %q", r.Args)
		}
		return Command{Op: talkOps[r.Args[0]]}, nil
	case r.Cmd == "say":
		if len(r.Args) > 0 || strings.TrimSpace(r.Text) == "" {
			return Command{}, errors.New("say takes its words as \"text\" (\"text\":\"hello\"), and no args")
		}
		return Command{Op: OpSay, Text: r.Text}, nil
	case bareOps[r.Cmd] != "":
		if len(r.Args) > 0 || r.Text != "" {
			return Command{}, fmt.Errorf("%s takes no arguments", r.Cmd)
		}
		return Command{Op: bareOps[r.Cmd]}, nil
	}
	return Command{}, fmt.Errorf("unknown command %q; commands: %s", r.Cmd, Usage)
}

// ParseArgs is a command as a shell types it (talk start; say hello
// there): say's words are its text.
func ParseArgs(args []string) (Command, error) {
	if len(args) == 0 {
		return Command{}, fmt.Errorf("no command; commands: %s", Usage)
	}
	r := request{Cmd: args[0], Args: args[1:]}
	if r.Cmd == "say" {
		r.Text, r.Args = strings.Join(r.Args, " "), nil
	}
	return r.command()
}

// request is c as a request line's fields.
func (c Command) request(id int64) request {
	r := request{V: Version, ID: id, Cmd: string(c.Op), Text: c.Text}
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
