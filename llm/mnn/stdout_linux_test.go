//go:build mnn && linux

package mnn

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/llm"
)

// oddText is text the tiny export's tokenizer cannot encode: it printed a
// line for each of its bytes, at each encoding of the conversation.
var oddText = strings.Repeat("日本語の ☃ ü ", 500)

// What MNN prints went to stderr, among the agent's log lines: 175,476
// raw lines for one chat in odd Unicode. It goes to the log at debug
// level, a few lines a call and a count of the rest; stderr has only the
// agent's own lines. The child process runs the model with its log at
// debug level on stderr.
func TestEngineLinesStayOffStderr(t *testing.T) {
	if os.Getenv("VOICE_TEST_ENGINE_LINES") != "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
		m := openTiny(t, 4)
		_, _, err := generate(t, m, context.Background(), []llm.Message{{Role: llm.User, Content: oddText}}, 0, nil)
		require.NoError(t, err)
		return
	}
	stdout, stderr := again(t, "VOICE_TEST_ENGINE_LINES=1")
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		require.True(t, strings.HasPrefix(line, "time="), "a line not the agent's: %q", line)
	}
	require.Contains(t, stdout, "--- PASS: TestEngineLinesStayOffStderr", "the child ran no model")
	assert.Contains(t, stderr, "No encoding found", "kept at debug level")
	assert.Contains(t, stderr, "the engine printed more lines, not logged")
	assert.Less(t, strings.Count(stderr, `msg="mnn: the engine printed"`), 4*engineLines, "bounded")
}

// A drain logs the first lines of what the engine printed, each cut to a
// length, and counts the rest.
func TestLogEngineOutputIsBounded(t *testing.T) {
	var buf bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	long := strings.Repeat("x", 5000)
	printed := strings.Repeat("Error: No encoding found for the sequence \xe6\n", 1000) + long + "\n"
	logEngineOutput([]byte(printed))
	logged := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, logged, engineLines+1)
	assert.Contains(t, logged[0], `line="Error: No encoding found for the sequence \xe6"`)
	assert.Contains(t, logged[engineLines], "lines=993")

	buf.Reset()
	logEngineOutput([]byte(long))
	assert.Contains(t, buf.String(), "line="+strings.Repeat("x", engineLineLen)+"\n", "cut")

	buf.Reset()
	logEngineOutput(nil)
	assert.Empty(t, buf.String())
}
