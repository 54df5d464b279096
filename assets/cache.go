package assets

import (
	"path/filepath"

	"github.com/voiceassistant/voice/internal/modelstore"
)

// The cache, the source tree's copies and the hash are modelstore's,
// which the loaders under internal/ share; assets names them for its
// callers, who need nothing else from there.
const (
	// EnvCache names the environment variable that overrides the cache.
	EnvCache = modelstore.EnvCache
	// LocalDir is the folder, relative to the project root, where
	// scripts/setup installs runtime files.
	LocalDir = modelstore.LocalDir
)

// CacheDir is the user's model cache (modelstore.CacheDir).
func CacheDir() (string, error) { return modelstore.CacheDir() }

// Local finds rel under the project's third_party/ folder
// (modelstore.Local).
func Local(rel string) (string, bool) { return modelstore.Local(rel) }

// HashFile is the sha256 of the file at path, in hex, and its length.
func HashFile(path string) (string, int64, error) { return modelstore.HashFile(path) }

// Path is the directory that holds model m's files under cache dir.
func Path(dir string, m Model) string {
	return filepath.Join(dir, m.Name)
}
