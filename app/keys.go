package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// bindKeys makes the keyboard work the assistant: Space is the talk button
// in push-to-talk mode (the wake button in wake-word mode), Esc stops the reply, and the platform's settings
// shortcut (Ctrl+, or Cmd+,) opens the settings.
func (u *UI) bindKeys() {
	if dc, ok := u.win.Canvas().(desktop.Canvas); ok {
		dc.SetOnKeyDown(u.keyDown)
		dc.SetOnKeyUp(u.keyUp)
	}
	u.win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { u.showSettings() })
}

func (u *UI) keyDown(ev *fyne.KeyEvent) {
	switch ev.Name {
	case fyne.KeySpace:
		u.talk.hold(true)
	case fyne.KeyEscape:
		u.ctl.StopReply()
	}
}

func (u *UI) keyUp(ev *fyne.KeyEvent) {
	if ev.Name == fyne.KeySpace {
		u.talk.hold(false)
	}
}
