// Package sdnotify tells systemd how a Type=notify service is doing: the
// datagram protocol of sd_notify(3), which is small enough that a library
// for it would be most of a dependency for a few lines. The service
// manager names its socket in $NOTIFY_SOCKET and, when the unit sets
// WatchdogSec=, the watchdog's timeout in $WATCHDOG_USEC.
package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The states this program sends (sd_notify(3) lists them all).
const (
	Ready    = "READY=1"
	Stopping = "STOPPING=1"
	Watchdog = "WATCHDOG=1"
)

// Status is the STATUS= line systemctl status shows for the service.
func Status(s string) string { return "STATUS=" + s }

// Notifier sends states to the service manager. A nil Notifier, which
// FromEnv returns outside systemd, sends nothing, so callers need not ask.
type Notifier struct {
	addr     *net.UnixAddr
	watchdog time.Duration
	alive    atomic.Bool
}

// FromEnv reads the service manager's variables: nil, nil when
// $NOTIFY_SOCKET is unset (not started by systemd, or not as Type=notify).
// A variable systemd would never write that way is an error naming it,
// since a watchdog misread would have the service killed or never
// watched.
func FromEnv() (*Notifier, error) {
	socket := os.Getenv("NOTIFY_SOCKET")
	if socket == "" {
		return nil, nil
	}
	// A leading @ is the abstract namespace; the standard library's
	// sockaddr conversion turns it into the NUL byte the kernel wants.
	if !strings.HasPrefix(socket, "/") && !strings.HasPrefix(socket, "@") {
		return nil, fmt.Errorf("NOTIFY_SOCKET=%q: not a socket path or an abstract @name (the only kinds supported)", socket)
	}
	n := &Notifier{addr: &net.UnixAddr{Name: socket, Net: "unixgram"}}
	var err error
	n.watchdog, err = watchdogTimeout(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"))
	return n, err
}

// watchdogTimeout is the watchdog's timeout from its two variables: 0 when
// there is none, or when it watches another process (a child that
// inherited the variables).
func watchdogTimeout(usec, pid string) (time.Duration, error) {
	if usec == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(usec, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("WATCHDOG_USEC=%q: not a positive number of microseconds", usec)
	}
	if pid != "" {
		p, err := strconv.Atoi(pid)
		if err != nil || p <= 0 {
			return 0, fmt.Errorf("WATCHDOG_PID=%q: not a process id", pid)
		}
		if p != os.Getpid() {
			return 0, nil
		}
	}
	return time.Duration(n) * time.Microsecond, nil
}

// Notify sends states, one per line, in one datagram. Each send is its own
// socket, as sd_notify does: one kept connected would go stale when
// systemd re-executes itself and binds its socket anew.
func (n *Notifier) Notify(states ...string) error {
	if n == nil {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sdnotify: %w", err)
	}
	_, err = conn.Write([]byte(strings.Join(states, "\n")))
	if err != nil {
		err = fmt.Errorf("sdnotify: %w", err)
	}
	return errors.Join(err, conn.Close())
}

// WatchdogTimeout is how long systemd waits for a WATCHDOG=1 before it
// counts the service as hung; 0 when no watchdog watches this process.
func (n *Notifier) WatchdogTimeout() time.Duration {
	if n == nil {
		return 0
	}
	return n.watchdog
}

// Alive says the watched loop went round once. The loop itself calls it,
// so a loop stuck anywhere stops it and with it the watchdog's pets.
func (n *Notifier) Alive() {
	if n != nil {
		n.alive.Store(true)
	}
}

// Watch pets the watchdog on every tick (systemd advises half its
// timeout) if Alive was called since the previous one, until ctx ends or a
// send fails.
func (n *Notifier) Watch(ctx context.Context, tick <-chan time.Time) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			if n.alive.Swap(false) {
				if err := n.Notify(Watchdog); err != nil {
					return err
				}
			}
		}
	}
}
