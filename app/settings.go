package app

import (
	"time"

	"fyne.io/fyne/v2"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/wiring"
)

// Settings are what the user can change in the window; they are kept in
// the app's preferences between runs.
type Settings struct {
	CaptureDevice, PlaybackDevice string
	ModelDir                      string
	BargeIn                       bool
	BargeInMin                    time.Duration
	AEC                           bool
	SystemPrompt                  string
	PushToTalk                    bool
}

// Preference keys.
const (
	prefCapture    = "capture_device"
	prefPlayback   = "playback_device"
	prefModelDir   = "model_dir"
	prefBargeIn    = "barge_in"
	prefBargeInMin = "barge_in_min_ms"
	prefAEC        = "aec"
	prefPrompt     = "system_prompt"
	prefPTT        = "push_to_talk"
)

// DefaultSettings are the headless agent's defaults.
func DefaultSettings() Settings {
	d := wiring.DefaultStages()
	return Settings{BargeIn: d.BargeIn, BargeInMin: d.BargeInMin, AEC: d.FrontEnd.AEC, SystemPrompt: d.SystemPrompt}
}

// LoadSettings reads the settings, defaults where nothing was saved.
func LoadSettings(p fyne.Preferences) Settings {
	d := DefaultSettings()
	return Settings{
		CaptureDevice:  p.String(prefCapture),
		PlaybackDevice: p.String(prefPlayback),
		ModelDir:       p.String(prefModelDir),
		BargeIn:        p.BoolWithFallback(prefBargeIn, d.BargeIn),
		BargeInMin:     time.Duration(p.IntWithFallback(prefBargeInMin, int(d.BargeInMin.Milliseconds()))) * time.Millisecond,
		AEC:            p.BoolWithFallback(prefAEC, d.AEC),
		SystemPrompt:   p.StringWithFallback(prefPrompt, d.SystemPrompt),
		PushToTalk:     p.Bool(prefPTT),
	}
}

// Save writes the settings.
func (s Settings) Save(p fyne.Preferences) {
	p.SetString(prefCapture, s.CaptureDevice)
	p.SetString(prefPlayback, s.PlaybackDevice)
	p.SetString(prefModelDir, s.ModelDir)
	p.SetBool(prefBargeIn, s.BargeIn)
	p.SetInt(prefBargeInMin, int(s.BargeInMin.Milliseconds()))
	p.SetBool(prefAEC, s.AEC)
	p.SetString(prefPrompt, s.SystemPrompt)
	p.SetBool(prefPTT, s.PushToTalk)
}

// Apply puts the settings into a session's stages and live device.
func (s Settings) Apply(st *wiring.Stages, dev *device.Config) {
	st.ModelDir = s.ModelDir
	st.BargeIn, st.BargeInMin = s.BargeIn, s.BargeInMin
	st.FrontEnd.AEC = s.AEC
	st.SystemPrompt = s.SystemPrompt
	dev.Capture, dev.Playback = s.CaptureDevice, s.PlaybackDevice
}
