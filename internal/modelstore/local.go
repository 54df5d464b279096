package modelstore

// This file finds the copies that scripts/setup installs under
// third_party/ in the source tree.

import (
	"os"
	"path/filepath"
)

// LocalDir is the folder, relative to the project root, where
// scripts/setup installs runtime files.
const LocalDir = "third_party"

// Local finds rel (e.g. "models/silero_vad_v5.onnx") under the project's
// third_party/ folder, looking up from the executable's folder and from
// the working directory, so both bin/voice-agent and `go test` in any
// package find what scripts/setup installed.
func Local(rel string) (string, bool) {
	var starts []string
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			p := filepath.Join(dir, LocalDir, rel)
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", false
}
