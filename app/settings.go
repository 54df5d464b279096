package app

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"

	"github.com/voiceassistant/voice/assets"
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
	// Activation is what opens a turn: any speech, the talk button or a
	// wake phrase (the button's wake in the window).
	Activation pipeline.ActivationMode
	// Mirror, when set, serves the model downloads in place of their
	// sources' hosts, as `voice-agent models pull --mirror` does.
	Mirror string
}

// storedSetting is one setting as the preferences keep it.
type storedSetting struct {
	// key is, for a setting of the agent's stages, its key path in the
	// config file, and the value is kept in the form the file writes (a
	// duration as "400ms"), so that the window and the file (whose keys
	// name the flags) name and write a setting alike. The app's own
	// settings have keys of their own.
	key string
	// old is where the app kept a stage setting before its settings took
	// the config file's keys (2026-12-06), durations in whole
	// milliseconds: read where key is absent, and moved to key by the
	// first load (LoadSettings), so that existing users keep their
	// settings. It, oldModeKey and what reads them may go in the release
	// after the first numbered one (there is none yet), which will have
	// moved them.
	old string
	// field is the setting in Settings.
	field func(*Settings) any
}

// oldModeKey is where the barge-in mode was kept before 2026-12-06.
const oldModeKey = "barge_in_mode"

// oldPushToTalkKey is where push-to-talk was kept, as a bool, before the
// activation took its place (issue 72): true reads as activation push.
const oldPushToTalkKey = "push_to_talk"

// storedSettings are the settings kept between runs.
var storedSettings = []storedSetting{
	{"capture_device", "", func(s *Settings) any { return &s.CaptureDevice }},
	{"playback_device", "", func(s *Settings) any { return &s.PlaybackDevice }},
	{"model_dir", "", func(s *Settings) any { return &s.ModelDir }},
	{"model_mirror", "", func(s *Settings) any { return &s.Mirror }},
	{"stages.barge_in.mode", oldModeKey, func(s *Settings) any { return &s.BargeIn.Mode }},
	{"stages.barge_in.min_speech", "barge_in_min_speech_ms", func(s *Settings) any { return &s.BargeIn.MinSpeech }},
	{"stages.barge_in.min_words", "barge_in_min_words", func(s *Settings) any { return &s.BargeIn.MinWords }},
	{"stages.barge_in.backchannels", "barge_in_backchannels", func(s *Settings) any { return &s.BargeIn.Backchannels }},
	{"stages.barge_in.resume_after", "barge_in_resume_after_ms", func(s *Settings) any { return &s.BargeIn.ResumeAfter }},
	{"stages.frontend.aec", "aec", func(s *Settings) any { return &s.AEC }},
	{"stages.speculate", "speculate", func(s *Settings) any { return &s.Speculate }},
	{"stages.system_prompt", "system_prompt", func(s *Settings) any { return &s.SystemPrompt }},
	{"stages.activation", "", func(s *Settings) any { return &s.Activation }},
}

// load reads the setting into s, whose value stays where p has none (or
// one that does not parse).
func (e storedSetting) load(p fyne.Preferences, s *Settings) {
	switch v := e.field(s).(type) {
	case *string:
		*v = p.StringWithFallback(e.key, legacy(e, p.StringWithFallback, *v))
	case *bool:
		*v = p.BoolWithFallback(e.key, legacy(e, p.BoolWithFallback, *v))
	case *int:
		*v = p.IntWithFallback(e.key, legacy(e, p.IntWithFallback, *v))
	case *[]string:
		*v = p.StringListWithFallback(e.key, legacy(e, p.StringListWithFallback, *v))
	case flagValue: // a mode
		_ = v.Set(p.StringWithFallback(e.key, legacy(e, p.StringWithFallback, v.String())))
	case *time.Duration:
		if ms := legacy(e, p.IntWithFallback, -1); ms >= 0 {
			*v = time.Duration(ms) * time.Millisecond
		}
		if d, err := time.ParseDuration(p.StringWithFallback(e.key, v.String())); err == nil {
			*v = d
		}
	default:
		panic(fmt.Sprintf("app: setting %s: no stored form for %T", e.key, v))
	}
}

// flagValue is a setting kept as its flag spells it.
type flagValue interface {
	Set(string) error
	String() string
}

// legacy is the setting under its old key, def where it has none.
func legacy[T any](e storedSetting, get func(key string, fallback T) T, def T) T {
	if e.old == "" {
		return def
	}
	return get(e.old, def)
}

// save writes the setting of s, under its key alone.
func (e storedSetting) save(p fyne.Preferences, s *Settings) {
	switch v := e.field(s).(type) {
	case *string:
		p.SetString(e.key, *v)
	case *bool:
		p.SetBool(e.key, *v)
	case *int:
		p.SetInt(e.key, *v)
	case *[]string:
		p.SetStringList(e.key, *v)
	case fmt.Stringer: // a duration or a mode, as the config file writes it
		p.SetString(e.key, v.String())
	default:
		panic(fmt.Sprintf("app: setting %s: no stored form for %T", e.key, v))
	}
	if e.old != "" {
		p.RemoveValue(e.old)
	}
}

// DefaultSettings are the headless agent's defaults.
func DefaultSettings() Settings {
	d := wiring.DefaultStages()
	return Settings{BargeIn: d.BargeIn, AEC: d.FrontEnd.AEC, Speculate: d.Speculate, SystemPrompt: d.SystemPrompt, Activation: d.Activation}
}

// LoadSettings reads the settings, defaults where nothing was saved (or
// what was saved no longer makes sense).
func LoadSettings(p fyne.Preferences) Settings {
	d := DefaultSettings()
	s := d
	for _, e := range storedSettings {
		e.load(p, &s)
	}
	oldPush := p.BoolWithFallback(oldPushToTalkKey, false)
	if oldPush && p.String("stages.activation") == "" {
		s.Activation = pipeline.ActivatePush
	}
	if s.Validate() != nil {
		s.BargeIn, s.Mirror = d.BargeIn, d.Mirror
	}
	// Settings were saved all at once, the mode never empty: with the
	// mode under its old key, they all are, and are moved here, once.
	if p.String(oldModeKey) != "" || oldPush {
		s.Save(p)
	}
	return s
}

// Validate checks s as the agent checks its flags and config file
// (wiring.Stages.Validate): a setting has one set of bounds, and one
// message when it is out of them, wherever it is made.
func (s Settings) Validate() error {
	st := wiring.DefaultStages()
	s.Apply(&st, &device.Config{})
	if err := st.Validate(); err != nil {
		return err
	}
	if s.Mirror != "" {
		return assets.CheckMirror(s.Mirror)
	}
	return nil
}

// Save writes the settings.
func (s Settings) Save(p fyne.Preferences) {
	for _, e := range storedSettings {
		e.save(p, &s)
	}
	p.RemoveValue(oldPushToTalkKey)
}

// Apply puts the settings into a session's stages and live device.
func (s Settings) Apply(st *wiring.Stages, dev *device.Config) {
	st.ModelDir = s.ModelDir
	st.BargeIn = s.BargeIn
	st.FrontEnd.AEC = s.AEC
	st.Speculate = s.Speculate
	st.SystemPrompt = s.SystemPrompt
	st.Activation = s.Activation
	dev.Capture, dev.Playback = s.CaptureDevice, s.PlaybackDevice
}
