package app

import (
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

	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/pipeline"
)

// settingsForm is the settings dialog's fields.
type settingsForm struct {
	capture, playback *widget.SelectEntry
	modelDir          *widget.Entry
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
	f.aec.SetChecked(s.AEC)
	f.speculate.SetChecked(s.Speculate)
	f.minSpeech.SetText(s.BargeIn.MinSpeech.String())
	f.minSpeech.Validator = func(v string) error { _, err := parseDuration(v, 10*time.Second); return err }
	f.minWords.SetText(strconv.Itoa(s.BargeIn.MinWords))
	f.minWords.Validator = func(v string) error { _, err := parseWords(v); return err }
	f.resumeAfter.SetText(s.BargeIn.ResumeAfter.String())
	f.resumeAfter.Validator = func(v string) error { _, err := parseDuration(v, 10*time.Second); return err }
	f.backchannels.SetText(strings.Join(s.BargeIn.Backchannels, ", "))
	f.backchannels.Wrapping = fyne.TextWrapWord
	f.prompt.SetText(s.SystemPrompt)
	f.prompt.Wrapping = fyne.TextWrapWord
	f.prompt.SetMinRowsVisible(3)
	return f
}

func parseDuration(v string, most time.Duration) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || d < 0 || d > most {
		return 0, fmt.Errorf("a duration from 0s to %v, such as 500ms", most)
	}
	return d, nil
}

func parseWords(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > 10 {
		return 0, fmt.Errorf("a number of words from 0 to 10")
	}
	return n, nil
}

// settings reads the form over base (which keeps what the form lacks).
func (f *settingsForm) settings(base Settings) (Settings, error) {
	b := pipeline.BargeIn{Mode: pipeline.InterruptPause}
	for _, m := range bargeInModes {
		if m.label == f.bargeIn.Selected {
			b.Mode = m.mode
		}
	}
	var err error
	if b.MinSpeech, err = parseDuration(f.minSpeech.Text, 10*time.Second); err != nil {
		return base, fmt.Errorf("interrupt after speaking: %w", err)
	}
	if b.MinWords, err = parseWords(f.minWords.Text); err != nil {
		return base, fmt.Errorf("interrupt after words: %w", err)
	}
	if b.ResumeAfter, err = parseDuration(f.resumeAfter.Text, 10*time.Second); err != nil {
		return base, fmt.Errorf("go on after: %w", err)
	}
	for _, w := range strings.FieldsFunc(f.backchannels.Text, func(r rune) bool { return r == ',' || r == '，' || r == '\n' }) {
		if w = strings.TrimSpace(w); w != "" {
			b.Backchannels = append(b.Backchannels, w)
		}
	}
	if err := b.Validate(); err != nil {
		return base, err
	}
	base.CaptureDevice, base.PlaybackDevice = f.capture.Text, f.playback.Text
	base.ModelDir = f.modelDir.Text
	base.BargeIn = b
	base.AEC = f.aec.Checked
	base.Speculate = f.speculate.Checked
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
