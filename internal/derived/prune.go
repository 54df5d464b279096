package derived

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// sourcesFile is, in each folder, the record of the model it was derived
// from (record): what Prune checks. Its modification time is when the
// folder was last acquired.
const sourcesFile = "sources"

// record is what a folder is derived from, as JSON (any path, a newline
// in it too, reads back as it was written).
type record struct {
	// Model is the model's id (model.id): the folders of one model under
	// other settings (an engine's version, MNN's threads) share it.
	Model string `json:"model"`
	// Places are where the model's files were loaded from, resolved, the
	// latest first; a place whose files are gone is dropped.
	Places [][]string `json:"places"`
	// SHA256 are the files' sums, as at every place.
	SHA256 []string `json:"sha256"`
}

// recordSources records in dir that it is derived from m, where m's files
// are now, and that it was used now.
func recordSources(dir string, m model) error {
	path := filepath.Join(dir, sourcesFile)
	rec := record{Model: m.id, Places: [][]string{m.paths}, SHA256: m.sums}
	kept, err := os.ReadFile(path)
	var old record
	if err == nil && json.Unmarshal(kept, &old) == nil && old.Model == m.id {
		// The same content elsewhere keeps the folder while it is there.
		for _, place := range old.Places {
			if !slices.Equal(place, m.paths) && gone(place) == "" {
				rec.Places = append(rec.Places, place)
			}
		}
	}
	js, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if !bytes.Equal(js, kept) {
		if err := WriteFile(path, func(w io.Writer) error {
			_, err := w.Write(js)
			return err
		}); err != nil {
			return err
		}
	}
	// The clock's time, not the file system's coarser one: which of two
	// folders was used last is told apart.
	now := time.Now()
	return os.Chtimes(path, now, now)
}

// gone names the first of paths that is gone, "" if none is.
func gone(paths []string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
	}
	return ""
}

// Pruned is a folder Prune removed.
type Pruned struct {
	Dir   string
	Why   string
	Bytes int64
}

// keepSettings is how many folders of one model, each under other
// settings, a new derivation leaves (those used last): a user who moves
// between two or three (--llm-threads 2 and 4) makes each once, and one
// who tries every value does not fill the disk with a 184 MiB pool each.
const keepSettings = 3

// Prune removes the folders of derived files whose model is gone: a
// source file missing, or, if deep, changed since (which costs hashing
// every model; a changed model is otherwise met with a folder of its
// own, and the old one stays until a deep prune). Of the folders of one
// model under other settings, it keeps keepSettings, or if deep only the
// one used last. A folder another process holds (it is deriving into it)
// is left alone; a folder that names no sources (made by an earlier
// agent) is removed, and made again by the next load that needs it. An
// agent that maps files of a removed folder keeps them until it exits.
func Prune(deep bool) ([]Pruned, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	keep := keepSettings
	if deep {
		keep = 1
	}
	return prune(root, deep, keep)
}

// folder is a folder of derived files, as Prune sees it.
type folder struct {
	dir  string
	rec  record
	used time.Time
	// why it is to go, "" if it stays.
	why string
}

// survey lists the folders under root, each with why it is stale.
func survey(root string, deep bool) ([]folder, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*"))
	if err != nil {
		return nil, err
	}
	var folders []folder
	for _, dir := range dirs {
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() || filepath.Base(filepath.Dir(dir)) == "sums" {
			continue
		}
		f := folder{dir: dir}
		f.why = f.read(root, deep)
		folders = append(folders, f)
	}
	return folders, nil
}

// read reads f's record and returns why f's model is gone, "" if it is
// not.
func (f *folder) read(root string, deep bool) string {
	path := filepath.Join(f.dir, sourcesFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "it names no model (made by an earlier agent)"
	}
	if err != nil {
		return ""
	}
	if json.Unmarshal(data, &f.rec) != nil {
		if !bytes.HasPrefix(data, []byte("{")) {
			return "it names no model (made by an earlier agent)"
		}
		return "its record of the model is damaged"
	}
	if info, err := os.Stat(path); err == nil {
		f.used = info.ModTime()
	}
	// Gone when every place is; said of the place used last.
	why := ""
	for _, place := range f.rec.Places {
		p, how := gone(place), " is gone"
		if p == "" && deep {
			p, how = changed(root, place, f.rec.SHA256), " has changed"
		}
		if p == "" {
			return ""
		}
		if why == "" {
			why = shownPath(p) + how
		}
	}
	if why == "" {
		return "its record names no files"
	}
	return why
}

