package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeTryIt runs the README's first section as a newcomer would
// paste it: every shell line of "Try it without downloading a model", in
// order, from the repository root, with bin/voice-agent the agent built
// for these tests and /tmp/ a folder of the test's own. scripts/setup has
// run already (this is its suite) and the desktop app needs a display
// (app/ replays the demo under Xvfb), so those two lines are left out.
func TestReadmeTryIt(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	lines := readmeShellLines(t, string(readme), "## Try it without downloading a model")
	tmp := t.TempDir() + "/"
	var ran []string
	for _, line := range lines {
		if strings.HasPrefix(line, "scripts/setup") || strings.HasPrefix(line, "bin/voice-assistant") {
			continue
		}
		line = strings.ReplaceAll(line, "/tmp/", tmp)
		line = strings.ReplaceAll(line, "bin/voice-agent", binary)
		cmd := exec.CommandContext(t.Context(), "bash", "-euo", "pipefail", "-c", line)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "README line %q:\n%s", line, out)
		ran = append(ran, line)
	}
	require.Len(t, ran, 5, "the demo replay, and the VoiceBench sample's four lines")

	// What each step says it leaves.
	assert.FileExists(t, filepath.Join(tmp, "reply.wav"))
	results, err := filepath.Glob(filepath.Join(tmp, "vb-out", "*"))
	require.NoError(t, err)
	assert.NotEmpty(t, results, "voicebench run wrote no results")
}

// readmeShellLines returns the commands of the ```sh blocks under heading,
// up to the next heading of its level, with continued lines joined and
// comments dropped.
func readmeShellLines(t *testing.T, text, heading string) []string {
	t.Helper()
	_, section, ok := strings.Cut(text, "\n"+heading+"\n")
	require.True(t, ok, "README.md has no %q", heading)
	section, _, _ = strings.Cut(section, "\n## ")
	var lines []string
	inBlock, cont := false, ""
	for _, raw := range strings.Split(section, "\n") {
		switch {
		case raw == "```sh":
			inBlock = true
			continue
		case strings.HasPrefix(raw, "```"):
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		line, _, _ := strings.Cut(raw, " #")
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, `\`) {
			cont += strings.TrimSuffix(line, `\`) + " "
			continue
		}
		if line = cont + line; line != "" {
			lines = append(lines, line)
		}
		cont = ""
	}
	require.NotEmpty(t, lines, "no ```sh block under %q", heading)
	return lines
}
