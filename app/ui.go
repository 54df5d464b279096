package app

import (
	"fmt"
	"image/color"
	"slices"
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
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
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
	// CJKFont finds the font for Chinese text (cjkfont.go); nil means
	// FontconfigCJK.
	CJKFont func() (FontFile, error)
}

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
	{0x26, 0xa6, 0x9a, 0xff},
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
	// activation picks what opens a turn (Settings.Activation).
	activation *widget.Select
	// talk is the talk button in push mode, the wake button in wake mode.
	talk      *holdButton
	stopReply *widget.Button
	mute      *widget.Check
	clear     *widget.Button

	conversation *fyne.Container
	bubbles      []*bubble
	partial      *widget.Label
	scroll       *container.Scroll

	latency     *widget.Card
	latencyBar  *fyne.Container
	latencyText *widget.Label
	summary     *widget.Label

	errText *widget.Label

	models        *widget.Card
	modelRows     *fyne.Container
	download      *widget.Button
	progress      *widget.ProgressBar
	progressLabel *widget.Label
	downloadErr   *widget.Label
}

// New builds the window (not shown yet) with the settings saved in a's
// preferences.
func New(a fyne.App, opts Options) *UI {
	u := &UI{app: a, opts: opts, settings: LoadSettings(a.Preferences())}
	u.ctl = NewController(func(f func(*Model)) { fyne.Do(func() { u.update(f) }) })
	u.ctl.Puller = opts.Puller
	findCJK := opts.CJKFont
	if findCJK == nil {
		findCJK = FontconfigCJK
	}
	a.Settings().SetTheme(withCJK(a.Settings().Theme(), findCJK))
	u.win = a.NewWindow("Voice assistant")
	u.win.SetContent(u.build())
	u.win.Resize(fyne.NewSize(880, 660))
	u.win.SetOnClosed(u.ctl.Stop)
	u.bindKeys()
	u.checkModels()
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
	u.talk = newHoldButton(talkLabel, u.hold)
	u.stopReply = widget.NewButton("Stop (Esc)", u.ctl.StopReply)
	u.activation = widget.NewSelect(activationLabels(), u.setActivation)
	u.mute = widget.NewCheck("Mute", u.ctl.Gate.SetMuted)
	u.clear = widget.NewButton("Clear", u.clearConversation)
	settings := widget.NewButton("Settings…", u.showSettings)
	controls := container.NewHBox(u.startStop, u.activation, u.talk, u.stopReply, u.mute, u.clear, settings)
	u.activation.SetSelected(activationLabel(u.settings.Activation)) // sets up the talk button

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
	u.latency = widget.NewCard("Latency", "", container.NewVBox(
		container.NewGridWrap(fyne.NewSize(560, 14), u.latencyBar), latencyLegend(), u.latencyText, u.summary))

	u.errText = widget.NewLabel("")
	u.errText.Wrapping = fyne.TextWrapWord

	u.modelRows = container.NewGridWithColumns(2)
	u.download = widget.NewButton("", func() { u.DownloadMissing(false) })
	u.download.Importance = widget.HighImportance
	u.progress = widget.NewProgressBar()
	u.progressLabel = widget.NewLabel("")
	// Wrapped, not cut: a retry's reason ends the line.
	u.progressLabel.Wrapping = fyne.TextWrapWord
	u.downloadErr = widget.NewLabel("")
	u.downloadErr.Wrapping = fyne.TextWrapWord
	u.downloadErr.Importance = widget.DangerImportance
	u.models = widget.NewCard("Models", "", container.NewVBox(u.modelRows, u.downloadErr, u.download, u.progress, u.progressLabel))

	top := container.NewVBox(header, controls, widget.NewSeparator(), u.errText, u.models)
	return container.NewBorder(top, u.latency, nil, nil, u.scroll)
}

// refresh shows the model.
func (u *UI) refresh() {
	m := &u.model
	u.statusDot.FillColor = statusColors[m.Status]
	u.statusDot.Refresh()
	label := m.Status.String()
	u.status.SetText(strings.ToUpper(label[:1]) + label[1:])
	u.userVoice.SetText(indicator("You", m.UserVoice))
	u.assistantVoice.SetText(indicator("Assistant", m.AssistantVoice()))
	level := min(max(m.Level, 0), 1)
	u.level.Layout.(*barLayout).weights = []float64{level, 1 - level}
	u.level.Refresh()

	switch {
	case m.Download != nil:
		u.startStop.SetText("Cancel download")
	case u.ctl.Running():
		u.startStop.SetText("Stop listening")
	default:
		u.startStop.SetText("Start listening")
	}

	u.refreshConversation()
	active := m.Status == Speaking || m.Status == Thinking
	if active {
		u.stopReply.Enable()
	} else {
		u.stopReply.Disable()
	}

	bar := u.latencyBar.Layout.(*barLayout)
	bar.weights = bar.weights[:0]
	for _, s := range m.LastTurn() {
		bar.weights = append(bar.weights, s.MS)
	}
	u.latencyBar.Refresh()
	u.latencyText.SetText(m.LastTurnText())
	u.summary.SetText("Session: " + m.SummaryText())
	// Figures only once there are some: at first the room is the models'.
	show(u.latency, len(m.Turns) > 0 || m.Status != Idle)

	u.refreshProblem()
	u.refreshModels()
}

