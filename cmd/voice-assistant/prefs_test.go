package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Saved settings fyne cannot read are moved aside with a word; readable
// or absent ones are left alone.
func TestSetAsideUnreadablePreferences(t *testing.T) {
	for _, tc := range []struct {
		name, content string // "-": no file
		msg           string
	}{
		{"absent", "-", ""},
		{"readable", `{"model_dir":"/模型"}`, ""},
		{"empty", "", "the saved settings were cut short (a run ended while saving them): starting from the defaults; the file is now "},
		{"cut mid-way", `{"model_dir":"/mo`, "the saved settings are not JSON: starting from the defaults; the file is now "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "preferences.json")
			if tc.content != "-" {
				require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			}
			msg, err := setAsideUnreadablePreferences(path)
			require.NoError(t, err)
			if tc.msg == "" {
				assert.Empty(t, msg)
				if tc.content != "-" {
					data, err := os.ReadFile(path)
					require.NoError(t, err)
					assert.Equal(t, tc.content, string(data), "left as it was")
				}
				return
			}
			assert.Equal(t, tc.msg+path+".unreadable", msg)
			assert.NoFileExists(t, path)
			data, err := os.ReadFile(path + ".unreadable")
			require.NoError(t, err)
			assert.Equal(t, tc.content, string(data), "kept for a person to look at")
		})
	}
}
