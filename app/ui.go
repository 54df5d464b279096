package app

import (
	"fmt"
	"image/color"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/voiceassistant/voice/assets"
	"github.com/voiceassistant/voice/audio/device"
	"github.com/voiceassistant/voice/internal/wiring"
)

// Options configure the window.
type Options struct {
	// Source runs the sessions; nil means the sound card, with the devices
	// chosen in the settings.
	Source Source
	// Stages are the backends and everything the settings do not cover;
	// the settings are applied over them at each start.
	Stages wiring.Stages
	// Device is the live device's configuration under the settings.
	Device device.Config
	// Puller downloads missing models (its Dir is the cache).
	Puller assets.Puller
	// OnSessionEnd, if set, runs on the UI thread after each session ends,
	// inside the update that ended it: it may read the window (Dump) but
	// not start or stop sessions.
	OnSessionEnd func(*UI)
}

// Mode names of the microphone switch.
const (
	handsFree  = "Hands-free"
	pushToTalk = "Push-to-talk"
)

var statusColors = map[Status]color.NRGBA{
	Idle:         {0x9e, 0x9e, 0x9e, 0xff},
	Listening:    {0x2e, 0x7d, 0x32, 0xff},
	UserSpeaking: {0x15, 0x65, 0xc0, 0xff},
	Thinking:     {0xef, 0x6c, 0x00, 0xff},
	Speaking:     {0x6a, 0x1b, 0x9a, 0xff},
	Interrupted:  {0xc6, 0x28, 0x28, 0xff},
}

// StageColors are the latency bar's segments, in LastTurn's order (a
// screenshot test looks for them).
var StageColors = []color.NRGBA{
	{0x90, 0xa4, 0xae, 0xff}, {0x42, 0xa5, 0xf5, 0xff}, {0xff, 0xa7, 0x26, 0xff}, {0xab, 0x47, 0xbc, 0xff},
}

// UI is the assistant's window: a thin view of a Model that a Controller
// feeds. The model and widgets change only in update, on the UI thread.
type UI struct {
	// mu serializes updates where fyne.Do does not: fyne's test driver
	// runs it on the calling goroutine.
	mu       sync.Mutex
	closed   bool
	app      fyne.App
	win      fyne.Window
	opts     Options
	model    Model
	ctl      *Controller
	settings Settings

	statusDot      *canvas.Circle
	status         *widget.Label
	userVoice      *widget.Label
	assistantVoice *widget.Label
	level          *fyne.Container // barLayout: the level, the rest

	startStop *widget.Button
	mode      *widget.RadioGroup
	talk      *holdButton
	mute      *widget.Check
	clear     *widget.Button

	conversation *fyne.Container
	lines        []*widget.Label
	partial      *widget.Label
	scroll       *container.Scroll

	latencyBar  *fyne.Container
	latencyText *widget.Label
	summary     *widget.Label

	problem       *fyne.Container
	errText       *widget.Label
	download      *widget.Button
	progress      *widget.ProgressBar
	progressLabel *widget.Label
}

// New builds the window (not shown yet) with the settings saved in a's
// preferences.
func New(a fyne.App, opts Options) *UI {
	u := &UI{app: a, opts: opts, settings: LoadSettings(a.Preferences())}
	u.ctl = NewController(func(f func(*Model)) { fyne.Do(func() { u.update(f) }) })
	u.ctl.Puller = opts.Puller
	u.win = a.NewWindow("Voice assistant")
	u.win.SetContent(u.build())
	u.win.Resize(fyne.NewSize(760, 640))
	u.win.SetOnClosed(u.ctl.Stop)
	u.update(func(*Model) {})
	return u
}

// Window is the app's window.
func (u *UI) Window() fyne.Window { return u.win }

// Close stops the session and waits for it, for when the app's loop has
// ended: updates still on their way are dropped, as nothing would draw
// them.
func (u *UI) Close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	u.ctl.Stop()
	u.ctl.Wait()
}

// update changes the model and shows the result.
func (u *UI) update(f func(*Model)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return
	}
	wasActive := u.model.Status != Idle
	f(&u.model)
	u.refresh()
	if wasActive && u.model.Status == Idle && u.opts.OnSessionEnd != nil {
		u.opts.OnSessionEnd(u)
	}
}

// Start begins a session with the current settings.
func (u *UI) Start() {
	src, stages := u.session()
	u.ctl.Start(src, stages)
	u.update(func(*Model) {})
}

func (u *UI) session() (Source, wiring.Stages) {
	stages, dev := u.opts.Stages, u.opts.Device
	u.settings.Apply(&stages, &dev)
	src := u.opts.Source
	if src == nil {
		src = Live{Device: dev}
	}
	return src, stages
}