// changed names the first of paths whose sum is not in sums.
func changed(root string, paths, sums []string) string {
	for i, p := range paths {
		if now, err := contentSum(root, p); err == nil && i < len(sums) && now != sums[i] {
			return p
		}
	}
	return ""
}

// prune removes the stale folders under root and, of the folders of one
// engine and model, those beyond the keep used last.
func prune(root string, deep bool, keep int) ([]Pruned, error) {
	folders, err := survey(root, deep)
	if err != nil {
		return nil, err
	}
	markOtherSettings(folders, keep)
	var pruned []Pruned
	for _, f := range folders {
		if f.why == "" {
			continue
		}
		size, err := remove(f.dir)
		if errors.Is(err, errHeld) {
			continue
		}
		if err != nil {
			return pruned, err
		}
		pruned = append(pruned, Pruned{Dir: f.dir, Why: f.why, Bytes: size})
	}
	return pruned, nil
}

// markOtherSettings gives a why to each live folder beyond the keep
// folders of its engine and model used last.
func markOtherSettings(folders []folder, keep int) {
	slices.SortStableFunc(folders, func(a, b folder) int { return b.used.Compare(a.used) })
	seen := map[string]int{}
	for i, f := range folders {
		if f.why != "" || f.rec.Model == "" {
			continue // gone already, or its record unreadable here
		}
		k := filepath.Dir(f.dir) + "\x00" + f.rec.Model
		if seen[k]++; seen[k] > keep {
			folders[i].why = otherSettings(keep)
		}
	}
}

// otherSettings is why a folder beyond the keep of its model goes.
func otherSettings(keep int) string {
	if keep == 1 {
		return "the same model under other settings, not the one used last"
	}
	return fmt.Sprintf("the same model under other settings, not among the %d used last", keep)
}

// remove removes dir unless another process holds it (errHeld), and
// returns the disk space it took.
func remove(dir string) (int64, error) {
	closed := make(chan struct{})
	close(closed)
	release, err := lock(filepath.Join(dir, ".lock"), closed)
	switch {
	case errors.Is(err, errSymlink):
		// Planted: no agent holds the folder through it (RemoveAll removes
		// the link, not what it points at).
		release = func() {}
	case err != nil:
		return 0, errHeld // in use, or not this user's to lock
	}
	defer release()
	size := dirBytes(dir)
	return size, os.RemoveAll(dir)
}

// pruneBeside prunes what a new derivation into dir (held) leaves behind,
// and says once what the folders of the same model under other settings
// that stay take, and how to remove them.
func pruneBeside(root, dir string) {
	pruned, err := prune(root, false, keepSettings)
	if err == nil && len(pruned) > 0 {
		slog.Info("derived files: removed those of models that are gone or of settings not used lately", "folders", len(pruned), "bytes", bytesOf(pruned))
	}
	folders, err := survey(root, false)
	if err != nil {
		return
	}
	i := slices.IndexFunc(folders, func(f folder) bool { return f.dir == dir })
	if i < 0 {
		return
	}
	var others []string
	var size int64
	for _, f := range folders {
		if f.dir != dir && f.why == "" && f.rec.Model == folders[i].rec.Model && filepath.Dir(f.dir) == filepath.Dir(dir) {
			others = append(others, f.dir)
			size += dirBytes(f.dir)
		}
	}
	if len(others) > 0 {
		slog.Info(fmt.Sprintf("derived files: this model's files for other settings stay, for when those are used again (the %d used last are kept; `voice-agent models prune` keeps only the last)", keepSettings),
			"folders", len(others), "bytes", size)
	}
}

// dirBytes is the disk space of the files in dir (a sparse file counts
// what it holds).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				n += diskBytes(info)
			}
		}
		return nil
	})
	return n
}

func bytesOf(pruned []Pruned) int64 {
	var n int64
	for _, p := range pruned {
		n += p.Bytes
	}
	return n
}

// shownPath is path as a line of output shows it: quoted where it holds
// a character a terminal would not print as itself (a newline would
// split the line).
func shownPath(path string) string {
	if strings.IndexFunc(path, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(path)
	}
	return path
}
