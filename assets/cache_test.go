package assets

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCacheDir(t *testing.T) {
	t.Setenv("VOICE_MODELS", "/x/models")
	d, _ := CacheDir()
	assert.Equal(t, "/x/models", d, "VOICE_MODELS")
	t.Setenv("VOICE_MODELS", "")
	t.Setenv("XDG_DATA_HOME", "/xdg")
	d, _ = CacheDir()
	assert.Equal(t, "/xdg/voice-agent/models", d, "XDG_DATA_HOME")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	d, _ = CacheDir()
	assert.Equal(t, "/home/u/.local/share/voice-agent/models", d, "HOME")
	assert.Equal(t, "/c/m", Path("/c", Model{Name: "m"}), "Path")
}