func (u *UI) build() fyne.CanvasObject {
	u.statusDot = canvas.NewCircle(statusColors[Idle])
	u.status = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	dot := container.NewGridWrap(fyne.NewSize(16, 16), u.statusDot)
	u.userVoice = widget.NewLabel("")
	u.assistantVoice = widget.NewLabel("")
	// The microphone level: a filled share of a dark track, empty when
	// nothing is heard (a progress bar's track reads as full).
	u.level = container.New(&barLayout{},
		canvas.NewRectangle(theme.Color(theme.ColorNamePrimary)), canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground)))
	meter := container.New(layout.NewCustomPaddedLayout(12, 12, 0, 0), u.level)
	header := container.NewBorder(nil, nil,
		container.NewHBox(container.NewCenter(dot), u.status),
		container.NewHBox(u.userVoice, u.assistantVoice),
		container.NewBorder(nil, nil, widget.NewLabel("Mic"), nil, meter))

	u.startStop = widget.NewButton("", u.toggle)
	u.startStop.Importance = widget.HighImportance
	u.talk = newHoldButton("Hold to talk", u.ctl.Gate.SetTalking)
	u.mode = widget.NewRadioGroup([]string{handsFree, pushToTalk}, u.setMode)
	u.mode.Horizontal = true
	u.mute = widget.NewCheck("Mute", u.ctl.Gate.SetMuted)
	u.clear = widget.NewButton("Clear", u.clearConversation)
	settings := widget.NewButton("Settings…", u.showSettings)
	controls := container.NewHBox(u.startStop, u.mode, u.talk, u.mute, u.clear, settings)
	if u.settings.PushToTalk {
		u.mode.SetSelected(pushToTalk)
	} else {
		u.mode.SetSelected(handsFree)
	}

	u.conversation = container.NewVBox()
	u.partial = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	u.partial.Wrapping = fyne.TextWrapWord
	u.scroll = container.NewVScroll(container.NewVBox(u.conversation, u.partial))

	u.latencyBar = container.New(&barLayout{})
	for _, c := range StageColors {
		u.latencyBar.Add(canvas.NewRectangle(c))
	}
	u.latencyText = widget.NewLabel("")
	u.latencyText.Wrapping = fyne.TextWrapWord
	u.summary = widget.NewLabel("")
	latency := widget.NewCard("Latency", "", container.NewVBox(
		container.NewGridWrap(fyne.NewSize(560, 14), u.latencyBar), latencyLegend(), u.latencyText, u.summary))

	u.errText = widget.NewLabel("")
	u.errText.Wrapping = fyne.TextWrapWord
	u.download = widget.NewButton("", u.startDownload)
	u.progress = widget.NewProgressBar()
	u.progressLabel = widget.NewLabel("")
	u.problem = container.NewVBox(u.errText, u.download, u.progress, u.progressLabel)

	top := container.NewVBox(header, controls, widget.NewSeparator(), u.problem)
	return container.NewBorder(top, latency, nil, nil, u.scroll)
}

// downloadLabel names what the download button gets: the model, or how
// many when there are several (their stages are listed above it), and how
// much.
func downloadLabel(p *Problem) string {
	what := p.Models[0]
	if len(p.Models) > 1 {
		what = fmt.Sprintf("the %d missing models", len(p.Models))
	}
	size := assets.FormatSize(p.Bytes)
	if p.SizeUnknown {
		size += " and more"
	}
	return fmt.Sprintf("Download %s (%s)", what, size)
}

// latencyLegend names the latency bar's colors.
func latencyLegend() fyne.CanvasObject {
	row := container.NewHBox()
	for i, name := range StageNames {
		swatch := container.NewGridWrap(fyne.NewSize(12, 12), canvas.NewRectangle(StageColors[i]))
		row.Add(container.NewCenter(swatch))
		row.Add(widget.NewLabel(name))
	}
	return row
}

// refresh shows the model.
func (u *UI) refresh() {
	m := &u.model
	u.statusDot.FillColor = statusColors[m.Status]
	u.statusDot.Refresh()
	label := m.Status.String()
	u.status.SetText(strings.ToUpper(label[:1]) + label[1:])
	u.userVoice.SetText(indicator("You", m.UserVoice))
	u.assistantVoice.SetText(indicator("Assistant", m.AssistantVoice))
	level := min(max(m.Level, 0), 1)
	u.level.Layout.(*barLayout).weights = []float64{level, 1 - level}
	u.level.Refresh()

	if u.ctl.Running() {
		u.startStop.SetText("Stop listening")
	} else {
		u.startStop.SetText("Start listening")
	}

	u.refreshConversation()

	stages := m.LastTurn()
	bar := u.latencyBar.Layout.(*barLayout)
	bar.weights = bar.weights[:0]
	var parts []string
	for _, s := range stages {
		bar.weights = append(bar.weights, s.MS)
		parts = append(parts, fmt.Sprintf("%s %.0f ms", s.Name, s.MS))
	}
	u.latencyBar.Refresh()
	if len(parts) == 0 {
		u.latencyText.SetText("Last turn: none yet")
	} else {
		u.latencyText.SetText("Last turn: " + strings.Join(parts, " | "))
	}
	u.summary.SetText("Session: " + m.SummaryText())

	u.refreshProblem()
}

func indicator(who string, on bool) string {
	if on {
		return who + ": speaking"
	}
	return who + ": quiet"
}

