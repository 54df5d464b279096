package app

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/driver/mobile"
	"fyne.io/fyne/v2/widget"

	"github.com/voiceassistant/voice/audio/device"
)

// settingsForm is the settings dialog's fields.
type settingsForm struct {
	capture, playback *widget.SelectEntry
	modelDir          *widget.Entry
	bargeIn, aec      *widget.Check
	bargeInMin        *widget.Entry
	prompt            *widget.Entry
}

func newSettingsForm(s Settings) *settingsForm {
	f := &settingsForm{
		capture:    widget.NewSelectEntry(nil),
		playback:   widget.NewSelectEntry(nil),
		modelDir:   widget.NewEntry(),
		bargeIn:    widget.NewCheck("Let me interrupt by speaking", nil),
		aec:        widget.NewCheck("Echo cancellation", nil),
		bargeInMin: widget.NewEntry(),
		prompt:     widget.NewMultiLineEntry(),
	}
	f.capture.SetText(s.CaptureDevice)
	f.capture.PlaceHolder = "system default"
	f.playback.SetText(s.PlaybackDevice)
	f.playback.PlaceHolder = "system default"
	f.modelDir.SetText(s.ModelDir)
	f.modelDir.PlaceHolder = "model cache"
	f.bargeIn.SetChecked(s.BargeIn)
	f.aec.SetChecked(s.AEC)
	f.bargeInMin.SetText(s.BargeInMin.String())
	f.bargeInMin.Validator = func(v string) error {
		_, err := parseMinSpeech(v)
		return err
	}
	f.prompt.SetText(s.SystemPrompt)
	f.prompt.Wrapping = fyne.TextWrapWord
	f.prompt.SetMinRowsVisible(3)
	return f
}

func parseMinSpeech(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > 5*time.Second {
		return 0, fmt.Errorf("a duration from 0s to 5s, such as 250ms")
	}
	return d, nil
}

// settings reads the form over base (which keeps what the form lacks).
func (f *settingsForm) settings(base Settings) (Settings, error) {
	minSpeech, err := parseMinSpeech(f.bargeInMin.Text)
	if err != nil {
		return base, fmt.Errorf("barge-in minimum: %w", err)
	}
	base.CaptureDevice, base.PlaybackDevice = f.capture.Text, f.playback.Text
	base.ModelDir = f.modelDir.Text
	base.BargeIn, base.BargeInMin = f.bargeIn.Checked, minSpeech
	base.AEC = f.aec.Checked
	base.SystemPrompt = f.prompt.Text
	return base, nil
}

func (u *UI) showSettings() {
	f := newSettingsForm(u.settings)
	browse := widget.NewButton("Browse…", func() {
		dialog.ShowFolderOpen(func(dir fyne.ListableURI, err error) {
			if err == nil && dir != nil {
				f.modelDir.SetText(dir.Path())
			}
		}, u.win)
	})
	items := []*widget.FormItem{
		widget.NewFormItem("Input device", f.capture),
		widget.NewFormItem("Output device", f.playback),
		widget.NewFormItem("Model directory", container.NewBorder(nil, nil, nil, browse, f.modelDir)),
		widget.NewFormItem("Barge-in", f.bargeIn),
		widget.NewFormItem("Barge-in minimum", f.bargeInMin),
		widget.NewFormItem("AEC", f.aec),
		widget.NewFormItem("System prompt", f.prompt),
	}
	d := dialog.NewForm("Settings", "Save", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		s, err := f.settings(u.settings)
		if err != nil {
			dialog.ShowError(err, u.win)
			return
		}
		u.saveSettings(s)
	}, u.win)
	d.Resize(fyne.NewSize(560, 480))
	d.Show()
	// Listing devices asks the audio backend, which may be slow: not on
	// the UI thread.
	go func() {
		infos, err := device.List("")
		if err != nil {
			return // the entries still take a name
		}
		var caps, plays []string
		for _, in := range infos {
			if in.Kind == "capture" {
				caps = append(caps, in.Name)
			} else {
				plays = append(plays, in.Name)
			}
		}
		fyne.Do(func() {
			f.capture.SetOptions(caps)
			f.playback.SetOptions(plays)
		})
	}()
}

// saveSettings keeps s and restarts a running session so it takes effect.
func (u *UI) saveSettings(s Settings) {
	u.settings = s
	s.Save(u.app.Preferences())
	if u.ctl.Running() {
		u.ctl.Stop()
		u.Start()
	}
}

// holdButton reports being held down, for push-to-talk: the mouse or a
// finger on it opens the microphone, letting go closes it.
type holdButton struct {
	widget.Button
	onHold func(bool)
}

func newHoldButton(label string, onHold func(bool)) *holdButton {
	b := &holdButton{onHold: onHold}
	b.Text = label
	b.ExtendBaseWidget(b)
	return b
}

func (b *holdButton) hold(v bool) {
	if !b.Disabled() || !v {
		b.onHold(v)
	}
}

func (b *holdButton) MouseDown(*desktop.MouseEvent)  { b.hold(true) }
func (b *holdButton) MouseUp(*desktop.MouseEvent)    { b.hold(false) }
func (b *holdButton) TouchDown(*mobile.TouchEvent)   { b.hold(true) }
func (b *holdButton) TouchUp(*mobile.TouchEvent)     { b.hold(false) }
func (b *holdButton) TouchCancel(*mobile.TouchEvent) { b.hold(false) }
