// Package sdnotifytest stands in for systemd's notification socket in
// tests.
package sdnotifytest

import (
	"net"
	"path/filepath"
	"testing"
)

// Listen binds a datagram socket at name (a path, or an @name in the
// abstract namespace; "" is a path in t's temporary folder), points
// $NOTIFY_SOCKET at it for the rest of t, and returns what it receives,
// one message per datagram. The channel closes once t is over.
func Listen(t testing.TB, name string) <-chan string {
	t.Helper()
	if name == "" {
		name = filepath.Join(t.TempDir(), "notify.sock")
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("NOTIFY_SOCKET", name)
	got := make(chan string, 1024)
	go func() {
		defer close(got)
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			got <- string(buf[:n])
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		for range got { // what the test left unread, lest the reader block
		}
	})
	return got
}
