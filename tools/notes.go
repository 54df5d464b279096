package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// maxNotes and maxNoteChars keep the notes a list the model can be
	// given whole, in a small context.
	maxNotes     = 100
	maxNoteChars = 500
)

// Notes are short notes the user asked the assistant to remember, kept in
// a JSON file so that they outlast the session.
type Notes struct {
	path string

	mu    sync.Mutex
	notes []string // oldest first
}

// notesFile is the file's layout: an object, so that a later version can
// add to it.
type notesFile struct {
	Notes []string `json:"notes"`
}

// DefaultNotesPath is $XDG_STATE_HOME/voice-agent/notes.json, else
// ~/.local/state/voice-agent/notes.json: notes are state the assistant
// keeps, neither configuration nor a cache one may delete.
func DefaultNotesPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	// The XDG spec has a relative path ignored.
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("notes: no place for them: %w (set XDG_STATE_HOME)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "voice-agent", "notes.json"), nil
}

// NewNotes loads the notes kept at path; with no file there yet, there are
// none.
func NewNotes(path string) (*Notes, error) {
	n := &Notes{path: path}
	// Stat first: opening a FIFO left there would block until a writer
	// came, and the assistant would never start.
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("notes file %s is not a regular file: move it away", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return n, nil
	}
	var f notesFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("notes file %s is corrupt (%v): repair it, or delete it to start with no notes", path, err)
	}
	n.notes = f.Notes
	if len(n.notes) > maxNotes {
		n.notes = n.notes[len(n.notes)-maxNotes:]
	}
	return n, nil
}

// Tools are remember_note, recall_notes and forget_note.
func (n *Notes) Tools() []Tool {
	return []Tool{
		newTool("remember_note", "Save a short note for the user.",
			`{"type":"object","properties":{`+
				`"text":{"type":"string","description":"What to remember"}},`+
				`"required":["text"]}`,
			n.remember),
		newTool("recall_notes", "Read the saved notes, all or those with a word.",
			`{"type":"object","properties":{`+
				`"query":{"type":"string","description":"A word to look for; leave out for all notes"}}}`,
			n.recall),
		newTool("forget_note", "Delete the notes with a word, or all notes.",
			`{"type":"object","properties":{`+
				`"query":{"type":"string","description":"A word in the notes to delete"},`+
				`"all":{"type":"boolean","description":"true to delete every note"}}}`,
			n.forget),
	}
}

func (n *Notes) remember(_ context.Context, a struct {
	Text string `json:"text"`
}) (any, error) {
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return nil, errors.New("text is required")
	}
	if c := utf8.RuneCountInString(text); c > maxNoteChars {
		return nil, fmt.Errorf("a note can be at most %d characters, and this one has %d: shorten it", maxNoteChars, c)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	next := append(slices.Clone(n.notes), text)
	var dropped string
	if len(next) > maxNotes {
		dropped, next = next[0], next[1:]
	}
	if err := n.save(next); err != nil {
		return nil, err
	}
	n.notes = next
	return struct {
		Remembered string `json:"remembered"`
		Count      int    `json:"notes"`
		// Dropped tells the model, and so the user, that the oldest note
		// made room: at maxNotes it is lost.
		Dropped string `json:"dropped_oldest,omitempty"`
	}{text, len(next), dropped}, nil
}

// recall returns the notes as a list, oldest first, so the newest is what
// the model read last.
func (n *Notes) recall(_ context.Context, a struct {
	Query string `json:"query"`
}) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.notes))
	for _, note := range n.notes {
		if contains(note, a.Query) {
			out = append(out, note)
		}
	}
	return out, nil
}

func (n *Notes) forget(_ context.Context, a struct {
	Query string `json:"query"`
	All   bool   `json:"all"`
}) (any, error) {
	query := strings.TrimSpace(a.Query)
	if given(query != "", a.All) != 1 {
		return nil, errors.New("give either query or all")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	forgot := make([]string, 0, len(n.notes))
	kept := make([]string, 0, len(n.notes))
	for _, note := range n.notes {
		if a.All || contains(note, query) {
			forgot = append(forgot, note)
		} else {
			kept = append(kept, note)
		}
	}
	if len(forgot) == 0 && !a.All {
		return nil, fmt.Errorf("no note contains %q", query)
	}
	if err := n.save(kept); err != nil {
		return nil, err
	}
	n.notes = kept
	return struct {
		Forgot []string `json:"forgot"`
		Left   int      `json:"notes_left"`
	}{forgot, len(kept)}, nil
}

// contains is a case-insensitive strings.Contains; an empty query is in
// every note.
func contains(note, query string) bool {
	return strings.Contains(strings.ToLower(note), strings.ToLower(strings.TrimSpace(query)))
}

// save writes notes to the file.
func (n *Notes) save(notes []string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the file is for people to read and repair too
	enc.SetIndent("", "  ")
	if err := enc.Encode(notesFile{Notes: notes}); err != nil {
		return fmt.Errorf("saving notes: %w", err)
	}
	if err := writeFileAtomic(n.path, b.Bytes()); err != nil {
		return fmt.Errorf("saving notes: %w", err)
	}
	return nil
}

// writeFileAtomic writes a temporary file beside path (mode 0600, in a
// folder made 0700: notes are private) and renames it over path, each
// synced first, so that a crash or power loss leaves the old file or the
// new one, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name()) // the error that matters is err
		return err
	}
	// The rename is durable once the folder is synced.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
