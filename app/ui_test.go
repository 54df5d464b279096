package app

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
)

func newTestUI(t *testing.T, opts Options) *UI {
	t.Helper()
	u := New(test.NewTempApp(t), opts)
	t.Cleanup(u.Close)
	return u
}

func (u *UI) feed(events ...pipeline.Event) {
	for _, e := range events {
		u.update(func(m *Model) { m.Apply(e) })
	}
}

func lineTexts(u *UI) []string {
	var out []string
	for _, l := range u.lines {
		out = append(out, l.Text)
	}
	return out
}

func TestUIScriptedConversation(t *testing.T) {
	u := newTestUI(t, Options{})
	assert.Equal(t, "Idle", u.status.Text)
	assert.Equal(t, "Start listening", u.startStop.Text)
	assert.Equal(t, "Last turn: none yet", u.latencyText.Text)

	u.feed(demoEvents[:5]...)
	assert.Equal(t, "User speaking", u.status.Text)
	assert.Equal(t, "… what is the weather", u.partial.Text)
	assert.Equal(t, "You: speaking", u.userVoice.Text)
	assert.Empty(t, u.lines)

	u.feed(demoEvents[5:13]...)
	assert.Equal(t, "Thinking", u.status.Text)
	assert.Empty(t, u.partial.Text)
	assert.Equal(t, []string{"You: what is the weather like today", "Assistant: It is sunny …"}, lineTexts(u), "the reply streams")
	assert.Equal(t, "Assistant: speaking", u.assistantVoice.Text)

	u.feed(demoEvents[13:21]...)
	assert.Equal(t, "Interrupted", u.status.Text)
	assert.Equal(t, "Assistant: It is sunny [interrupted]", u.lines[1].Text)
	assert.Equal(t, widget.WarningImportance, u.lines[1].Importance, "interrupted replies stand out")
	assert.Equal(t, "Last turn: endpointing 700 ms | ASR final 0 ms | first token 120 ms | first audio 240 ms", u.latencyText.Text)
	assert.Equal(t, []float64{700, 0, 120, 240}, u.latencyBar.Layout.(*barLayout).weights)

	u.feed(demoEvents[21:]...)
	assert.Equal(t, "Listening", u.status.Text)
	assert.Len(t, u.lines, 4)
	assert.Equal(t, "Session: 2 turns (1 interrupted)  end-to-end p50 980 ms  p95 980 ms", u.summary.Text)
	assert.False(t, u.errText.Visible())

	// The bar's segments follow the figures: endpointing is the widest.
	bar := u.latencyBar.Objects
	assert.Greater(t, bar[0].Size().Width, bar[3].Size().Width)
	assert.Zero(t, bar[1].Size().Width)

	u.clearConversation()
	assert.Empty(t, u.lines)
	assert.Equal(t, "Last turn: none yet", u.latencyText.Text)
}

func TestUIErrorView(t *testing.T) {
	u := newTestUI(t, Options{})
	u.feed(pipeline.Event{Type: pipeline.EvError, Err: "asr: model broken"})
	assert.True(t, u.errText.Visible())
	assert.Equal(t, "Error: asr: model broken", u.errText.Text)
	assert.Equal(t, widget.DangerImportance, u.errText.Importance)
	assert.False(t, u.download.Visible())

	u.update(func(m *Model) {
		m.Stopped(nil)
		m.Missing = &Problem{Message: "VAD: Silero v5 model not found", Models: []string{"silero-vad-v5"}, Bytes: 2327524}
	})
	assert.Equal(t, "Missing: VAD: Silero v5 model not found", u.errText.Text)
	assert.True(t, u.download.Visible())
	assert.Equal(t, "Download silero-vad-v5 (2.2 MiB)", u.download.Text)
	assert.False(t, u.progress.Visible())

	u.update(func(m *Model) {
		m.Download = &DownloadProgress{Label: "silero-vad-v5/silero_vad_v5.onnx: 1.1 MiB of 2.2 MiB", Fraction: 0.5}
	})
	assert.False(t, u.download.Visible(), "no second download while one runs")
	assert.True(t, u.progress.Visible())
	assert.Equal(t, 0.5, u.progress.Value)
	assert.Equal(t, "silero-vad-v5/silero_vad_v5.onnx: 1.1 MiB of 2.2 MiB", u.progressLabel.Text)

	u.update(func(m *Model) { m.Started() })
	assert.False(t, u.errText.Visible(), "a new session clears the problem")

	u.update(func(m *Model) { m.Notice = "running half duplex" })
	assert.Equal(t, "Note: running half duplex", u.errText.Text)
	assert.Equal(t, widget.WarningImportance, u.errText.Importance, "a notice is no error")
}

func TestUIReplaySession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var dumps []string
	u := newTestUI(t, Options{
		Source:       Replay{Input: demoInput(t)},
		Stages:       demoStages(),
		OnSessionEnd: func(u *UI) { dumps = append(dumps, u.Dump()) },
	})
	test.Tap(u.startStop)
	u.ctl.Wait()
	require.Len(t, dumps, 1)
	want, err := os.ReadFile("testdata/demo_window.txt")
	require.NoError(t, err)
	assert.Equal(t, string(want), dumps[0])
	assert.Equal(t, "Start listening", u.startStop.Text)
}

