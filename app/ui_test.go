package app

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/internal/testenv"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/wiring"
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
	for _, b := range u.bubbles {
		out = append(out, b.line())
	}
	return out
}

func TestUIScriptedConversation(t *testing.T) {
	u := newTestUI(t, Options{})
	assert.Equal(t, "Idle", u.status.Text)
	assert.Equal(t, "Start listening", u.startStop.Text)
	assert.Equal(t, "Last turn: none yet", u.latencyText.Text)

	u.feed(demoEvents[:demoUserSpeaks]...)
	assert.Equal(t, "User speaking", u.status.Text)
	assert.Equal(t, "… what is the weather", u.partial.Text)
	assert.Equal(t, "You: speaking", u.userVoice.Text)
	assert.Empty(t, u.bubbles)

	u.feed(demoEvents[demoUserSpeaks:demoReplyPlays]...)
	assert.Equal(t, "Thinking", u.status.Text)
	assert.Empty(t, u.partial.Text)
	assert.Equal(t, []string{"[You · 0:00] what is the weather like today", "[Assistant · 0:00 · …] It is sunny"}, lineTexts(u), "the reply streams")
	assert.Equal(t, "Assistant: speaking", u.assistantVoice.Text)
	// The first reply plays: its turn counts, its figures are to come.
	assert.Equal(t, "Session: 1 turn", u.summary.Text)
	assert.Equal(t, "Last turn: figures once its reply has played", u.latencyText.Text)

	u.feed(demoEvents[demoReplyPlays:demoInterrupted]...)
	assert.Equal(t, "Interrupted", u.status.Text)
	assert.Equal(t, "[Assistant · 0:00 · interrupted] It is sunny", u.bubbles[1].line())
	assert.Equal(t, widget.WarningImportance, u.bubbles[1].head.Importance, "interrupted replies stand out")
	assert.Equal(t, widget.HighImportance, u.bubbles[0].head.Importance, "the user's turns stand out from the replies")
	assert.Equal(t, "Last turn: 1060 ms = endpointing 700 + ASR final 0 + first token 120 + first audio 240 + playback 0", u.latencyText.Text)
	assert.Equal(t, []float64{700, 0, 120, 240, 0}, u.latencyBar.Layout.(*barLayout).weights)

	u.feed(demoEvents[demoInterrupted:]...)
	assert.Equal(t, "Listening", u.status.Text)
	assert.Len(t, u.bubbles, 4)
	assert.Equal(t, "Session: 2 turns (1 interrupted)  end-to-end p50 980 ms  p95 980 ms", u.summary.Text)
	assert.False(t, u.errText.Visible())

	// The bar's segments follow the figures: endpointing is the widest.
	bar := u.latencyBar.Objects
	assert.Greater(t, bar[0].Size().Width, bar[3].Size().Width)
	assert.Zero(t, bar[1].Size().Width)

	u.clearConversation()
	assert.Empty(t, u.bubbles)
	assert.Equal(t, "Last turn: none yet", u.latencyText.Text)
}

func TestUIErrorView(t *testing.T) {
	u := newTestUI(t, Options{})
	u.feed(pipeline.Event{Type: pipeline.EvError, Err: "asr: model broken"})
	assert.True(t, u.errText.Visible())
	assert.Equal(t, "Error: asr: model broken", u.errText.Text)
	assert.Equal(t, widget.DangerImportance, u.errText.Importance)

	u.feed(pipeline.Event{Type: pipeline.EvError, Err: strings.Repeat("long ", 100) + "\nsecond line"})
	assert.Len(t, []rune(u.errText.Text), len("Error: ")+241, "one line, cut, so the window does not grow")
	assert.NotContains(t, u.errText.Text, "second line")

	u.update(func(m *Model) { m.Started() })
	assert.False(t, u.errText.Visible(), "a new session clears the error")

	u.update(func(m *Model) { m.Notice = "running half duplex" })
	assert.Equal(t, "Note: running half duplex", u.errText.Text)
	assert.Equal(t, widget.WarningImportance, u.errText.Importance, "a notice is no error")
}

var sileroMissing = []ModelRow{
	{Stage: "Speech detection", Name: "Silero VAD v5", State: ModelMissing, Models: []string{"silero-vad-v5"}, Bytes: 2327524},
	{Stage: "Speech synthesis", Name: "MOSS-TTS-Nano", State: ModelUnused, Note: "stand-in: tone"},
}

