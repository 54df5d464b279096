package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Handler that keeps the commands it gets and answers
// status with "listening".
type recorder struct {
	mu   sync.Mutex
	cmds []Command
}

func (r *recorder) Handle(_ context.Context, c Command) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, c)
	switch {
	case c.Op == OpStatus:
		return map[string]string{"state": "listening"}, nil
	case c.Op == OpSay && c.Text == "fail":
		return nil, errors.New("the reply cannot be spoken")
	}
	return nil, nil
}

func (r *recorder) got() []Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Command(nil), r.cmds...)
}

// serve starts a server on a socket in a fresh directory, closed at the
// test's end.
func serve(t *testing.T, h Handler, opt Options) *Server {
	t.Helper()
	s, err := Listen(filepath.Join(t.TempDir(), "control.sock"), h, opt)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// rawClient speaks the wire by hand.
type rawClient struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, path string) *rawClient {
	t.Helper()
	conn, err := net.Dial("unix", path)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	c := &rawClient{Conn: conn, r: bufio.NewReader(conn)}
	var h hello
	require.NoError(t, json.Unmarshal(c.line(t), &h))
	require.Equal(t, hello{V: Version, Hello: "voice-agent", Commands: Usage}, h)
	return c
}

func (c *rawClient) line(t *testing.T) []byte {
	t.Helper()
	line, err := c.r.ReadBytes('\n')
	require.NoError(t, err)
	return line
}

func (c *rawClient) answer(t *testing.T, request string) answerLine {
	t.Helper()
	_, err := c.Write([]byte(request + "\n"))
	require.NoError(t, err)
	var a answerLine
	require.NoError(t, json.Unmarshal(c.line(t), &a))
	return a
}

func TestEveryCommandRoundTrips(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	c, err := Dial(t.Context(), s.Path())
	require.NoError(t, err)
	defer c.Close()
	for _, tc := range []struct {
		args []string
		want Command
	}{
		{[]string{"talk", "start"}, Command{Op: OpTalkStart}},
		{[]string{"talk", "stop"}, Command{Op: OpTalkStop}},
		{[]string{"talk", "toggle"}, Command{Op: OpTalkToggle}},
		{[]string{"wake"}, Command{Op: OpWake}},
		{[]string{"mute"}, Command{Op: OpMute}},
		{[]string{"unmute"}, Command{Op: OpUnmute}},
		{[]string{"cancel"}, Command{Op: OpCancel}},
		{[]string{"say", "Your", "meeting", "starts", "in", "5", "minutes."}, Command{Op: OpSay, Text: "Your meeting starts in 5 minutes."}},
		{[]string{"say", "你的会议五分钟后开始。"}, Command{Op: OpSay, Text: "你的会议五分钟后开始。"}},
		{[]string{"status"}, Command{Op: OpStatus}},
		{[]string{"tool-result", "call-7", "82%"}, Command{Op: OpToolResult, Call: "call-7", Result: "82%"}},
		{[]string{"tool-error", "call-8", "no", "camera"}, Command{Op: OpToolResult, Call: "call-8", ToolError: "no camera"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd, err := ParseArgs(tc.args)
			require.NoError(t, err)
			a, err := c.Do(t.Context(), cmd)
			require.NoError(t, err)
			assert.Equal(t, tc.want, h.got()[len(h.got())-1])
			if tc.want.Op == OpStatus {
				assert.JSONEq(t, `{"state":"listening"}`, string(a.Data))
			} else {
				assert.Nil(t, a.Data)
			}
		})
	}
	_, err = c.Do(t.Context(), Command{Op: OpSay, Text: "fail"})
	assert.EqualError(t, err, "the reply cannot be spoken", "the handler's error comes back as the answer's")
}

func TestBadRequestsAreAnsweredWithAnError(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	c := dialRaw(t, s.Path())
	for _, tc := range []struct{ request, id, err string }{
		{`{"v":1,"id":3,"cmd":"tlak","args":["start"]}`, "3", `unknown command "tlak"; commands: ` + Usage},
		{`{"v":2,"id":4,"cmd":"wake"}`, "4", "protocol version 2; this server speaks version 1"},
		{`{"id":5,"cmd":"wake"}`, "5", "protocol version 0"},
		{`{"v":1,"id":6,"cmd":"talk","args":["go"]}`, "6", "talk takes one argument"},
		{`{"v":1,"id":7,"cmd":"say"}`, "7", `say takes its words as "text"`},
		{`{"v":1,"id":8,"cmd":"say","txt":"hi"}`, "8", `unknown field "txt"`},
		{`{"v":1,"id":9,"cmd":"mute","args":["now"]}`, "9", "mute takes no arguments"},
		{`{"v":1,"id":10,"cmd":"wake"} {"v":1}`, "10", "more than one JSON value"},
		{`{"v":1,"id":11,"cmd":`, "0", "not a request"},
		{`not json`, "0", "not a request"},
		{`[1,2]`, "0", "not a request"},
	} {
		t.Run(tc.request, func(t *testing.T) {
			a := c.answer(t, tc.request)
			assert.False(t, a.OK)
			assert.Equal(t, tc.id, strconv.FormatInt(a.ID, 10))
			assert.Contains(t, a.Error, tc.err)
		})
	}
	assert.Empty(t, h.got(), "no bad request reaches the handler")
	assert.True(t, c.answer(t, `{"v":1,"id":12,"cmd":"wake"}`).OK, "the connection goes on after bad requests")
}