func (u *UI) refreshConversation() {
	m := &u.model
	atEnd := u.scroll.Offset.Y >= u.scroll.Content.MinSize().Height-u.scroll.Size().Height-1
	for len(u.lines) < len(m.Entries) {
		l := widget.NewLabel("")
		l.Wrapping = fyne.TextWrapWord
		u.lines = append(u.lines, l)
		u.conversation.Add(l)
	}
	for len(u.lines) > len(m.Entries) {
		u.conversation.Remove(u.lines[len(u.lines)-1])
		u.lines = u.lines[:len(u.lines)-1]
	}
	for i, e := range m.Entries {
		l := u.lines[i]
		switch {
		case e.Interrupted:
			l.Importance = widget.WarningImportance
		case e.Role == User:
			l.Importance = widget.HighImportance
		default:
			l.Importance = widget.MediumImportance
		}
		l.SetText(e.Line())
	}
	if m.Partial != "" {
		u.partial.SetText("… " + m.Partial)
	} else {
		u.partial.SetText("")
	}
	if atEnd {
		// Follow the conversation unless the user scrolled back.
		u.scroll.ScrollToBottom()
	}
}

func (u *UI) refreshProblem() {
	m := &u.model
	var msgs []string
	if m.Missing != nil {
		msgs = append(msgs, "Missing: "+m.Missing.Message)
	} else if m.Err != "" {
		msgs = append(msgs, "Error: "+m.Err)
	}
	if m.Notice != "" {
		msgs = append(msgs, "Note: "+m.Notice)
	}
	u.errText.Importance = widget.WarningImportance
	if m.Missing != nil || m.Err != "" {
		u.errText.Importance = widget.DangerImportance
	}
	u.errText.SetText(strings.Join(msgs, "\n"))
	show(u.errText, len(msgs) > 0)
	canDownload := m.Missing != nil && len(m.Missing.Models) > 0 && m.Download == nil
	if canDownload {
		u.download.SetText(downloadLabel(m.Missing))
	}
	show(u.download, canDownload)
	if d := m.Download; d != nil {
		u.progress.SetValue(d.Fraction)
		u.progressLabel.SetText(d.Label)
	}
	show(u.progress, m.Download != nil)
	show(u.progressLabel, m.Download != nil)
}

func show(o fyne.CanvasObject, visible bool) {
	if visible {
		o.Show()
	} else {
		o.Hide()
	}
}

func (u *UI) toggle() {
	if u.ctl.Running() {
		u.ctl.Stop()
		u.update(func(*Model) {})
		return
	}
	u.Start()
}

func (u *UI) setMode(mode string) {
	ptt := mode == pushToTalk
	u.ctl.Gate.SetPushToTalk(ptt)
	if ptt {
		u.talk.Enable()
	} else {
		u.talk.Disable()
	}
	if ptt != u.settings.PushToTalk {
		u.settings.PushToTalk = ptt
		u.settings.Save(u.app.Preferences())
	}
}

// clearConversation empties the view; a running session is restarted so
// the assistant forgets it too.
func (u *UI) clearConversation() {
	u.update((*Model).Clear)
	if u.ctl.Running() {
		u.ctl.Stop()
		u.Start()
	}
}

func (u *UI) startDownload() {
	var models []assets.Model
	u.update(func(m *Model) {
		if m.Missing == nil {
			return
		}
		var err error
		if models, err = m.Missing.manifestModels(); err != nil {
			m.Err = err.Error()
			return
		}
		m.Download = &DownloadProgress{Label: "starting download"}
	})
	if len(models) > 0 {
		src, stages := u.session()
		u.ctl.Download(src, stages, models)
	}
}

// Dump is the window's content as text: what tests compare and
// --dump-when-done writes. Call it on the UI thread.
func (u *UI) Dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\n", u.status.Text)
	fmt.Fprintf(&b, "indicators: %s, %s\n", u.userVoice.Text, u.assistantVoice.Text)
	b.WriteString("conversation:\n")
	for _, l := range u.lines {
		fmt.Fprintf(&b, "  %s\n", l.Text)
	}
	if u.partial.Text != "" {
		fmt.Fprintf(&b, "partial: %s\n", u.partial.Text)
	}
	fmt.Fprintf(&b, "%s\n%s\n", u.latencyText.Text, u.summary.Text)
	if u.errText.Visible() {
		fmt.Fprintf(&b, "problem: %s\n", u.errText.Text)
	}
	if u.download.Visible() {
		fmt.Fprintf(&b, "offer: %s\n", u.download.Text)
	}
	return b.String()
}

// barLayout lays its children out in a row, each as wide as its share of
// weights (the latency bar's stages).
type barLayout struct{ weights []float64 }

func (l *barLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	var total float64
	for _, w := range l.weights {
		total += w
	}
	x := float32(0)
	for i, o := range objs {
		w := float32(0)
		if i < len(l.weights) && total > 0 {
			w = size.Width * float32(l.weights[i]/total)
		}
		o.Move(fyne.NewPos(x, 0))
		o.Resize(fyne.NewSize(w, size.Height))
		x += w
	}
}

func (l *barLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(100, 12) }
