package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// preferencesPath is where fyne keeps the app's preferences
// (fyne.io/fyne/v2 internal/app/config_xdg.go, config_desktop_darwin.go,
// config_windows.go: rootConfigDir; app/preferences_other.go: storageRoot
// and storagePath).
func preferencesPath(appID string) (string, error) {
	var root string
	switch runtime.GOOS {
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		root = filepath.Join(home, "Library", "Preferences")
	case "windows":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		root = filepath.Join(home, "AppData", "Roaming")
	default:
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		root = dir
	}
	return filepath.Join(root, "fyne", appID, "preferences.json"), nil
}

// setAsideUnreadablePreferences moves a preferences file fyne cannot read
// out of its way, and says what it did ("" when the file is readable or
// absent). fyne writes the file in place, truncating it first
// (app/preferences_nonweb.go: storageWriterForPath, os.Create), so a run
// cut off in between (its X server gone as it quit) left it empty, and
// every launch after printed "Fyne error: Preferences load error: EOF" and
// started from the defaults without a word (fyne-io/fyne#2936). Moved
// aside, the file is there for a person to look at, and the next save
// writes a whole one.
func setAsideUnreadablePreferences(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var values map[string]any
	if json.Unmarshal(data, &values) == nil {
		return "", nil
	}
	aside := path + ".unreadable"
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("settings %s cannot be read, nor moved aside: %w", path, err)
	}
	what := "were cut short (a run ended while saving them)"
	if len(data) > 0 {
		what = "are not JSON"
	}
	return fmt.Sprintf("the saved settings %s: starting from the defaults; the file is now %s", what, aside), nil
}
