package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/testenv"
)

// The binaries scripts/setup builds find their libraries in lib/ beside
// themselves ($ORIGIN/lib), not in the builder's cache: copied anywhere,
// they run, and for a user other than the one who built them (a service's
// own user) too. Their RUNPATH once pointed into the builder's ~/.cache,
// which no other user can enter: "libMNN.so: cannot open shared object
// file".
func TestBuiltBinariesRunFromAnywhereForAnyUser(t *testing.T) {
	agent, err := filepath.Abs("../bin/voice-agent")
	require.NoError(t, err)
	if _, err := os.Stat(agent); err != nil {
		testenv.Missing(t, "bin/voice-agent not built (scripts/setup builds it)")
	}
	out, err := exec.Command("readelf", "-d", agent).Output()
	require.NoError(t, err)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "RUNPATH") || strings.Contains(line, "RPATH") {
			assert.Contains(t, line, "[$ORIGIN/lib]", "the agent looks for its libraries beside itself only")
		}
	}

	// A copy of bin/ in a folder of its own that everyone may enter.
	dir := publicTempDir(t, "relocated-")
	cp, err := exec.Command("cp", "-a", filepath.Dir(agent)+"/.", dir).CombinedOutput()
	require.NoError(t, err, "%s", cp)
	copied := filepath.Join(dir, "voice-agent")
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v: %s", name, args, out)
		assert.Contains(t, string(out), "voice-agent", "%s %v", name, args)
	}
	run(copied, "version")
	if os.Geteuid() != 0 {
		return
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		testenv.Missing(t, "runuser not installed (util-linux)")
	}
	run(runuser, "-u", "nobody", "--", copied, "version")
}

// publicTempDir makes a folder every user may enter, for a run as another
// user (t.TempDir's parent is the test user's alone), removed at the end.
func publicTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	return dir
}
