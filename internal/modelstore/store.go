// Package modelstore says where model files are kept on this machine (the
// user's model cache, the source tree's third_party/) and hashes them.
// These are the pieces of package assets that the engines' loaders need
// too (internal/onnx finds its runtime, internal/derived names a model by
// its content); they live here, below assets, so that internal/ imports
// nothing above it.
package modelstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
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
		// assets: the prefix users have always seen for the model cache.
		return "", fmt.Errorf("assets: cache dir: %w (set VOICE_MODELS)", err)
	}
	return filepath.Join(home, ".local", "share", "voice-agent", "models"), nil
}

// HashFile is the sha256 of the file at path, in hex, and its length.
func HashFile(path string) (string, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
