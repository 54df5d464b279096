package app

import (
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
