package sdnotify_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/internal/sdnotify"
	"github.com/voiceassistant/voice/internal/sdnotify/sdnotifytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Outside systemd there is no notifier, and a nil one sends nothing.
func TestUnsetSocketIsNoNotifier(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	t.Setenv("WATCHDOG_USEC", "100000")
	n, err := sdnotify.FromEnv()
	require.NoError(t, err)
	assert.Nil(t, n)
	assert.NoError(t, n.Notify(sdnotify.Ready))
	assert.Zero(t, n.WatchdogTimeout())
	n.Alive()
}

// A socket path and an abstract name (systemd's own is a path; a
// container's manager may hand out either) both get the states, one
// datagram per Notify, one state per line.
func TestNotifyReachesTheSocket(t *testing.T) {
	for _, name := range []string{"", fmt.Sprintf("@voice-agent-test-%d", os.Getpid())} {
		t.Run("socket "+name, func(t *testing.T) {
			got := sdnotifytest.Listen(t, name)
			n, err := sdnotify.FromEnv()
			require.NoError(t, err)
			require.NoError(t, n.Notify(sdnotify.Ready, sdnotify.Status("listening")))
			require.NoError(t, n.Notify(sdnotify.Stopping))
			assert.Equal(t, "READY=1\nSTATUS=listening", <-got)
			assert.Equal(t, "STOPPING=1", <-got)
		})
	}
}

// The watchdog's variables: its timeout, none, one that watches another
// process, and values systemd never writes, refused by name.
func TestWatchdogFromEnv(t *testing.T) {
	self := strconv.Itoa(os.Getpid())
	tests := []struct {
		name, socket, usec, pid string
		want                    time.Duration
		wantErr                 string
	}{
		{name: "no watchdog", socket: "/run/notify"},
		{name: "timeout", socket: "/run/notify", usec: "200000", want: 200 * time.Millisecond},
		{name: "for this process", socket: "/run/notify", usec: "3000000", pid: self, want: 3 * time.Second},
		{name: "for another process", socket: "/run/notify", usec: "3000000", pid: "1"},
		{name: "not a number", socket: "/run/notify", usec: "3s", wantErr: `WATCHDOG_USEC="3s": not a positive number of microseconds`},
		{name: "zero", socket: "/run/notify", usec: "0", wantErr: `WATCHDOG_USEC="0"`},
		{name: "bad pid", socket: "/run/notify", usec: "1000", pid: "me", wantErr: `WATCHDOG_PID="me": not a process id`},
		{name: "unsupported socket", socket: "vsock:2:1234", wantErr: `NOTIFY_SOCKET="vsock:2:1234": not a socket path or an abstract @name`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NOTIFY_SOCKET", tc.socket)
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			n, err := sdnotify.FromEnv()
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, n.WatchdogTimeout())
		})
	}
}

// The watchdog is petted on a tick only if the watched loop went round
// since the last pet: a loop that stopped calling Alive stops the pets.
func TestWatchPetsOnlyAfterAlive(t *testing.T) {
	tests := []struct {
		name  string
		alive []bool // per tick: whether the loop went round before it
	}{
		{"a stuck loop", []bool{false, false, false}},
		{"a running loop", []bool{true, true, true}},
		{"a loop that stalls and recovers", []bool{true, false, false, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sdnotifytest.Listen(t, "")
			n, err := sdnotify.FromEnv()
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			tick := make(chan time.Time)
			watched := make(chan error)
			go func() { watched <- n.Watch(ctx, tick) }()
			for _, alive := range tc.alive {
				if alive {
					n.Alive()
				}
				tick <- time.Time{}
				if alive {
					// Its pet is sent before the next Alive, which it would
					// otherwise absorb.
					assert.Equal(t, sdnotify.Watchdog, <-got)
				}
			}
			cancel()
			require.NoError(t, <-watched)
			// Nothing else was sent: the next datagram is this one.
			require.NoError(t, n.Notify(sdnotify.Stopping))
			assert.Equal(t, sdnotify.Stopping, <-got)
		})
	}
}
