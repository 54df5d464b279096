package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// maxSocketPath is the longest path a Unix socket can have on Linux
// (sun_path less its terminating zero), less the room for the name the
// socket is made under before it is renamed into place.
const maxSocketPath = 107 - len(".new")

// listen makes the socket at path with its permissions set before any
// client can reach it: it is made under a temporary name beside path,
// given its mode and group, and renamed into place (which also replaces a
// stale socket in one step). A path that is not a stale socket of this
// user's is refused.
func listen(path, group string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control: socket path %s is %d bytes long; a Unix socket's path has at most %d: set control.socket to a shorter one", path, len(path), maxSocketPath)
	}
	gid, err := groupID(group)
	if err != nil {
		return nil, err
	}
	if dir := filepath.Dir(path); !isDir(dir) {
		return nil, fmt.Errorf("control: the socket's directory %s does not exist; make it (under systemd, RuntimeDirectory=voice-agent makes /run/voice-agent), or set control.socket to another path", dir)
	}
	if err := checkFree(path); err != nil {
		return nil, err
	}
	tmp := path + ".new"
	if err := removeOwnSocket(tmp); err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	// The listener would unlink the temporary name on Close; the server
	// removes path itself.
	l.SetUnlinkOnClose(false)
	mode := os.FileMode(0o600)
	if gid >= 0 {
		mode = 0o660
		err = os.Chown(tmp, -1, gid)
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		l.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("control: %w", err)
	}
	return l, nil
}

// groupID is the id of the named group, -1 for none.
func groupID(name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	g, err := user.LookupGroup(name)
	if err != nil {
		return -1, fmt.Errorf("control: control.group %q: %w", name, err)
	}
	return strconv.Atoi(g.Gid)
}

// checkFree says whether a socket may be made at path: nothing is there,
// or a socket of this user's that nobody listens on (left by an agent
// that did not stop cleanly).
func checkFree(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	if info.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("control: %s exists and is not a socket (%s); remove it, or set control.socket to another path", path, describe(info.Mode()))
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("control: %s is a socket of user %d, not of this one (%d); another user's agent may be serving it: stop that one and remove it, or set control.socket to another path", path, st.Uid, os.Geteuid())
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		return fmt.Errorf("control: something listens on %s already (another voice-agent run?); stop it, or set control.socket to another path", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("control: %s: %w", path, err)
	}
	return nil // stale: the rename replaces it
}

// removeOwnSocket removes a stale temporary socket of this user's at
// path, as checkFree allows.
func removeOwnSocket(path string) error {
	if err := checkFree(path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("control: %w", err)
	}
	return nil
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

func describe(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}
