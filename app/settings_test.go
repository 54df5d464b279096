package app

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

// The window takes a barge-in setting exactly when the CLI does, and
// refuses one with the CLI's message (bug: the window had bounds of its
// own, 10 s and 10 words where the agent takes an hour and 100, so a
// config that ran headless could not be set in the window).
func TestSettingsBoundsAreTheCLIs(t *testing.T) {
	test.NewTempApp(t)
	f := newSettingsForm(DefaultSettings())
	for _, tc := range []struct {
		flag  string
		field *widget.Entry
		value string
		valid bool
	}{
		{"barge-in-min-speech", f.minSpeech, "0s", true},
		{"barge-in-min-speech", f.minSpeech, "11s", true},
		{"barge-in-min-speech", f.minSpeech, "1h", true},
		{"barge-in-min-speech", f.minSpeech, "61m", false},
		{"barge-in-min-speech", f.minSpeech, "-1ms", false},
		{"barge-in-min-words", f.minWords, "0", true},
		{"barge-in-min-words", f.minWords, "11", true},
		{"barge-in-min-words", f.minWords, "100", true},
		{"barge-in-min-words", f.minWords, "101", false},
		{"barge-in-min-words", f.minWords, "-1", false},
		{"barge-in-resume-after", f.resumeAfter, "1h", true},
		{"barge-in-resume-after", f.resumeAfter, "2h", false},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			s := wiring.DefaultStages()
			flags := pflag.NewFlagSet("replay", pflag.ContinueOnError)
			s.AddFlags(flags, wiring.ConversationFlags)
			require.NoError(t, flags.Parse([]string{"--" + tc.flag + "=" + tc.value}))
			cli := s.Validate()
			assert.Equal(t, tc.valid, cli == nil, "on the CLI: %v", cli)

			old := tc.field.Text
			defer tc.field.SetText(old)
			tc.field.SetText(tc.value)
			_, err := f.settings(DefaultSettings())
			assert.Equal(t, cli, err, "saving the form")
			assert.Equal(t, cli, tc.field.Validator(tc.value), "the field's own check")
		})
	}
}

// configFile is the config file's keys of wiring.Stages (voice-agent
// config writes them under stages), each with its value as the file
// writes it: a list's items a line each.
func configFile(t *testing.T, s Settings) map[string]string {
	t.Helper()
	st := wiring.DefaultStages()
	s.Apply(&st, &device.Config{})
	data, err := yaml.Marshal(map[string]wiring.Stages{"stages": st})
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))
	file := map[string]string{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], strings.TrimPrefix(path+"."+n.Content[i].Value, "."))
			}
		case yaml.SequenceNode:
			var items []string
			for _, c := range n.Content {
				items = append(items, c.Value)
			}
			file[path] = strings.Join(items, "\n")
		default:
			file[path] = n.Value
		}
	}
	walk(doc.Content[0], "")
	return file
}

// stored is each setting as p holds it, in the config file's text.
func stored(p fyne.Preferences) map[string]string {
	s := map[string]string{}
	for _, e := range storedSettings {
		switch e.field(&Settings{}).(type) {
		case *bool:
			s[e.key] = strconv.FormatBool(p.Bool(e.key))
		case *int:
			s[e.key] = strconv.Itoa(p.Int(e.key))
		case *[]string:
			s[e.key] = strings.Join(p.StringList(e.key), "\n")
		default:
			s[e.key] = p.String(e.key)
		}
	}
	return s
}

// The download mirror is refused in the form as `models pull --mirror`
// refuses it, and a stored one that no longer parses is dropped.
func TestSettingsMirror(t *testing.T) {
	test.NewTempApp(t)
	for _, tc := range []struct{ mirror, err string }{
		{"", ""},
		{" http://mirror.local:8080 ", ""},
		{"https://hf-mirror.com/prefix", ""},
		{"mirror.local", `mirror "mirror.local": not a URL with a host`},
		{"ftp://mirror.local", `mirror "ftp://mirror.local": scheme "ftp" is not supported for download (http or https)`},
	} {
		t.Run(tc.mirror, func(t *testing.T) {
			f := newSettingsForm(DefaultSettings())
			f.mirror.SetText(tc.mirror)
			s, err := f.settings(DefaultSettings())
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				assert.EqualError(t, f.mirror.Validate(), tc.err, "the field says so as it is typed")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSpace(tc.mirror), s.Mirror)
		})
	}
	p := test.NewTempApp(t).Preferences()
	p.SetString("model_mirror", "ftp://mirror.local")
	assert.Empty(t, LoadSettings(p).Mirror)
}

