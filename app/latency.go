package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// The latency panel's bar and legend.

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