func TestALineOverTheLimitClosesTheConnection(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	c := dialRaw(t, s.Path())
	long := `{"v":1,"id":1,"cmd":"say","text":"` + strings.Repeat("a", MaxLine) + `"}` + "\n"
	go c.Write([]byte(long)) // the server stops reading it partway
	var a answerLine
	require.NoError(t, json.Unmarshal(c.line(t), &a))
	assert.False(t, a.OK)
	assert.Contains(t, a.Error, "line longer than 64 KiB")
	_, err := c.r.ReadBytes('\n')
	assert.Error(t, err, "the connection is closed (EOF, or a reset for what it left unread)")
	assert.Empty(t, h.got())
}

func TestAClientHangingUpMidLineReachesNoHandler(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	c := dialRaw(t, s.Path())
	_, err := c.Write([]byte(`{"v":1,"id":1,"cmd":"wake"}`)) // no newline
	require.NoError(t, err)
	require.NoError(t, c.Close())
	// Another client's round trip after it: the server goes on.
	other := dialRaw(t, s.Path())
	assert.True(t, other.answer(t, `{"v":1,"id":2,"cmd":"mute"}`).OK)
	require.NoError(t, s.Close())
	assert.Equal(t, []Command{{Op: OpMute}}, h.got())
}

// TestEventsReachEveryReaderInOrderAndASlowClientIsDropped: two clients
// that read see every event in order; one that never reads is dropped
// once its queue is full, and Broadcast never waits for it.
func TestEventsReachEveryReaderInOrderAndASlowClientIsDropped(t *testing.T) {
	s := serve(t, &recorder{}, Options{QueueLen: 4})
	readers := []*rawClient{dialRaw(t, s.Path()), dialRaw(t, s.Path())}
	stuck := dialRaw(t, s.Path())
	// Each event is large enough that the stuck client's socket buffer
	// fills within the run; the readers are kept in step with Broadcast
	// so that only a client that does not read can fall behind.
	pad := strings.Repeat("字", 1000)
	const n = 1000
	for i := range n {
		require.NoError(t, s.Broadcast(map[string]any{"type": "state", "n": i, "text": pad}))
		for _, r := range readers {
			var e struct{ Event struct{ N int } }
			require.NoError(t, json.Unmarshal(r.line(t), &e))
			require.Equal(t, i, e.Event.N, "every event, in order")
		}
	}
	// The stuck client, reading now, finds a prefix of the events and the
	// end of its connection.
	got := 0
	for {
		line, err := stuck.r.ReadBytes('\n')
		if err != nil {
			break
		}
		var e struct{ Event struct{ N int } }
		require.NoError(t, json.Unmarshal(line, &e))
		require.Equal(t, got, e.Event.N)
		got++
	}
	assert.Less(t, got, n, "the client that did not read was dropped")
	// The readers are still served.
	for _, r := range readers {
		assert.True(t, r.answer(t, `{"v":1,"id":1,"cmd":"status"}`).OK)
	}
}

func TestSocketPermissions(t *testing.T) {
	s := serve(t, &recorder{}, Options{})
	info, err := os.Stat(s.Path())
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket|0o600, info.Mode())

	g := otherGroup(t)
	s = serve(t, &recorder{}, Options{Group: g.Name})
	info, err = os.Stat(s.Path())
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket|0o660, info.Mode())
	assert.Equal(t, g.Gid, strconv.Itoa(int(info.Sys().(*syscall.Stat_t).Gid)))

	_, err = Listen(filepath.Join(t.TempDir(), "s"), &recorder{}, Options{Group: "no-such-group-here"})
	assert.ErrorContains(t, err, `control.group "no-such-group-here"`)
}

// otherGroup is a group this process may give its socket to other than
// its own, or the test is skipped.
func otherGroup(t *testing.T) *user.Group {
	var candidates []string
	if os.Geteuid() == 0 {
		candidates = []string{"nogroup", "daemon", "users"}
	}
	gids, _ := os.Getgroups()
	for _, gid := range gids {
		if gid != os.Getegid() {
			if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
				candidates = append(candidates, g.Name)
			}
		}
	}
	for _, name := range candidates {
		if g, err := user.LookupGroup(name); err == nil && g.Gid != strconv.Itoa(os.Getegid()) {
			return g
		}
	}
	t.Skip("no group other than this process's own that it may give a file to")
	return nil
}

func TestAStaleSocketIsReplacedAndCloseRemovesIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "control.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	l.SetUnlinkOnClose(false) // as a killed agent leaves it
	require.NoError(t, l.Close())

	s, err := Listen(path, &recorder{}, Options{})
	require.NoError(t, err)
	c, err := Dial(t.Context(), path)
	require.NoError(t, err)
	_, err = c.Do(t.Context(), Command{Op: OpWake})
	assert.NoError(t, err)
	require.NoError(t, c.Close())
	require.NoError(t, s.Close())
	assert.NoFileExists(t, path)
}