func TestUIPushToTalkAndMute(t *testing.T) {
	u := newTestUI(t, Options{})
	g := &u.ctl.Gate
	assert.True(t, g.Open())
	assert.True(t, u.talk.Disabled(), "hands-free needs no talk button")

	u.mode.SetSelected(pushToTalk)
	assert.False(t, g.Open())
	require.False(t, u.talk.Disabled())
	u.talk.MouseDown(&desktop.MouseEvent{})
	assert.True(t, g.Open())
	u.talk.MouseUp(&desktop.MouseEvent{})
	assert.False(t, g.Open())

	u.mode.SetSelected(handsFree)
	test.Tap(u.mute)
	assert.False(t, g.Open())
	test.Tap(u.mute)
	assert.True(t, g.Open())
}

func TestUISettingsSaved(t *testing.T) {
	a := test.NewTempApp(t)
	u := New(a, Options{})
	assert.Equal(t, DefaultSettings(), u.settings)

	f := newSettingsForm(u.settings)
	f.capture.SetText("USB mic")
	f.modelDir.SetText("/models")
	assert.Equal(t, bargeInModes[0].label, f.bargeIn.Selected, "the default, pause")
	f.bargeIn.SetSelected(bargeInModes[1].label)
	f.minSpeech.SetText("400ms")
	f.minWords.SetText("2")
	f.resumeAfter.SetText("0s")
	f.backchannels.SetText("yeah, 嗯，uh-huh")
	f.aec.SetChecked(false)
	f.speculate.SetChecked(false)
	f.prompt.SetText("Be terse.")
	s, err := f.settings(u.settings)
	require.NoError(t, err)
	u.saveSettings(s)
	u.mode.SetSelected(pushToTalk)

	again := New(a, Options{})
	want := Settings{CaptureDevice: "USB mic", ModelDir: "/models", SystemPrompt: "Be terse.", PushToTalk: true,
		BargeIn: pipeline.BargeIn{Mode: pipeline.InterruptDuck, MinSpeech: 400 * time.Millisecond, MinWords: 2,
			Backchannels: []string{"yeah", "嗯", "uh-huh"}}}
	assert.Equal(t, want, again.settings)
	assert.Equal(t, pushToTalk, again.mode.Selected)
	assert.Equal(t, bargeInModes[1].label, newSettingsForm(again.settings).bargeIn.Selected)

	for _, bad := range []struct {
		field *widget.Entry
		text  string
	}{
		{f.minSpeech, ""}, {f.minSpeech, "soon"}, {f.minSpeech, "-1s"}, {f.minSpeech, "11s"},
		{f.minWords, "-1"}, {f.minWords, "many"}, {f.resumeAfter, "1h"}, {f.backchannels, "yeah, ..."},
	} {
		old := bad.field.Text
		bad.field.SetText(bad.text)
		_, err := f.settings(u.settings)
		assert.Error(t, err, "%q", bad.text)
		bad.field.SetText(old)
	}
}

// The download button fetches the missing models through the asset
// manager (here from a mirror serving the real Silero file), then starts
// the session.
func TestUIDownloadButton(t *testing.T) {
	data, err := os.ReadFile(testenv.Model(t, "silero_vad_v5.onnx"))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "model", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	cache := t.TempDir()
	u := newTestUI(t, Options{
		Source: Replay{Input: demoInput(t)},
		Stages: demoStages(),
		Puller: assets.Puller{Dir: cache, Mirror: srv.URL},
	})
	u.update(func(m *Model) {
		m.Missing = &Problem{Message: "VAD: Silero v5 model not found", Models: []string{"silero-vad-v5"}, Bytes: int64(len(data))}
	})
	require.True(t, u.download.Visible())
	test.Tap(u.download)
	u.ctl.Wait()

	man, err := assets.LoadManifest()
	require.NoError(t, err)
	mod, ok := man.Model("silero-vad-v5")
	require.True(t, ok)
	st, err := (&assets.Puller{Dir: cache}).Verify(mod)
	require.NoError(t, err)
	for _, f := range st {
		assert.True(t, f.Verified, "%s: %s", f.File.Path, f.Problem)
	}
	assert.False(t, u.download.Visible())
	assert.False(t, u.progress.Visible())
	assert.False(t, u.errText.Visible())
	assert.Len(t, u.lines, 4, "the session ran once the model was in")
}

// The download button stays short however many models are missing (they
// are listed above it), and says when part of the size is unknown.
func TestDownloadLabel(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Models: []string{"silero-vad-v5"}, Bytes: 2327524}, "Download silero-vad-v5 (2.2 MiB)"},
		{Problem{Models: []string{"a", "b", "c"}, Bytes: 3 << 20}, "Download the 3 missing models (3.0 MiB)"},
		{Problem{Models: []string{"a", "llm"}, Bytes: 1 << 20, SizeUnknown: true}, "Download the 2 missing models (1.0 MiB and more)"},
	} {
		assert.Equal(t, tc.want, downloadLabel(&tc.p))
	}
}
