package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/modelstore"
)

// runFunc is an M.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// Isolated runs the tests with the data, config, cache and state directories in
// a temporary folder, removed after, and the go command's settings and
// build cache where they were.
func TestIsolated(t *testing.T) {
	user := t.TempDir()
	for env, val := range map[string]string{
		"XDG_DATA_HOME": filepath.Join(user, "data"), "XDG_CONFIG_HOME": filepath.Join(user, "config"),
		"XDG_CACHE_HOME": filepath.Join(user, "cache"), modelstore.EnvCache: filepath.Join(user, "models"), "GOENV": "", "GOCACHE": "",
	} {
		t.Setenv(env, val)
		if val == "" {
			require.NoError(t, os.Unsetenv(env))
		}
	}
	var dirs map[string]string
	code := Isolated(runFunc(func() int {
		dirs = map[string]string{}
		for _, env := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "GOENV", "GOCACHE"} {
			dirs[env] = os.Getenv(env)
		}
		dirs["cache"], _ = modelstore.CacheDir()
		return 3
	})).Run()
	assert.Equal(t, 3, code, "the tests' exit code")
	assert.Equal(t, filepath.Join(user, "config", "go", "env"), dirs["GOENV"])
	assert.Equal(t, filepath.Join(user, "cache", "go-build"), dirs["GOCACHE"])
	tmp := filepath.Dir(dirs["XDG_DATA_HOME"])
	assert.Equal(t, filepath.Join(tmp, "data", "voice-agent", "models"), dirs["cache"], "the model cache follows XDG_DATA_HOME")
	assert.Equal(t, filepath.Join(tmp, "config"), dirs["XDG_CONFIG_HOME"])
	assert.Equal(t, filepath.Join(tmp, "cache"), dirs["XDG_CACHE_HOME"])
	assert.Equal(t, filepath.Join(tmp, "state"), dirs["XDG_STATE_HOME"], "where the notes tool keeps its notes")
	assert.NoDirExists(t, tmp, "removed after")
}