func indicator(who string, on bool) string {
	if on {
		return who + ": speaking"
	}
	return who + ": quiet"
}

func (u *UI) refreshProblem() {
	m := &u.model
	var msgs []string
	if m.Err != "" {
		msgs = append(msgs, "Error: "+m.Err)
	}
	if m.Notice != "" {
		msgs = append(msgs, "Note: "+m.Notice)
	}
	u.errText.Importance = widget.WarningImportance
	if m.Err != "" {
		u.errText.Importance = widget.DangerImportance
	}
	u.errText.SetText(strings.Join(msgs, "\n"))
	show(u.errText, len(msgs) > 0)
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

// activationChoice is a choice of what opens a turn, as the window names
// it.
type activationChoice struct {
	mode  pipeline.ActivationMode
	label string
}

var activations = []activationChoice{
	{pipeline.ActivateAlways, "Always listening"},
	{pipeline.ActivatePush, "Push to talk"},
	{pipeline.ActivateWake, "Wake word"},
}

const (
	talkLabel = "Hold to talk (Space)"
	wakeLabel = "Wake (Space)"
)

func activationLabels() []string {
	var labels []string
	for _, a := range activations {
		labels = append(labels, a.label)
	}
	return labels
}

func activationLabel(m pipeline.ActivationMode) string {
	for _, a := range activations {
		if a.mode == m {
			return a.label
		}
	}
	return activations[0].label
}

// setActivation takes the choice of what opens a turn; a running session
// restarts to take it, as with any stage setting.
func (u *UI) setActivation(label string) {
	mode := activations[slices.IndexFunc(activations, func(a activationChoice) bool { return a.label == label })].mode
	switch mode {
	case pipeline.ActivateAlways:
		u.talk.SetText(talkLabel)
		u.talk.Disable()
	case pipeline.ActivatePush:
		u.talk.SetText(talkLabel)
		u.talk.Enable()
	case pipeline.ActivateWake:
		u.talk.SetText(wakeLabel)
		u.talk.Enable()
	}
	if mode != u.settings.Activation {
		s := u.settings
		s.Activation = mode
		u.saveSettings(s)
	}
}

// hold is the talk button (or Space) going down or up: in push mode the
// turn is open while it is down; in wake mode pressing it is the host's
// wake.
func (u *UI) hold(down bool) {
	op := pipeline.OpTalkStop
	switch {
	case u.settings.Activation == pipeline.ActivatePush && down:
		op = pipeline.OpTalkStart
	case u.settings.Activation == pipeline.ActivateWake && down:
		op = pipeline.OpWake
	case u.settings.Activation != pipeline.ActivatePush:
		return
	}
	u.ctl.Command(pipeline.Command{Op: op})
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

// Dump is the window's content as text: what tests compare and
// --dump-when-done writes. Call it on the UI thread.
func (u *UI) Dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\n", u.status.Text)
	fmt.Fprintf(&b, "indicators: %s, %s\n", u.userVoice.Text, u.assistantVoice.Text)
	b.WriteString("conversation:\n")
	for _, bb := range u.bubbles {
		fmt.Fprintf(&b, "  %s\n", bb.line())
	}
	if u.partial.Text != "" {
		what := "partial"
		if u.model.Partial == "" {
			what = "hint"
		}
		fmt.Fprintf(&b, "%s: %s\n", what, u.partial.Text)
	}
	fmt.Fprintf(&b, "%s\n%s\n", u.latencyText.Text, u.summary.Text)
	if u.errText.Visible() {
		fmt.Fprintf(&b, "problem: %s\n", u.errText.Text)
	}
	if u.models.Visible() {
		b.WriteString("models:\n")
		for _, o := range u.modelRows.Objects {
			fmt.Fprintf(&b, "  %s\n", o.(*widget.Label).Text)
		}
		if u.downloadErr.Visible() {
			fmt.Fprintf(&b, "  download failed: %s\n", u.model.DownloadErr)
		}
		if u.download.Visible() {
			fmt.Fprintf(&b, "  offer: %s\n", u.download.Text)
		}
	}
	return b.String()
}
