package app

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// The conversation, shown as a chat.

func (u *UI) refreshConversation() {
	m := &u.model
	atEnd := u.scroll.Offset.Y >= u.scroll.Content.MinSize().Height-u.scroll.Size().Height-1
	for len(u.bubbles) < len(m.Entries) {
		b := newBubble()
		u.bubbles = append(u.bubbles, b)
		u.conversation.Add(b.row)
	}
	for len(u.bubbles) > len(m.Entries) {
		u.conversation.Remove(u.bubbles[len(u.bubbles)-1].row)
		u.bubbles = u.bubbles[:len(u.bubbles)-1]
	}
	for i, e := range m.Entries {
		u.bubbles[i].show(e)
	}
	u.partial.Importance = widget.MediumImportance
	switch {
	case m.Partial != "":
		u.partial.SetText("… " + m.Partial)
	case len(m.Entries) == 0 && !u.ctl.Running():
		// An empty window says what to do next.
		u.partial.Importance = widget.LowImportance
		u.partial.SetText(nextStep(m))
	default:
		u.partial.SetText("")
	}
	if atEnd {
		// Follow the conversation unless the user scrolled back.
		u.scroll.ScrollToBottom()
	}
}

// nextStep is what the empty conversation suggests.
func nextStep(m *Model) string {
	if len(missingModels(m.Models).Rows) > 0 {
		return "Download the missing models above, then press Start listening and speak."
	}
	return "Press Start listening and speak. In push-to-talk mode hold Space while you talk; in wake-word mode begin with \"hey assistant\" or press Space first; Esc stops a reply."
}

// bubble is one entry of the conversation, as in a chat: who and when
// above what was said, the user's indented from the left and the
// assistant's from the right.
type bubble struct {
	head, text *widget.Label
	bg         *canvas.Rectangle
	row        *fyne.Container
}

// bubbleIndent is how far a bubble stays from the other speaker's side.
const bubbleIndent = 96

func newBubble() *bubble {
	b := &bubble{
		head: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		text: widget.NewLabel(""),
		bg:   canvas.NewRectangle(color.Transparent),
	}
	b.head.SizeName = theme.SizeNameCaptionText
	b.text.Wrapping = fyne.TextWrapWord
	b.bg.CornerRadius = 10
	b.row = container.New(&layout.CustomPaddedLayout{TopPadding: 4, BottomPadding: 4},
		container.NewStack(b.bg, container.New(layout.NewCustomPaddedLayout(-6, -6, 0, 0), container.NewVBox(b.head, b.text))))
	return b
}

func (b *bubble) show(e Entry) {
	b.head.SetText(e.Header())
	b.text.SetText(e.Text)
	pad := b.row.Layout.(*layout.CustomPaddedLayout)
	b.text.SizeName = theme.SizeNameText
	switch e.Role {
	case User:
		pad.LeftPadding, pad.RightPadding = bubbleIndent, 0
		b.bg.FillColor = userBubble
		b.head.Importance = widget.HighImportance
	case Tool:
		// A small line, no bubble: what the assistant did, not said.
		pad.LeftPadding, pad.RightPadding = 0, bubbleIndent
		b.bg.FillColor = color.Transparent
		b.head.Importance = widget.LowImportance
		b.text.SizeName = theme.SizeNameCaptionText
	default:
		pad.LeftPadding, pad.RightPadding = 0, bubbleIndent
		b.bg.FillColor = theme.Color(theme.ColorNameInputBackground)
		b.head.Importance = widget.MediumImportance
	}
	if e.Interrupted {
		b.head.Importance = widget.WarningImportance
	}
	b.head.Refresh()
	b.text.Refresh()
	b.bg.Refresh()
	b.row.Refresh()
}

// line is the bubble as one line of text, for Dump.
func (b *bubble) line() string { return "[" + b.head.Text + "] " + b.text.Text }

// userBubble is the user's bubble: the primary color, faint.
var userBubble = color.NRGBA{0x29, 0x79, 0xff, 0x30}
