package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
// writes a whole one. What is not a file at all is moved aside unread: a
// FIFO there blocked the app before its window opened, fyne's open (and
// a read here) waiting for a writer that never comes.
func setAsideUnreadablePreferences(path string) (string, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var what string
	if !info.Mode().IsRegular() {
		what = "are not a file but " + kindOf(info.Mode())
	} else {
		data, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		var values map[string]any
		if json.Unmarshal(data, &values) == nil {
			return "", nil
		}
		what = "were cut short (a run ended while saving them)"
		if len(data) > 0 {
			what = "are not JSON"
		}
	}
	aside, err := setAside(path)
	if err != nil {
		return "", fmt.Errorf("settings %s cannot be read, nor moved aside: %w", path, err)
	}
	return fmt.Sprintf("the saved settings %s: starting from the defaults; the file is now %s", what, aside), nil
}

// setAside renames path to the first of path.unreadable,
// path.unreadable.1, ... not taken: a copy set aside before is kept.
func setAside(path string) (string, error) {
	for n := range maxSetAside {
		aside := path + ".unreadable"
		if n > 0 {
			aside += "." + strconv.Itoa(n)
		}
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			return aside, os.Rename(path, aside)
		}
	}
	return "", fmt.Errorf("%s.unreadable to .%d are all taken: remove them", path, maxSetAside-1)
}

// maxSetAside bounds the copies set aside: past it something rewrites the
// file bad at every launch, and a person must look.
const maxSetAside = 100

// kindOf names what a file of mode is, where it is not a regular file.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode.IsDir():
		return "a folder"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + mode.Type().String() + ")"
}
