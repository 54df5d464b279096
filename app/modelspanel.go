package app

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

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
	miss := missingModels(m.Models)
	show(u.models, len(miss.Rows) > 0 || m.Download != nil || m.DownloadErr != "")
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
	canDownload := len(miss.Rows) > 0 && m.Download == nil
	if canDownload {
		u.download.SetText(miss.downloadLabel(m.DownloadErr != ""))
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
const downloadHint = "Check the network connection and try again, set a download mirror in Settings, " +
	"or copy the model files by hand (docs/models.md says where they go)."

// downloadFailure is the models panel's line for a failed download. Sources
// that cannot be connected to are the network (or the mirror) out of
// reach: said first and whole, as `voice-agent models pull` says it,
// rather than after the models' names and file paths, where the window's
// cut of a long line fell on the host's name.
func downloadFailure(err error, mirror string) string {
	var unreachable *assets.UnreachableError
	if !errors.As(err, &unreachable) {
		return shortError(err)
	}
	what := "The network"
	if mirror != "" {
		what = "The mirror " + assets.Redacted(mirror)
	}
	return fmt.Sprintf("%s cannot be reached (%s).", what, strings.Join(unreachable.Hosts, "; "))
}

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
		var err error
		if models, err = manifestModels(missingModels(m.Models).Models); err != nil {
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
		u.ctl.Puller.Mirror = u.mirror()
		u.ctl.Download(src, stages, models, start)
	case start:
		u.Start() // nothing to download
	}
}

// mirror serves the downloads: the command line's --mirror, else the
// settings'.
func (u *UI) mirror() string { return cmp.Or(u.opts.Puller.Mirror, u.settings.Mirror) }
