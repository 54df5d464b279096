package derived

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// sourcesFile names, in each folder, the model files it was derived from,
// with their sums: what Prune checks.
const sourcesFile = "sources"

// recordSources writes what dir is derived from, once.
func recordSources(dir string, paths, sums []string) error {
	var b strings.Builder
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s\n", sums[i], abs)
	}
	if kept, err := os.ReadFile(filepath.Join(dir, sourcesFile)); err == nil && string(kept) == b.String() {
		return nil
	}
	return WriteFile(filepath.Join(dir, sourcesFile), func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// Pruned is a folder Prune removed.
type Pruned struct {
	Dir   string
	Why   string
	Bytes int64
}

// Prune removes the folders of derived files whose model is gone: a
// source file missing, or, if deep, changed since (which costs hashing
// every model; a changed model is otherwise met with a folder of its
// own, and the old one stays until a deep prune). A folder another
// process holds (it is deriving into it) is left alone; a folder that
// names no sources (made before they were recorded) is removed, and made
// again by the next load that needs it. An agent that maps files of a
// removed folder keeps them until it exits.
func Prune(deep bool) ([]Pruned, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*"))
	if err != nil {
		return nil, err
	}
	var pruned []Pruned
	for _, dir := range dirs {
		if info, err := os.Lstat(dir); err != nil || !info.IsDir() || filepath.Base(filepath.Dir(dir)) == "sums" {
			continue
		}
		why := stale(root, dir, deep)
		if why == "" {
			continue
		}
		closed := make(chan struct{})
		close(closed)
		release, err := lock(filepath.Join(dir, ".lock"), closed)
		if err != nil {
			continue // in use
		}
		size := dirBytes(dir)
		err = os.RemoveAll(dir)
		release()
		if err != nil {
			return pruned, err
		}
		pruned = append(pruned, Pruned{Dir: dir, Why: why, Bytes: size})
	}
	return pruned, nil
}

// stale says why dir's model is gone, "" if it is not.
func stale(root, dir string, deep bool) string {
	f, err := os.Open(filepath.Join(dir, sourcesFile))
	if errors.Is(err, os.ErrNotExist) {
		return "it names no model (made by an earlier agent)"
	}
	if err != nil {
		return ""
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		sum, path, ok := strings.Cut(lines.Text(), " ")
		if !ok {
			return "its record of the model is damaged"
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return path + " is gone"
		}
		if deep {
			if now, err := contentSum(root, path); err == nil && now != sum {
				return path + " has changed"
			}
		}
	}
	return ""
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
