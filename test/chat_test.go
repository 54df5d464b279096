package test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChatStreamsReplies(t *testing.T) {
	cmd := exec.Command(binary, "chat", "--llm", "scripted", "--script", "testdata/demo.json")
	cmd.Stdin = strings.NewReader("hello there\nand tomorrow?\n")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "It is sunny and warm today, with a light breeze in the afternoon.")
	assert.Contains(t, string(out), "Tomorrow it will rain, so take an umbrella.")
}

// Ctrl-C while a reply streams stops that reply; the chat goes on.
func TestChatInterruptStopsTheReplyNotTheProgram(t *testing.T) {
	script := filepath.Join(t.TempDir(), "slow.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"replies": ["one two three four five six seven eight nine ten eleven twelve", "done"], "tokens_per_second": 4}`), 0o644))
	cmd := exec.Command(binary, "chat", "--llm", "scripted", "--script", script)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	out := bufio.NewReader(stdout)
	_, err = io.WriteString(stdin, "tell me\n")
	require.NoError(t, err)
	// Wait for the reply to start streaming, then interrupt it.
	buf := make([]byte, 4)
	_, err = io.ReadFull(out, buf) // "> on"
	require.NoError(t, err)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	line, err := out.ReadString(']')
	require.NoError(t, err)
	assert.Contains(t, line, "stopped")
	assert.NotContains(t, line, "twelve", "the reply stopped early")

	// The program is still there and answers the next message.
	_, err = io.WriteString(stdin, "next\n")
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	assert.Contains(t, string(rest), "done")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("chat did not exit at end of input")
	}
}