// The models panel lists each stage's model, offers the missing ones with
// their size, shows a download's progress, says why one failed and offers
// it again, and goes away once all is in place.
func TestUIModelsPanel(t *testing.T) {
	u := newTestUI(t, Options{})
	u.update(func(m *Model) { m.Models = sileroMissing })
	require.True(t, u.models.Visible())
	assert.Equal(t, "Speech detection (Silero VAD v5): missing, 2.2 MiB", u.modelRows.Objects[0].(*widget.Label).Text)
	assert.Equal(t, widget.DangerImportance, u.modelRows.Objects[0].(*widget.Label).Importance)
	assert.Equal(t, "Speech synthesis (MOSS-TTS-Nano): not used, stand-in: tone", u.modelRows.Objects[1].(*widget.Label).Text)
	assert.True(t, u.download.Visible())
	assert.Equal(t, "Download Silero VAD v5 (2.2 MiB)", u.download.Text)
	assert.False(t, u.progress.Visible())

	u.update(func(m *Model) {
		m.Download = &DownloadProgress{Label: "silero-vad-v5/silero_vad_v5.onnx: 1.1 MiB of 2.2 MiB", Fraction: 0.5}
	})
	assert.False(t, u.download.Visible(), "no second download while one runs")
	assert.Equal(t, "Cancel download", u.startStop.Text)
	assert.False(t, u.latency.Visible(), "no figures during a download")
	assert.True(t, u.progress.Visible())
	assert.Equal(t, 0.5, u.progress.Value)
	assert.Equal(t, "silero-vad-v5/silero_vad_v5.onnx: 1.1 MiB of 2.2 MiB", u.progressLabel.Text)

	u.update(func(m *Model) { m.Download, m.DownloadErr = nil, "downloading silero-vad-v5: connection refused" })
	assert.True(t, u.downloadErr.Visible(), "a failed download says why")
	assert.Equal(t, "downloading silero-vad-v5: connection refused\n"+downloadHint, u.downloadErr.Text)
	assert.Equal(t, "Try again: download Silero VAD v5 (2.2 MiB)", u.download.Text)
	assert.Contains(t, u.Dump(), "download failed: downloading silero-vad-v5: connection refused")

	u.update(func(m *Model) {
		m.DownloadErr = ""
		m.Models = []ModelRow{{Stage: "Speech detection", Name: "Silero VAD v5", State: ModelInstalled}}
	})
	assert.False(t, u.models.Visible(), "nothing to do: out of the way")
}