// A stage setting is kept under its key in the config file, in the form
// the file writes it, and comes back as it was saved, in Chinese too.
func TestSettingsRoundTrip(t *testing.T) {
	for _, s := range []Settings{
		{CaptureDevice: "USB mic", PlaybackDevice: "Speakers", ModelDir: "/models", Activation: pipeline.ActivatePush, Mirror: "http://mirror.local:8080",
			BargeIn: pipeline.BargeIn{Mode: pipeline.InterruptDuck, MinSpeech: 1500 * time.Millisecond, MinWords: 3,
				Backchannels: []string{"yeah", "uh-huh", "right"}, ResumeAfter: 2 * time.Second},
			Speculate: true, SystemPrompt: "Be terse.\nAnswer in English."},
		{CaptureDevice: "麦克风", ModelDir: "/模型", Activation: pipeline.ActivateWake,
			BargeIn: pipeline.BargeIn{Mode: pipeline.InterruptOff, MinSpeech: 250 * time.Millisecond, MinWords: 0,
				Backchannels: []string{"嗯", "对", "好的", "是的"}, ResumeAfter: time.Minute},
			AEC: true, SystemPrompt: "你是一个语音助手。请用简短的中文口语回答。"},
	} {
		t.Run(s.SystemPrompt, func(t *testing.T) {
			p := test.NewTempApp(t).Preferences()
			s.Save(p)
			assert.Equal(t, s, LoadSettings(p))

			file, prefs := configFile(t, s), stored(p)
			for _, e := range storedSettings {
				if strings.HasPrefix(e.key, "stages.") {
					_, ok := file[e.key]
					assert.True(t, ok, "%s is not a key of the config file", e.key)
					assert.Equal(t, file[e.key], prefs[e.key], "%s as the config file writes it", e.key)
				}
			}
		})
	}
}

// Each stage setting is stored under the config file's key of the very
// setting of wiring.Stages it sets.
func TestSettingsKeysAreTheConfigFiles(t *testing.T) {
	before := configFile(t, DefaultSettings())
	for _, e := range storedSettings {
		if !strings.HasPrefix(e.key, "stages.") {
			continue // the app's own
		}
		s := DefaultSettings()
		switch v := e.field(&s).(type) {
		case *string:
			*v += "x"
		case *bool:
			*v = !*v
		case *int:
			*v++
		case *[]string:
			*v = append(*v, "x")
		case *time.Duration:
			*v += time.Millisecond
		case *pipeline.InterruptMode:
			*v = pipeline.InterruptOff
		case *pipeline.ActivationMode:
			*v = pipeline.ActivateWake
		}
		var changed []string
		for key, v := range configFile(t, s) {
			if before[key] != v {
				changed = append(changed, key)
			}
		}
		assert.Equal(t, []string{e.key}, changed, "what setting %s sets", e.key)
	}
}

// Settings saved under the app's old keys (durations in milliseconds) are
// kept, and moved to the config file's keys once.
func TestSettingsMoveFromOldKeys(t *testing.T) {
	p := test.NewTempApp(t).Preferences()
	p.SetString("capture_device", "USB mic")
	p.SetBool("push_to_talk", true)
	p.SetString("barge_in_mode", "duck")
	p.SetInt("barge_in_min_speech_ms", 1200)
	p.SetInt("barge_in_min_words", 3)
	p.SetInt("barge_in_resume_after_ms", 0)
	p.SetStringList("barge_in_backchannels", []string{"嗯", "yeah"})
	p.SetBool("aec", false)
	p.SetBool("speculate", true)
	p.SetString("system_prompt", "请简短回答。")
	want := Settings{CaptureDevice: "USB mic", Activation: pipeline.ActivatePush,
		BargeIn: pipeline.BargeIn{Mode: pipeline.InterruptDuck, MinSpeech: 1200 * time.Millisecond, MinWords: 3,
			Backchannels: []string{"嗯", "yeah"}},
		Speculate: true, SystemPrompt: "请简短回答。"}
	assert.Equal(t, want, LoadSettings(p))

	for _, e := range storedSettings {
		if e.old != "" {
			assert.True(t, absent(p, e.old), "%s is moved", e.old)
		}
	}
	assert.True(t, absent(p, oldPushToTalkKey), "push_to_talk is moved")
	assert.Equal(t, "push", p.String("stages.activation"))
	assert.Equal(t, "1.2s", p.String("stages.barge_in.min_speech"))
	assert.Equal(t, want, LoadSettings(p), "from the new keys")

	p.SetString(oldModeKey, "off")
	p.SetBool(oldPushToTalkKey, false)
	assert.Equal(t, want, LoadSettings(p), "a new key wins over an old one")
	assert.True(t, absent(p, oldModeKey))
}

// An old settings file's push_to_talk reads as the activation it meant:
// true as push, false as the default, and a saved activation wins.
func TestSettingsOldPushToTalk(t *testing.T) {
	for _, tc := range []struct {
		name       string
		set        func(fyne.Preferences)
		activation pipeline.ActivationMode
	}{
		{"true", func(p fyne.Preferences) { p.SetBool(oldPushToTalkKey, true) }, pipeline.ActivatePush},
		{"false", func(p fyne.Preferences) { p.SetBool(oldPushToTalkKey, false) }, pipeline.ActivateAlways},
		{"none", func(fyne.Preferences) {}, pipeline.ActivateAlways},
		{"true beside wake", func(p fyne.Preferences) {
			p.SetBool(oldPushToTalkKey, true)
			p.SetString("stages.activation", "wake")
		}, pipeline.ActivateWake},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := test.NewTempApp(t).Preferences()
			tc.set(p)
			assert.Equal(t, tc.activation, LoadSettings(p).Activation)
			assert.Equal(t, tc.activation, LoadSettings(p).Activation, "loaded again")
		})
	}
}

// absent is whether p holds nothing under key, of any type the settings
// were kept as: fyne's preferences answer a key they lack, or hold as
// another type, with the fallback.
func absent(p fyne.Preferences, key string) bool {
	return p.StringWithFallback(key, "?") == "?" && p.IntWithFallback(key, -1) == -1 &&
		p.BoolWithFallback(key, true) && !p.BoolWithFallback(key, false) && p.StringListWithFallback(key, nil) == nil
}
