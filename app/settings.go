package app

import (
	"time"

	"fyne.io/fyne/v2"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// Settings are what the user can change in the window; they are kept in
// the app's preferences between runs.
type Settings struct {
	CaptureDevice, PlaybackDevice string
	ModelDir                      string
	BargeIn                       pipeline.BargeIn
	AEC                           bool
	// Speculate starts replies at the user's first pause.
	Speculate    bool
	SystemPrompt string
	PushToTalk   bool
}

// Preference keys.
const (
	prefCapture      = "capture_device"
	prefPlayback     = "playback_device"
	prefModelDir     = "model_dir"
	prefBargeIn      = "barge_in_mode"
	prefMinSpeech    = "barge_in_min_speech_ms"
	prefMinWords     = "barge_in_min_words"
	prefResumeAfter  = "barge_in_resume_after_ms"
	prefBackchannels = "barge_in_backchannels"
	prefAEC          = "aec"
	prefSpeculate    = "speculate"
	prefPrompt       = "system_prompt"
	prefPTT          = "push_to_talk"
)

// DefaultSettings are the headless agent's defaults.
func DefaultSettings() Settings {
	d := wiring.DefaultStages()
	return Settings{BargeIn: d.BargeIn, AEC: d.FrontEnd.AEC, Speculate: d.Speculate, SystemPrompt: d.SystemPrompt}
}

// LoadSettings reads the settings, defaults where nothing was saved (or
// what was saved no longer makes sense).
func LoadSettings(p fyne.Preferences) Settings {
	d := DefaultSettings()
	ms := func(key string, def time.Duration) time.Duration {
		return time.Duration(p.IntWithFallback(key, int(def.Milliseconds()))) * time.Millisecond
	}
	s := Settings{
		CaptureDevice:  p.String(prefCapture),
		PlaybackDevice: p.String(prefPlayback),
		ModelDir:       p.String(prefModelDir),
		BargeIn: pipeline.BargeIn{
			Mode:         pipeline.InterruptMode(p.StringWithFallback(prefBargeIn, string(d.BargeIn.Mode))),
			MinSpeech:    ms(prefMinSpeech, d.BargeIn.MinSpeech),
			MinWords:     p.IntWithFallback(prefMinWords, d.BargeIn.MinWords),
			Backchannels: p.StringListWithFallback(prefBackchannels, d.BargeIn.Backchannels),
			ResumeAfter:  ms(prefResumeAfter, d.BargeIn.ResumeAfter),
		},
		AEC:          p.BoolWithFallback(prefAEC, d.AEC),
		Speculate:    p.BoolWithFallback(prefSpeculate, d.Speculate),
		SystemPrompt: p.StringWithFallback(prefPrompt, d.SystemPrompt),
		PushToTalk:   p.Bool(prefPTT),
	}
	if s.Validate() != nil {
		s.BargeIn = d.BargeIn
	}
	return s
}

// Validate checks s as the agent checks its flags and config file
// (wiring.Stages.Validate): a setting has one set of bounds, and one
// message when it is out of them, wherever it is made.
func (s Settings) Validate() error {
	st := wiring.DefaultStages()
	s.Apply(&st, &device.Config{})
	return st.Validate()
}

// Save writes the settings.
func (s Settings) Save(p fyne.Preferences) {
	p.SetString(prefCapture, s.CaptureDevice)
	p.SetString(prefPlayback, s.PlaybackDevice)
	p.SetString(prefModelDir, s.ModelDir)
	p.SetString(prefBargeIn, string(s.BargeIn.Mode))
	p.SetInt(prefMinSpeech, int(s.BargeIn.MinSpeech.Milliseconds()))
	p.SetInt(prefMinWords, s.BargeIn.MinWords)
	p.SetStringList(prefBackchannels, s.BargeIn.Backchannels)
	p.SetInt(prefResumeAfter, int(s.BargeIn.ResumeAfter.Milliseconds()))
	p.SetBool(prefAEC, s.AEC)
	p.SetBool(prefSpeculate, s.Speculate)
	p.SetString(prefPrompt, s.SystemPrompt)
	p.SetBool(prefPTT, s.PushToTalk)
}

// Apply puts the settings into a session's stages and live device.
func (s Settings) Apply(st *wiring.Stages, dev *device.Config) {
	st.ModelDir = s.ModelDir
	st.BargeIn = s.BargeIn
	st.FrontEnd.AEC = s.AEC
	st.Speculate = s.Speculate
	st.SystemPrompt = s.SystemPrompt
	dev.Capture, dev.Playback = s.CaptureDevice, s.PlaybackDevice
}