// At launch the panel already says what is missing, before any start.
func TestUIModelsPanelAtLaunch(t *testing.T) {
	t.Setenv(assets.EnvCache, t.TempDir())
	s := demoStages()
	s.TTS = wiring.TTSMoss
	u := newTestUI(t, Options{Stages: s})
	require.True(t, u.models.Visible())
	assert.Contains(t, u.Dump(), "Speech synthesis (MOSS-TTS-Nano): missing")
	assert.Contains(t, u.Dump(), "offer: Download MOSS-TTS-Nano (", "one model, though two downloads")
	assert.Contains(t, u.Dump(), "hint: Download the missing models above, then press Start listening")
	assert.False(t, u.errText.Visible(), "nothing has failed yet")

	demo := newTestUI(t, Options{Stages: demoStages()})
	assert.False(t, demo.models.Visible(), "the doubles need no model")
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

// The talk button is the session's: in push mode it sends talk start and
// stop, in wake mode a wake, and hands-free it is off. Choosing the mode
// restarts the session with it.
func TestUIActivationAndMute(t *testing.T) {
	src := &heldSource{started: make(chan Session, 1)}
	u := newTestUI(t, Options{Source: src, Stages: demoStages()})
	g := &u.ctl.Gate
	assert.True(t, u.talk.Disabled(), "hands-free needs no talk button")
	for _, tc := range []struct {
		label, button string
		mode          pipeline.ActivationMode
		down, up      []pipeline.Op
	}{
		{"Push to talk", "Hold to talk (Space)", pipeline.ActivatePush, []pipeline.Op{pipeline.OpTalkStart}, []pipeline.Op{pipeline.OpTalkStop}},
		{"Wake word", "Wake (Space)", pipeline.ActivateWake, []pipeline.Op{pipeline.OpWake}, nil},
	} {
		u.activation.SetSelected(tc.label)
		u.Start()
		s := <-src.started
		assert.Equal(t, tc.mode, s.Stages.Activation, "the session runs with it")
		assert.Equal(t, tc.button, u.talk.Text)
		require.False(t, u.talk.Disabled())
		u.talk.MouseDown(&desktop.MouseEvent{})
		assert.Equal(t, tc.down, received(s.Commands), "pressed")
		u.talk.MouseUp(&desktop.MouseEvent{})
		assert.Equal(t, tc.up, received(s.Commands), "let go")
		u.ctl.Stop()
		u.ctl.Wait()
	}
	u.activation.SetSelected("Always listening")
	assert.True(t, u.talk.Disabled())

	assert.True(t, g.Open())
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
	u.activation.SetSelected("Push to talk")

	again := New(a, Options{})
	want := Settings{CaptureDevice: "USB mic", ModelDir: "/models", SystemPrompt: "Be terse.", Activation: pipeline.ActivatePush,
		BargeIn: pipeline.BargeIn{Mode: pipeline.InterruptDuck, MinSpeech: 400 * time.Millisecond, MinWords: 2,
			Backchannels: []string{"yeah", "嗯", "uh-huh"}}}
	assert.Equal(t, want, again.settings)
	assert.Equal(t, "Push to talk", again.activation.Selected)
	assert.False(t, again.talk.Disabled())
	assert.Equal(t, bargeInModes[1].label, newSettingsForm(again.settings).bargeIn.Selected)

	for _, bad := range []struct {
		field *widget.Entry
		text  string
	}{
		{f.minSpeech, ""}, {f.minSpeech, "soon"}, {f.minSpeech, "-1s"}, {f.minSpeech, "2h"},
		{f.minWords, "-1"}, {f.minWords, "many"}, {f.resumeAfter, "61m"}, {f.backchannels, "yeah, ..."},
	} {
		old := bad.field.Text
		bad.field.SetText(bad.text)
		_, err := f.settings(u.settings)
		assert.Error(t, err, "%q", bad.text)
		bad.field.SetText(old)
	}
}

// The download button fetches the missing models through the asset
// manager (here from a mirror serving the real Silero file, named by the
// command line or in the settings), then starts the session.
func TestUIDownloadButton(t *testing.T) {
	data, err := os.ReadFile(testenv.Model(t, "silero_vad_v5.onnx"))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "model", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	for _, fromSettings := range []bool{false, true} {
		t.Run(fmt.Sprintf("mirror in settings %v", fromSettings), func(t *testing.T) {
			cache := t.TempDir()
			opts := Options{Source: Replay{Input: demoInput(t)}, Stages: demoStages(), Puller: assets.Puller{Dir: cache, Mirror: srv.URL}}
			if fromSettings {
				opts.Puller.Mirror = ""
			}
			u := newTestUI(t, opts)
			if fromSettings {
				s := u.settings
				s.Mirror = srv.URL
				u.saveSettings(s)
			}
			downloadSilero(t, u, cache)
		})
	}
}

// downloadSilero downloads Silero through u's download button, into cache,
// and checks the session ran once it was in.
func downloadSilero(t *testing.T, u *UI, cache string) {
	t.Helper()
	u.update(func(m *Model) {
		m.Models = sileroMissing
		m.StartBlocked = true // as after a start that failed for want of it
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
	assert.Len(t, u.bubbles, 4, "the session ran once the model was in")
}

// A mirror (or network) that cannot be connected to is said first and
// whole, not cut after the models' names and paths, without the mirror's
// password, and the way on names the settings' mirror.
func TestUIDownloadUnreachable(t *testing.T) {
	u := newTestUI(t, Options{
		Source: Replay{Input: demoInput(t)},
		Stages: demoStages(),
		Puller: assets.Puller{Dir: t.TempDir(), Mirror: "http://user:secret@127.0.0.1:9"},
	})
	u.update(func(m *Model) {
		m.Models = append([]ModelRow{{Stage: "Speech synthesis", Name: "MOSS-TTS-Nano", State: ModelMissing,
			Models: []string{"MOSS-TTS-Nano-100M-ONNX", "MOSS-Audio-Tokenizer-Nano-ONNX"}}}, sileroMissing...)
	})
	test.Tap(u.download)
	u.ctl.Wait()
	assert.Equal(t, "The mirror http://user:xxxxx@127.0.0.1:9 cannot be reached (127.0.0.1:9: connection refused).\n"+downloadHint, u.downloadErr.Text)
	assert.Contains(t, downloadHint, "set a download mirror in Settings")
}

// The download button stays short however many models are missing (they
// are listed above it), counts them as the rows do (MOSS-TTS-Nano is one
// model of two downloads), says when the size is an estimate or part of
// it unknown, and offers a failed download again.
func TestDownloadLabel(t *testing.T) {
	for _, tc := range []struct {
		miss  missing
		retry bool
		want  string
	}{
		{missing{Rows: []string{"Silero VAD v5"}, Bytes: 2327524}, false, "Download Silero VAD v5 (2.2 MiB)"},
		{missing{Rows: []string{"MOSS-TTS-Nano"}, Models: []string{"tts", "codec"}, Bytes: 3 << 20}, false, "Download MOSS-TTS-Nano (3.0 MiB)"},
		{missing{Rows: []string{"a", "b", "c"}, Bytes: 3 << 20}, false, "Download the 3 missing models (3.0 MiB)"},
		{missing{Rows: []string{"X-ASR"}, Bytes: 586000000, Approx: true}, false, "Download X-ASR (~559 MiB)"},
		{missing{Rows: []string{"a", "llm"}, Bytes: 1 << 20, Unknown: true}, false, "Download the 2 missing models (1.0 MiB and more)"},
		{missing{Rows: []string{"a", "llm"}, Bytes: 1 << 20, Unknown: true}, true, "Try again: download the 2 missing models (1.0 MiB and more)"},
	} {
		assert.Equal(t, tc.want, tc.miss.downloadLabel(tc.retry))
	}
}

// The keyboard: Space is the talk button in push-to-talk mode (and does
// nothing hands-free), Esc reaches the running session as a press of the
// stop key.
func TestUIKeys(t *testing.T) {
	src := &heldSource{started: make(chan Session, 1)}
	u := newTestUI(t, Options{Source: src, Stages: demoStages()})
	space := &fyne.KeyEvent{Name: fyne.KeySpace}
	u.keyDown(&fyne.KeyEvent{Name: fyne.KeyEscape})
	u.Start()
	s := <-src.started
	u.keyDown(space)
	u.keyUp(space)
	assert.Empty(t, received(s.Commands), "hands-free: Space does nothing")
	u.ctl.Stop()
	u.ctl.Wait()
	u.activation.SetSelected("Push to talk")
	u.Start()
	s = <-src.started
	u.keyDown(space)
	assert.Equal(t, []pipeline.Op{pipeline.OpTalkStart}, received(s.Commands), "Space held")
	u.keyUp(space)
	assert.Equal(t, []pipeline.Op{pipeline.OpTalkStop}, received(s.Commands), "Space let go")

	u.keyDown(&fyne.KeyEvent{Name: fyne.KeyEscape})
	select {
	case <-s.StopKey:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "Esc did not reach the session")
	}
	select {
	case <-s.StopKey:
		require.FailNow(t, "a press before the session started reached it")
	default:
	}
	u.ctl.Stop()
	u.ctl.Wait()
}

// received are the commands waiting on ch.
func received(ch <-chan pipeline.Command) []pipeline.Op {
	var ops []pipeline.Op
	for {
		select {
		case c := <-ch:
			ops = append(ops, c.Op)
		default:
			return ops
		}
	}
}

// heldSource is a Source double that runs until stopped, handing the test
// its session.
type heldSource struct{ started chan Session }

func (h *heldSource) Run(ctx context.Context, s Session) error {
	h.started <- s
	<-ctx.Done()
	return nil
}

// A tool the reply called is a small line between the user's turn and
// the answer, without a bubble, in either language.
func TestUIToolLine(t *testing.T) {
	for _, tc := range []struct{ lang, ask, answer string }{
		{"English", "set a tea timer", "Your tea timer is set."},
		{"Chinese", "设一个泡茶的计时", "好的，泡茶计时开始了。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			u := newTestUI(t, Options{})
			u.feed(
				pipeline.Event{Type: pipeline.EvTurnCommit, Turn: 1, Text: tc.ask},
				pipeline.Event{Type: pipeline.EvToolCall, Turn: 1, Tool: &event.ToolUse{Name: "set_timer"}},
				pipeline.Event{Type: pipeline.EvToolResult, Turn: 1, Tool: &event.ToolUse{Name: "set_timer", Result: `{"id":1}`}},
				pipeline.Event{Type: pipeline.EvLLMPiece, Turn: 1, Text: tc.answer},
				pipeline.Event{Type: pipeline.EvLLMDone, Turn: 1, Text: tc.answer},
			)
			assert.Equal(t, []string{"[You · 0:00] " + tc.ask, `[Tool · 0:00] set_timer → {"id":1}`, "[Assistant · 0:00] " + tc.answer}, lineTexts(u))
			tool := u.bubbles[1]
			assert.Equal(t, widget.LowImportance, tool.head.Importance)
			assert.Equal(t, theme.SizeNameCaptionText, tool.text.SizeName, "a small line")
			assert.Equal(t, theme.SizeNameText, u.bubbles[2].text.SizeName, "the answer as any reply")
		})
	}
}
