// Package app is the fyne desktop GUI, driven by the same pipeline and
// event stream as cmd/voice-agent (built by wiring).
//
// Model is the window's state, fed by pipeline events and free of any GUI;
// Controller runs sessions (on a Live or Replay Source) and model
// downloads off the UI thread and reports to the model through fyne.Do;
// UI is the thin fyne view bound to both.
package app
