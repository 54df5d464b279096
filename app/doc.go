// Package app will hold the fyne desktop/mobile GUI, driven by the same
// pipeline and event stream as cmd/voice-agent.
package app
