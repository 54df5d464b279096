package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
)

// QueueLen is how many lines wait for a client that is slow to read
// before it is dropped: a few seconds of events at the pipeline's busiest
// (partial transcripts every few tens of milliseconds).
const QueueLen = 256

// Options are a server's settings beyond its path.
type Options struct {
	// Group, if set, makes the socket 0660 and that group's (the host
	// app's); otherwise it is 0600, this user's alone.
	Group string
	// QueueLen is a client's queue (default QueueLen).
	QueueLen int
}

// Server serves the control socket: it answers each client's requests
// through a Handler and sends every client the events given to Broadcast.
type Server struct {
	path    string
	l       *net.UnixListener
	handler Handler
	queue   int
	ctx     context.Context
	cancel  context.CancelFunc
	hello   []byte

	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// Listen makes the socket at path and serves it until Close. It refuses a
// path that is anything but a stale socket of this user's.
func Listen(path string, h Handler, opt Options) (*Server, error) {
	l, err := listen(path, opt.Group)
	if err != nil {
		return nil, err
	}
	hello, err := marshalLine(hello{V: Version, Hello: "voice-agent", Commands: Usage})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		path: path, l: l, handler: h, queue: opt.QueueLen, ctx: ctx, cancel: cancel,
		hello: hello, clients: map[*client]struct{}{},
	}
	if s.queue <= 0 {
		s.queue = QueueLen
	}
	s.wg.Go(s.accept)
	return s, nil
}

// Path is where the socket is.
func (s *Server) Path() string { return s.path }

func (s *Server) accept() {
	for {
		conn, err := s.l.Accept()
		if err != nil {
			return // closed
		}
		c := &client{conn: conn, q: make(chan []byte, s.queue)}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.clients[c] = struct{}{}
		c.send(s.hello)
		s.wg.Go(func() { c.write() })
		s.wg.Go(func() {
			s.read(c)
			s.mu.Lock()
			delete(s.clients, c)
			s.mu.Unlock()
		})
		s.mu.Unlock()
	}
}

// Broadcast sends event, as JSON, to every client, in the order of the
// calls. It never waits on a client: one whose queue is full is dropped.
func (s *Server) Broadcast(event any) error {
	line, err := marshalLine(eventLine{V: Version, Event: event})
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.clients {
		c.send(line)
	}
	return nil
}

// ErrNoClient is SendToolCall's error when no client is connected: nobody
// could answer the call.
var ErrNoClient = errors.New("no client is connected to the control socket")

// SendToolCall sends every client a call of one of the host's tools, for
// one of them to answer (OpToolResult), or its cancellation. Any client
// may answer, so that one program can declare the host's tools and another
// serve them. With no client connected it sends nothing and says so, for
// the call to fail at once instead of at its timeout.
func (s *Server) SendToolCall(tc ToolCall) error {
	l := toolCallLine{V: Version}
	if tc.Cancelled {
		tc.Arguments = nil
		l.Cancel = &tc
	} else {
		if len(tc.Arguments) == 0 {
			tc.Arguments = json.RawMessage("{}") // always an object, for the host to read
		}
		l.Call = &tc
	}
	line, err := marshalLine(l)
	if err != nil {
		return fmt.Errorf("control: tool call %s: %w", tc.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.clients) == 0 {
		return ErrNoClient
	}
	for c := range s.clients {
		c.send(line)
	}
	return nil
}

// Close stops the server: it closes every connection, waits for what
// serves them, and removes the socket.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	clients := make([]*client, 0, len(s.clients))
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	s.cancel()
	err := s.l.Close()
	for _, c := range clients {
		c.finish(true)
	}
	s.wg.Wait()
	if rmErr := os.Remove(s.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}

// read answers c's requests, one line at a time, until it hangs up, sends
// a line over MaxLine, or is dropped.
func (s *Server) read(c *client) {
	r := bufio.NewReaderSize(c.conn, MaxLine)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Not read on to the next newline: a client that sends that
			// much is not one to keep talking to.
			c.send(mustLine(answer{V: Version, Error: fmt.Sprintf("line longer than %d KiB; closing", MaxLine>>10)}))
			c.finish(false)
			return
		}
		if err != nil {
			// Hung up (mid-line or not) or dropped: a part line is no
			// request.
			c.finish(false)
			return
		}
		c.send(s.answer(line[:len(line)-1]))
	}
}

// answer is the answer line to a request line.
func (s *Server) answer(line []byte) []byte {
	id, cmd, err := ParseRequest(line)
	if err != nil {
		return mustLine(answer{V: Version, ID: id, Error: err.Error()})
	}
	data, err := s.handler.Handle(s.ctx, cmd)
	a := answer{V: Version, ID: id, OK: err == nil, Data: data}
	if err != nil {
		a.Data, a.Error = nil, err.Error()
	}
	out, err := marshalLine(a)
	if err != nil { // the handler's data would not encode
		return mustLine(answer{V: Version, ID: id, Error: "answer: " + err.Error()})
	}
	return out
}

// client is one connection: the lines it is sent wait in q for its writer.
type client struct {
	conn net.Conn
	mu   sync.Mutex
	q    chan []byte
	done bool
}

// send queues line, dropping the client if its queue is full.
func (c *client) send(line []byte) {
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	select {
	case c.q <- line:
		c.mu.Unlock()
	default:
		c.mu.Unlock()
		c.finish(true)
	}
}

// finish ends the client: its queue takes no more lines, and its writer
// closes the connection once it has written what is queued, or at once
// if now (a client that does not read would never take the rest).
func (c *client) finish(now bool) {
	c.mu.Lock()
	if !c.done {
		c.done = true
		close(c.q)
	}
	c.mu.Unlock()
	if now {
		c.conn.Close()
	}
}

// write writes c's queue to it until the queue is closed, then closes the
// connection.
func (c *client) write() {
	defer c.conn.Close()
	for line := range c.q {
		if _, err := c.conn.Write(line); err != nil {
			c.finish(true)
		}
	}
}

// marshalLine is v as a JSON line.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// mustLine is marshalLine of a value made here, which always encodes.
func mustLine(v answer) []byte {
	b, _ := marshalLine(v)
	return b
}
