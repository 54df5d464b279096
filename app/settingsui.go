package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/driver/mobile"
	"fyne.io/fyne/v2/widget"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/pipeline"
)

// settingsForm is the settings dialog's fields.
type settingsForm struct {
	capture, playback *widget.SelectEntry
	modelDir          *widget.Entry
	mirror            *widget.Entry
	bargeIn           *widget.RadioGroup
	minSpeech         *widget.Entry
	minWords          *widget.Entry
	resumeAfter       *widget.Entry
	backchannels      *widget.Entry
	aec               *widget.Check
	speculate         *widget.Check
	prompt            *widget.Entry
}

// Barge-in modes as the dialog names them.
var bargeInModes = []struct {
	mode  pipeline.InterruptMode
	label string
}{
	{pipeline.InterruptPause, "Pause, then stop or go on"},
	{pipeline.InterruptDuck, "Lower the voice, then stop or go on"},
	{pipeline.InterruptOff, "Never: let replies finish"},
}

func newSettingsForm(s Settings) *settingsForm {
	f := &settingsForm{
		capture:      widget.NewSelectEntry(nil),
		playback:     widget.NewSelectEntry(nil),
		modelDir:     widget.NewEntry(),
		mirror:       widget.NewEntry(),
		minSpeech:    widget.NewEntry(),
		minWords:     widget.NewEntry(),
		resumeAfter:  widget.NewEntry(),
		backchannels: widget.NewMultiLineEntry(),
		aec:          widget.NewCheck("Echo cancellation", nil),
		speculate:    widget.NewCheck("Start answering at my first pause", nil),
		prompt:       widget.NewMultiLineEntry(),
	}
	var labels []string
	for _, m := range bargeInModes {
		labels = append(labels, m.label)
	}
	f.bargeIn = widget.NewRadioGroup(labels, nil)
	f.bargeIn.Required = true
	for _, m := range bargeInModes {
		if m.mode == s.BargeIn.Mode {
			f.bargeIn.SetSelected(m.label)
		}
	}
	f.capture.SetText(s.CaptureDevice)
	f.capture.PlaceHolder = "system default"
	f.playback.SetText(s.PlaybackDevice)
	f.playback.PlaceHolder = "system default"
	f.modelDir.SetText(s.ModelDir)
	f.modelDir.PlaceHolder = "model cache"
	f.mirror.SetText(s.Mirror)
	f.mirror.PlaceHolder = "the models' own sources"
	f.mirror.Validator = func(v string) error {
		if v = strings.TrimSpace(v); v != "" {
			return assets.CheckMirror(v)
		}
		return nil
	}
	f.aec.SetChecked(s.AEC)
	f.speculate.SetChecked(s.Speculate)
	f.minSpeech.SetText(s.BargeIn.MinSpeech.String())
	f.minSpeech.Validator = fieldValidator(s, setMinSpeech)
	f.minWords.SetText(strconv.Itoa(s.BargeIn.MinWords))
	f.minWords.Validator = fieldValidator(s, setMinWords)
	f.resumeAfter.SetText(s.BargeIn.ResumeAfter.String())
	f.resumeAfter.Validator = fieldValidator(s, setResumeAfter)
	f.backchannels.SetText(strings.Join(s.BargeIn.Backchannels, ", "))
	f.backchannels.Wrapping = fyne.TextWrapWord
	f.prompt.SetText(s.SystemPrompt)
	f.prompt.Wrapping = fyne.TextWrapWord
	f.prompt.SetMinRowsVisible(3)
	return f
}

// The barge-in fields' text into the setting. They only parse: the
// bounds are the agent's (Settings.Validate).
func setMinSpeech(b *pipeline.BargeIn, v string) (err error) {
	b.MinSpeech, err = parseDuration(v)
	return wrapField("interrupt after speaking", err)
}

func setMinWords(b *pipeline.BargeIn, v string) (err error) {
	b.MinWords, err = strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		err = errors.New("a number of words, such as 2")
	}
	return wrapField("interrupt after words", err)
}

