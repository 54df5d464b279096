package assets

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvCache names the environment variable that overrides the cache.
const EnvCache = "VOICE_MODELS"

// CacheDir is the user's model cache: $VOICE_MODELS if set, else
// $XDG_DATA_HOME/voice-agent/models, else ~/.local/share/voice-agent/models.
// A model's files live in <cache>/<model name>/<file path>.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "voice-agent", "models"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("assets: cache dir: %w (set VOICE_MODELS)", err)
	}
	return filepath.Join(home, ".local", "share", "voice-agent", "models"), nil
}

// Path is the directory that holds model m's files under cache dir.
func Path(dir string, m Model) string {
	return filepath.Join(dir, m.Name)
}