func TestAPathThatIsNotAStaleSocketOfOursIsRefused(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("keep me"), 0o644))
	live := serve(t, &recorder{}, Options{}).Path()
	for _, tc := range []struct{ name, path, err string }{
		{"regular file", file, file + " exists and is not a socket (a regular file); remove it, or set control.socket to another path"},
		{"directory", dir, dir + " exists and is not a socket (a directory)"},
		{"live socket", live, "something listens on " + live + " already"},
		{"no directory", filepath.Join(dir, "none", "s"), "the socket's directory " + filepath.Join(dir, "none") + " does not exist"},
		{"too long", filepath.Join(dir, strings.Repeat("s", 120)), "a Unix socket's path has at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Listen(tc.path, &recorder{}, Options{})
			assert.ErrorContains(t, err, tc.err)
		})
	}
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "keep me", string(data))
}

func TestAnotherUsersSocketIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a socket to another user takes root")
	}
	path := filepath.Join(t.TempDir(), "control.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	l.SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	const nobody = 65534
	require.NoError(t, os.Chown(path, nobody, nobody))
	_, err = Listen(path, &recorder{}, Options{})
	assert.ErrorContains(t, err, path+" is a socket of user 65534, not of this one (0)")
	assert.FileExists(t, path)
}

// TestToolCallsReachEveryClientAndTheirAnswersTheHandler: a client
// declares tools, a call of one reaches every client as a line (the
// client's ToolCalls), a client's tool_result reaches the handler, and a
// cancellation comes as a line of its own.
func TestToolCallsReachEveryClientAndTheirAnswersTheHandler(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	assert.ErrorIs(t, s.SendToolCall(ToolCall{ID: "call-1", Name: "take_photo"}), ErrNoClient, "nobody to answer")

	host, err := Dial(t.Context(), s.Path())
	require.NoError(t, err)
	defer host.Close()
	raw := dialRaw(t, s.Path())
	decl := []ToolDecl{{Name: "take_photo", Description: "Takes a photo.", Parameters: json.RawMessage(`{"type":"object","properties":{"flash":{"type":"boolean"}}}`)}}
	_, err = host.Do(t.Context(), Command{Op: OpTools, Tools: decl})
	require.NoError(t, err)
	assert.Equal(t, Command{Op: OpTools, Tools: decl}, h.got()[0])

	require.NoError(t, s.SendToolCall(ToolCall{ID: "call-2", Name: "take_photo", Arguments: json.RawMessage(`{"flash":true}`)}))
	assert.JSONEq(t, `{"v":1,"tool_call":{"id":"call-2","name":"take_photo","arguments":{"flash":true}}}`, string(raw.line(t)))
	assert.Equal(t, ToolCall{ID: "call-2", Name: "take_photo", Arguments: json.RawMessage(`{"flash":true}`)}, <-host.ToolCalls())
	_, err = host.Do(t.Context(), Command{Op: OpToolResult, Call: "call-2", Result: "a red bicycle"})
	require.NoError(t, err)
	assert.Equal(t, Command{Op: OpToolResult, Call: "call-2", Result: "a red bicycle"}, h.got()[1])

	require.NoError(t, s.SendToolCall(ToolCall{ID: "call-3", Name: "take_photo"}))
	assert.JSONEq(t, `{"v":1,"tool_call":{"id":"call-3","name":"take_photo","arguments":{}}}`, string(raw.line(t)), "arguments are always an object")
	require.NoError(t, s.SendToolCall(ToolCall{ID: "call-3", Name: "take_photo", Arguments: json.RawMessage(`{}`), Cancelled: true}))
	assert.JSONEq(t, `{"v":1,"tool_cancel":{"id":"call-3","name":"take_photo"}}`, string(raw.line(t)))
	assert.Equal(t, ToolCall{ID: "call-3", Name: "take_photo", Arguments: json.RawMessage(`{}`)}, <-host.ToolCalls())
	assert.Equal(t, ToolCall{ID: "call-3", Name: "take_photo", Cancelled: true}, <-host.ToolCalls())

	// The tool lines leave the events and the answers as they were.
	require.NoError(t, s.Broadcast(map[string]string{"type": "state"}))
	assert.JSONEq(t, `{"type":"state"}`, string(<-host.Events()))
	_, err = host.Do(t.Context(), Command{Op: OpStatus})
	assert.NoError(t, err)
}

func TestARequestOverTheLimitIsNotSent(t *testing.T) {
	h := &recorder{}
	s := serve(t, h, Options{})
	c, err := Dial(t.Context(), s.Path())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do(t.Context(), Command{Op: OpSay, Text: strings.Repeat("a", MaxLine)})
	assert.ErrorContains(t, err, "the server reads lines of up to 64 KiB")
	_, err = c.Do(t.Context(), Command{Op: OpWake})
	assert.NoError(t, err, "the connection goes on")
	assert.Equal(t, []Command{{Op: OpWake}}, h.got())
}