func setResumeAfter(b *pipeline.BargeIn, v string) (err error) {
	b.ResumeAfter, err = parseDuration(v)
	return wrapField("go on after", err)
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return 0, errors.New("a duration such as 500ms")
	}
	return d, nil
}

func wrapField(field string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// fieldValidator checks one field's text as saving the form would: set
// into the settings the form opened with, then validated whole.
func fieldValidator(s Settings, set func(*pipeline.BargeIn, string) error) fyne.StringValidator {
	return func(v string) error {
		if err := set(&s.BargeIn, v); err != nil {
			return err
		}
		return s.Validate()
	}
}

// settings reads the form over base (which keeps what the form lacks).
func (f *settingsForm) settings(base Settings) (Settings, error) {
	b := pipeline.BargeIn{Mode: pipeline.InterruptPause}
	for _, m := range bargeInModes {
		if m.label == f.bargeIn.Selected {
			b.Mode = m.mode
		}
	}
	for _, field := range []struct {
		set  func(*pipeline.BargeIn, string) error
		text string
	}{{setMinSpeech, f.minSpeech.Text}, {setMinWords, f.minWords.Text}, {setResumeAfter, f.resumeAfter.Text}} {
		if err := field.set(&b, field.text); err != nil {
			return base, err
		}
	}
	for _, w := range strings.FieldsFunc(f.backchannels.Text, func(r rune) bool { return r == ',' || r == '，' || r == '\n' }) {
		if w = strings.TrimSpace(w); w != "" {
			b.Backchannels = append(b.Backchannels, w)
		}
	}
	s := base
	s.CaptureDevice, s.PlaybackDevice = f.capture.Text, f.playback.Text
	s.ModelDir = f.modelDir.Text
	s.Mirror = strings.TrimSpace(f.mirror.Text)
	s.BargeIn = b
	s.AEC = f.aec.Checked
	s.Speculate = f.speculate.Checked
	s.SystemPrompt = f.prompt.Text
	if err := s.Validate(); err != nil {
		return base, err
	}
	return s, nil
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
		withHint(widget.NewFormItem("Download mirror", f.mirror), "a base URL (http://mirror.local:8080) in place of each source's host"),
		widget.NewFormItem("When I speak over it", f.bargeIn),
		withHint(widget.NewFormItem("Stop after speaking", f.minSpeech), "even before any word is recognized; 0s stops at once"),
		withHint(widget.NewFormItem("Stop after words", f.minWords), "words that are not backchannels; 0: time alone decides"),
		withHint(widget.NewFormItem("Go on after", f.resumeAfter), "of silence after a cough or a backchannel"),
		withHint(widget.NewFormItem("Backchannels", f.backchannels), "comma-separated; these never stop a reply"),
		widget.NewFormItem("AEC", f.aec),
		withHint(widget.NewFormItem("Faster replies", f.speculate), "nothing plays before I have finished; dropped if I go on"),
		widget.NewFormItem("System prompt", f.prompt),
	}
	// The form scrolls inside a dialog that fits the window, rather than
	// growing past it.
	form := container.NewVScroll(widget.NewForm(items...))
	form.SetMinSize(fyne.NewSize(560, 420))
	d := dialog.NewCustomConfirm("Settings", "Save", "Cancel", form, func(ok bool) {
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
	d.Resize(fyne.NewSize(620, 540))
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

func withHint(item *widget.FormItem, hint string) *widget.FormItem {
	item.HintText = hint
	return item
}

// saveSettings keeps s and restarts a running session so it takes effect.
func (u *UI) saveSettings(s Settings) {
	u.settings = s
	s.Save(u.app.Preferences())
	u.checkModels() // the model directory may have changed
	if u.ctl.Running() {
		u.ctl.Stop()
		u.Start()
	}
}

// holdButton reports being held down, for push-to-talk: the mouse or a
// finger on it opens a turn, letting go ends it.
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
