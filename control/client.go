package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Answer is the server's answer to a command.
type Answer struct {
	// Data is what the command answered with (status's state), if
	// anything, as JSON.
	Data json.RawMessage
}

// Client is a connection to a control socket.
type Client struct {
	conn      net.Conn
	events    chan json.RawMessage
	toolCalls chan ToolCall

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan answerLine
	err     error // why reading stopped
	done    chan struct{}
}

// answerLine is any line a server sends, as a client reads it.
type answerLine struct {
	V     int             `json:"v"`
	ID    int64           `json:"id"`
	OK    bool            `json:"ok"`
	Error string          `json:"error"`
	Data  json.RawMessage `json:"data"`
	Event json.RawMessage `json:"event"`
	Hello string          `json:"hello"`
	// ToolCall and ToolCancel are a tool call's line's.
	ToolCall   *ToolCall `json:"tool_call"`
	ToolCancel *ToolCall `json:"tool_cancel"`
}

// ClientEvents is how many events wait for a reader of Events before
// the client drops further ones: as the server does, the client never lets
// a slow reader stall the connection's answers.
const ClientEvents = 1024

// Dial connects to the control socket at path and reads its greeting.
func Dial(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("control: %w (is voice-agent run going, with control.socket set to it?)", err)
	}
	r := bufio.NewReaderSize(conn, MaxLine)
	first, err := r.ReadBytes('\n')
	var h answerLine
	if err == nil {
		err = json.Unmarshal(first, &h)
	}
	if err == nil && (h.Hello == "" || h.V != Version) {
		err = fmt.Errorf("the server speaks protocol version %d, not %d", h.V, Version)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("control: %s: %w", path, err)
	}
	c := &Client{
		conn: conn, events: make(chan json.RawMessage, ClientEvents), toolCalls: make(chan ToolCall, ClientEvents),
		pending: map[int64]chan answerLine{}, done: make(chan struct{}),
	}
	go c.read(r)
	return c, nil
}

// Events are the session's events as the server sends them (each as
// --json prints it), closed when the connection ends.
func (c *Client) Events() <-chan json.RawMessage { return c.events }

// ToolCalls are the calls of the host's tools that the server sends, and
// their cancellations (Cancelled), closed when the connection ends. A
// reader that falls ClientEvents behind misses calls, as it does events:
// a missed call times out on the server.
func (c *Client) ToolCalls() <-chan ToolCall { return c.toolCalls }

// Do sends cmd and waits for its answer; the server's error is returned
// as an error.
func (c *Client) Do(ctx context.Context, cmd Command) (Answer, error) {
	ch := make(chan answerLine, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return Answer{}, c.err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	line, err := marshalLine(cmd.request(id))
	if err == nil && len(line) > MaxLine {
		// The server would answer it with an error and hang up.
		err = fmt.Errorf("the request is %d bytes long; the server reads lines of up to %d KiB", len(line), MaxLine>>10)
	}
	if err == nil {
		_, err = c.conn.Write(line)
	}
	if err != nil {
		return Answer{}, fmt.Errorf("control: %w", err)
	}
	select {
	case a := <-ch:
		if !a.OK {
			return Answer{}, errors.New(a.Error)
		}
		return Answer{Data: a.Data}, nil
	case <-c.done:
		return Answer{}, c.readErr()
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// Close ends the connection.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}

func (c *Client) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// read sorts the server's lines into answers and events until the
// connection ends.
func (c *Client) read(r *bufio.Reader) {
	defer close(c.done)
	defer close(c.events)
	defer close(c.toolCalls)
	var err error
	for {
		var line []byte
		if line, err = r.ReadBytes('\n'); err != nil {
			break
		}
		var a answerLine
		if err = json.Unmarshal(line, &a); err != nil {
			break
		}
		if a.Event != nil {
			select {
			case c.events <- a.Event:
			default:
			}
			continue
		}
		if a.ToolCancel != nil {
			a.ToolCancel.Cancelled, a.ToolCall = true, a.ToolCancel
		}
		if a.ToolCall != nil {
			select {
			case c.toolCalls <- *a.ToolCall:
			default:
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[a.ID]
		c.mu.Unlock()
		if ch == nil {
			// An answer to no request of ours (the server could not read
			// one): nothing here sends such, so the connection is off.
			err = fmt.Errorf("the server answered: %s", a.Error)
			break
		}
		ch <- a
	}
	c.mu.Lock()
	c.err = fmt.Errorf("control: connection ended: %w", err)
	c.mu.Unlock()
}
