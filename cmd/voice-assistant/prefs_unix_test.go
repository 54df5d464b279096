//go:build unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Preferences that are not a file are set aside without being opened, so
// the app does not block before its window opens (bug: a FIFO there held
// it, fyne's open waiting for a writer).
func TestSetAsidePreferencesThatAreNotAFile(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		make       func(path string) error
	}{
		{"FIFO", "a named pipe (FIFO)", func(path string) error { return syscall.Mkfifo(path, 0o600) }},
		{"folder", "a folder", func(path string) error { return os.Mkdir(path, 0o700) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "preferences.json")
			require.NoError(t, tc.make(path))
			done := make(chan struct{})
			var msg string
			var err error
			go func() {
				defer close(done)
				msg, err = setAsideUnreadablePreferences(path)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				// Unblock a read of the FIFO so the goroutine ends.
				if w, openErr := os.OpenFile(path, os.O_WRONLY, 0); openErr == nil {
					w.Close()
				}
				<-done
				t.Fatal("blocked on the preferences")
			}
			require.NoError(t, err)
			assert.Equal(t, "the saved settings are not a file but "+tc.kind+": starting from the defaults; the file is now "+path+".unreadable", msg)
			assert.NoFileExists(t, path)
			_, err = os.Lstat(path)
			assert.ErrorIs(t, err, fs.ErrNotExist)
		})
	}
}
