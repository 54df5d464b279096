package app

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/voiceassistant/voice/assets"
)

// The models panel: each stage's model, and the download of the missing ones.

// checkModels looks again for each stage's model (at launch, after the
// settings change), for the models panel.
func (u *UI) checkModels() {
	_, stages := u.session()
	rows, err := ModelRows(stages)
	u.update(func(m *Model) {
		m.Models = rows
		if err != nil {
			m.Err = shortError(err)
		}
	})
}

// refreshModels shows the models panel while a model is missing, a
// download runs or has failed, and hides it once all is in place.
func (u *UI) refreshModels() {
	m := &u.model
	names, bytes, approx, unknown := missingModels(m.Models)
	show(u.models, len(names) > 0 || m.Download != nil || m.DownloadErr != "")
	if len(u.modelRows.Objects) != len(m.Models) {
		u.modelRows.RemoveAll()
		for range m.Models {
			// Cut rather than widen the window.
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			u.modelRows.Add(l)
		}
	}
	for i, r := range m.Models {
		l := u.modelRows.Objects[i].(*widget.Label)
		l.Importance = rowImportance[r.State]
		l.SetText(r.Line())
	}
	u.downloadErr.SetText(m.DownloadErr + "\n" + downloadHint)
	show(u.downloadErr, m.DownloadErr != "")
	canDownload := len(names) > 0 && m.Download == nil
	if canDownload {
		u.download.SetText(downloadLabel(names, bytes, approx, unknown, m.DownloadErr != ""))
	}
	show(u.download, canDownload)
	if d := m.Download; d != nil {
		u.progress.SetValue(d.Fraction)
		u.progressLabel.SetText(d.Label)
	}
	show(u.progress, m.Download != nil)
	show(u.progressLabel, m.Download != nil)
}

// downloadHint is the way on when a download fails.
const downloadHint = "Check the network connection and try again, or copy the model files by hand (docs/models.md says where they go)."

var rowImportance = map[ModelState]widget.Importance{
	ModelInstalled: widget.SuccessImportance,
	ModelMissing:   widget.DangerImportance,
	ModelUnused:    widget.LowImportance,
	ModelNotBuilt:  widget.WarningImportance,
}

// DownloadMissing fetches the models the panel lists as missing; then, if
// start is set or they were missing for a session the user asked for, the
// session starts once they are in.
func (u *UI) DownloadMissing(start bool) {
	var models []assets.Model
	u.update(func(m *Model) {
		names, _, _, _ := missingModels(m.Models)
		var err error
		if models, err = manifestModels(names); err != nil {
			m.DownloadErr = shortError(err)
			return
		}
		start = start || m.StartBlocked
		m.Download, m.DownloadErr = &DownloadProgress{Label: "starting download"}, ""
		if start {
			m.Err = ""
		}
	})
	switch {
	case len(models) > 0:
		src, stages := u.session()
		u.ctl.Download(src, stages, models, start)
	case start:
		u.Start() // nothing to download
	}
}
