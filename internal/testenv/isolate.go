package testenv

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/voiceassistant/voice/internal/modelstore"
)

// M is what a TestMain runs: a *testing.M, or what wraps one (Isolated).
type M interface{ Run() int }

// Isolated is m run with a data, config, cache and state directory of its
// own: XDG_DATA_HOME (and so the model cache; VOICE_MODELS is unset),
// XDG_CONFIG_HOME, XDG_CACHE_HOME and XDG_STATE_HOME (the notes tool's
// notes) point into a new temporary folder,
// removed after, for the tests and every command they start. Tests that
// read the user's directories pass or fail by what that user pulled or
// configured: a folder an earlier pull left in the model cache failed a
// fresh clone's tests. A test that wants the user's cache sets the
// variables back itself, and says so in its name. Every package whose
// tests can reach the cache or the config calls it from TestMain:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Isolated(m)) }
func Isolated(m M) M { return isolated{m} }

type isolated struct{ m M }

func (i isolated) Run() int {
	dir, err := os.MkdirTemp("", "voice-test-dirs")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := isolate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	return i.m.Run()
}

// isolate points the user's directories into dir.
func isolate(dir string) error {
	// The go command a test runs (to build the agent) finds its settings
	// (GOFLAGS, GOTOOLCHAIN: `go env -w`) and its build cache through the
	// same variables: they stay where they are, or it would build from
	// nothing, with other settings. (A build cache `go env -w` moved is
	// not followed: the build is slower, not different.) So does MNN's
	// build (scripts/build-mnn, which scripts/build-arm64 runs): moved, a
	// test would rebuild it for minutes, or, with no MNN source at hand,
	// build the agent without the LLM.
	goDirs := []struct {
		env  string
		user func() (string, error)
		rel  string
	}{
		{"GOENV", os.UserConfigDir, filepath.Join("go", "env")},
		{"GOCACHE", os.UserCacheDir, "go-build"},
		{"MNN_CACHE", os.UserCacheDir, filepath.Join("voice-agent", "mnn")},
	}
	for _, d := range goDirs {
		if os.Getenv(d.env) != "" {
			continue
		}
		if base, err := d.user(); err == nil {
			if err := os.Setenv(d.env, filepath.Join(base, d.rel)); err != nil {
				return err
			}
		}
	}
	for env, sub := range map[string]string{"XDG_DATA_HOME": "data", "XDG_CONFIG_HOME": "config", "XDG_CACHE_HOME": "cache", "XDG_STATE_HOME": "state"} {
		if err := os.Setenv(env, filepath.Join(dir, sub)); err != nil {
			return err
		}
	}
	return os.Unsetenv(modelstore.EnvCache)
}
