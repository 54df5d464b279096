package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Each set-aside copy has a name of its own: a second bad file keeps the
// first copy (bug: both became preferences.json.unreadable, the first
// lost).
func TestSetAsideKeepsEveryCopy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preferences.json")
	for i, content := range []string{"", "{bad", "{worse"} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		msg, err := setAsideUnreadablePreferences(path)
		require.NoError(t, err)
		aside := path + ".unreadable"
		if i > 0 {
			aside += "." + strconv.Itoa(i)
		}
		assert.True(t, strings.HasSuffix(msg, "the file is now "+aside), msg)
		data, err := os.ReadFile(aside)
		require.NoError(t, err)
		assert.Equal(t, content, string(data))
	}
	data, err := os.ReadFile(path + ".unreadable")
	require.NoError(t, err)
	assert.Empty(t, data, "the first copy is kept")
}
