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

// Tools is the one tool note, which remembers, recalls and forgets the
// notes: one tool and not three, since every tool's schema is in every
// prompt.
func (n *Notes) Tools() []Tool {
	return []Tool{
		newTool("note", "Remember, recall or forget the user's notes.",
			`{"type":"object","properties":{`+
				`"action":{"type":"string","enum":["remember","recall","forget"],"description":"What to do"},`+
				`"text":{"type":"string","description":"The note, or a word in it"}},`+
				`"required":["action"]}`,
			n.call),
	}
}

// noteArgs are the note tool's arguments: text is the note to remember,
// or the word to recall or forget the notes with.
type noteArgs struct {
	Action string  `json:"action"`
	Text   *string `json:"text"`
}

func (n *Notes) call(_ context.Context, a noteArgs) (any, error) {
	action, err := parseAction(a.Action, "remember", "recall", "forget")
	if err != nil {
		return nil, err
	}
	switch action {
	case "remember":
		return n.remember(deref(a.Text))
	case "recall":
		return n.recall(deref(a.Text)), nil
	default:
		return n.forget(a.Text)
	}
}

func (n *Notes) remember(text string) (any, error) {
	text = strings.TrimSpace(text)
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

// recall returns the notes with query in them (all of them for an empty
// query) as a list, oldest first, so the newest is what the model read
// last.
func (n *Notes) recall(query string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.notes))
	for _, note := range n.notes {
		if contains(note, query) {
			out = append(out, note)
		}
	}
	return out
}

// forget deletes the notes with query in them, or with none every note.
func (n *Notes) forget(query *string) (any, error) {
	all := query == nil
	var q string
	if !all {
		q = strings.TrimSpace(*query)
		if q == "" {
			// Not taken as left out: an empty text forgetting every note
			// would be a slip the user could not undo.
			return nil, errors.New("text is empty; leave it out to forget every note")
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	forgot := make([]string, 0, len(n.notes))
	kept := make([]string, 0, len(n.notes))
	for _, note := range n.notes {
		if all || contains(note, q) {
			forgot = append(forgot, note)
		} else {
			kept = append(kept, note)
		}
	}
	if len(forgot) == 0 && !all {
		return nil, fmt.Errorf("no note contains %q", q)
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
