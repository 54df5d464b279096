package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noteTool makes notes kept at path, failing the test if they cannot be
// loaded, and returns their one tool.
func noteTool(t *testing.T, path string) Tool {
	t.Helper()
	n, err := NewNotes(path)
	require.NoError(t, err)
	tools := n.Tools()
	require.Len(t, tools, 1)
	return tools[0]
}

// noteJSON writes the note tool's arguments, text as JSON.
func noteJSON(t *testing.T, action, text string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"action": action, "text": text})
	require.NoError(t, err)
	return string(b)
}

// recallAll is every note, as the note tool recalls them.
func recallAll(t *testing.T, tl Tool) []string {
	t.Helper()
	var got []string
	require.NoError(t, json.Unmarshal([]byte(mustCall(t, tl, `{"action":"recall"}`)), &got))
	return got
}

// The note tool is what the model reads in every prompt, exactly.
func TestNoteSpec(t *testing.T) {
	spec := noteTool(t, filepath.Join(t.TempDir(), "notes.json")).Spec()
	assert.Equal(t, "note", spec.Name)
	assert.Equal(t, "Remember, recall or forget the user's notes.", spec.Description)
	assert.Equal(t, `{"type":"object","properties":{`+
		`"action":{"type":"string","enum":["remember","recall","forget"],"description":"What to do"},`+
		`"text":{"type":"string","description":"The note, or a word in it"}},`+
		`"required":["action"]}`, string(spec.Parameters))
	assert.True(t, json.Valid(spec.Parameters))
}

func TestNotesRememberAndRecall(t *testing.T) {
	notes := []string{"buy milk", "Anna's birthday is on 3 May", "钥匙在抽屉里", "salt & pepper <both>", "买牛奶和鸡蛋"}
	tests := []struct {
		name string
		args string
		want []string
	}{
		{"all, newest last", `{"action":"recall"}`, notes},
		{"all, with an empty text", `{"action":"recall","text":""}`, notes},
		{"all, with a null text", `{"action":"recall","text":null}`, notes},
		{"a word", `{"action":"recall","text":"milk"}`, []string{"buy milk"}},
		{"any case", `{"action":"recall","text":"ANNA"}`, []string{"Anna's birthday is on 3 May"}},
		{"the action in any case", `{"action":"Recall","text":"milk"}`, []string{"buy milk"}},
		{"Chinese", `{"action":"recall","text":"牛奶"}`, []string{"买牛奶和鸡蛋"}},
		{"Chinese, one character", `{"action":"recall","text":"抽屉"}`, []string{"钥匙在抽屉里"}},
		{"none", `{"action":"recall","text":"bread"}`, []string{}},
		{"kept literally", `{"action":"recall","text":"&"}`, []string{"salt & pepper <both>"}},
	}
	tl := noteTool(t, filepath.Join(t.TempDir(), "notes.json"))
	for i, n := range notes {
		got := mustCall(t, tl, noteJSON(t, "remember", n))
		want, err := json.Marshal(map[string]any{"remembered": n, "notes": i + 1})
		require.NoError(t, err)
		assert.JSONEq(t, string(want), got)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			require.NoError(t, json.Unmarshal([]byte(mustCall(t, tl, tc.args)), &got))
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNotesRememberedAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "voice-agent", "notes.json")
	first := noteTool(t, path)
	mustCall(t, first, `{"action":"remember","text":"  the car is on level 3  "}`)
	mustCall(t, first, `{"action":"remember","text":"车停在三楼"}`)

	again := noteTool(t, path)
	assert.JSONEq(t, `["the car is on level 3","车停在三楼"]`, mustCall(t, again, `{"action":"recall"}`))

	mustCall(t, again, `{"action":"forget","text":"car"}`)
	assert.JSONEq(t, `["车停在三楼"]`, mustCall(t, noteTool(t, path), `{"action":"recall"}`), "forgotten across a restart too")

	// Private, and nothing left behind by the atomic writes.
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	info, err = os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "notes.json", entries[0].Name())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "车停在三楼", "readable, for a person to repair")
}

func TestNotesBounds(t *testing.T) {
	long := func(r string, n int) string { return `{"action":"remember","text":"` + strings.Repeat(r, n) + `"}` }
	tests := []struct {
		name    string
		args    string
		wantErr string
	}{
		{"500 characters", long("a", 500), ""},
		{"500 Chinese characters (1500 bytes)", long("记", 500), ""},
		{"501 characters", long("a", 501), "note: a note can be at most 500 characters, and this one has 501: shorten it"},
		{"501 Chinese characters", long("记", 501), "note: a note can be at most 500 characters, and this one has 501: shorten it"},
		{"empty", `{"action":"remember","text":"  "}`, "note: text is required"},
		{"missing", `{"action":"remember"}`, "note: text is required"},
		{"null", `{"action":"remember","text":null}`, "note: text is required"},
		{"misnamed", `{"action":"remember","note":"x"}`, `note: unknown argument "note": this tool takes only action, text`},
		{"the old query", `{"action":"recall","query":"x"}`, `note: unknown argument "query": this tool takes only action, text`},
		{"no action", `{"text":"x"}`, "note: action is required: remember, recall or forget"},
		{"no arguments at all", ``, "note: action is required: remember, recall or forget"},
		{"an unknown action", `{"action":"save","text":"x"}`, `note: action must be remember, recall or forget, not "save"`},
		{"an old tool's name", `{"action":"remember_note","text":"x"}`, `note: action must be remember, recall or forget, not "remember_note"`},
		{"an action as a number", `{"action":1,"text":"x"}`, "note: action must be a string, not number"},
		{"text as a number", `{"action":"remember","text":3}`, "note: text must be a string, not number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			tl := noteTool(t, path)
			_, err := tl.Call(context.Background(), json.RawMessage(tc.args))
			got := recallAll(t, tl)
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				assert.Empty(t, got)
				assert.NoFileExists(t, path)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got, 1)
		})
	}

	t.Run("the 101st note drops the oldest, and says so", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.json")
		tl := noteTool(t, path)
		for i := range maxNotes {
			mustCall(t, tl, fmt.Sprintf(`{"action":"remember","text":"note %d"}`, i))
		}
		got := mustCall(t, tl, `{"action":"remember","text":"one more"}`)
		assert.JSONEq(t, `{"remembered":"one more","notes":100,"dropped_oldest":"note 0"}`, got)
		all := recallAll(t, noteTool(t, path))
		require.Len(t, all, maxNotes)
		assert.Equal(t, "note 1", all[0])
		assert.Equal(t, "one more", all[maxNotes-1])
	})

	t.Run("a longer file keeps its newest notes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.json")
		var f notesFile
		for i := range maxNotes + 5 {
			f.Notes = append(f.Notes, fmt.Sprint(i))
		}
		data, err := json.Marshal(f)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		all := recallAll(t, noteTool(t, path))
		require.Len(t, all, maxNotes)
		assert.Equal(t, "5", all[0])
	})
}

func TestForgetNote(t *testing.T) {
	start := []string{"buy milk", "Milk the cow", "钥匙在抽屉里", "call Bob"}
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
		left    []string
	}{
		{"by a word, any case", `{"action":"forget","text":"MILK"}`, `{"forgot":["buy milk","Milk the cow"],"notes_left":2}`, "", []string{"钥匙在抽屉里", "call Bob"}},
		{"in Chinese", `{"action":"forget","text":"钥匙"}`, `{"forgot":["钥匙在抽屉里"],"notes_left":3}`, "", []string{"buy milk", "Milk the cow", "call Bob"}},
		{"all, with no text", `{"action":"forget"}`, `{"forgot":["buy milk","Milk the cow","钥匙在抽屉里","call Bob"],"notes_left":0}`, "", []string{}},
		{"all, with a null text", `{"action":"forget","text":null}`, `{"forgot":["buy milk","Milk the cow","钥匙在抽屉里","call Bob"],"notes_left":0}`, "", []string{}},
		{"no match", `{"action":"forget","text":"bread"}`, "", `note: no note contains "bread"`, start},
		{"an empty text", `{"action":"forget","text":""}`, "", "note: text is empty; leave it out to forget every note", start},
		{"a blank text", `{"action":"forget","text":" "}`, "", "note: text is empty; leave it out to forget every note", start},
		{"the old all", `{"action":"forget","all":true}`, "", `note: unknown argument "all": this tool takes only action, text`, start},
		{"no action", `{"text":"milk"}`, "", "note: action is required: remember, recall or forget", start},
		{"an unknown action", `{"action":"delete","text":"milk"}`, "", `note: action must be remember, recall or forget, not "delete"`, start},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			tl := noteTool(t, path)
			for _, n := range start {
				mustCall(t, tl, noteJSON(t, "remember", n))
			}
			got, err := tl.Call(context.Background(), json.RawMessage(tc.args))
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
				assert.JSONEq(t, tc.want, got)
			}
			assert.Equal(t, tc.left, recallAll(t, noteTool(t, path)))
		})
	}

	t.Run("all, with no notes", func(t *testing.T) {
		tl := noteTool(t, filepath.Join(t.TempDir(), "notes.json"))
		assert.JSONEq(t, `{"forgot":[],"notes_left":0}`, mustCall(t, tl, `{"action":"forget"}`))
	})
}

func TestNotesFileProblems(t *testing.T) {
	tests := []struct {
		name    string
		write   func(path string) error
		notes   int
		wantErr []string
	}{
		{"no file yet", func(string) error { return nil }, 0, nil},
		{"an empty file", func(p string) error { return os.WriteFile(p, nil, 0o600) }, 0, nil},
		{"not JSON", func(p string) error { return os.WriteFile(p, []byte(`{"notes":["a",`), 0o600) },
			0, []string{"notes file", "notes.json is corrupt", "repair it, or delete it to start with no notes"}},
		{"a list, not an object", func(p string) error { return os.WriteFile(p, []byte(`["a"]`), 0o600) },
			0, []string{"notes.json is corrupt", "delete it"}},
		{"notes that are not text", func(p string) error { return os.WriteFile(p, []byte(`{"notes":[1]}`), 0o600) },
			0, []string{"notes.json is corrupt", "delete it"}},
		{"other fields are kept out of the way", func(p string) error {
			return os.WriteFile(p, []byte(`{"version":2,"notes":["a"]}`), 0o600)
		}, 1, nil},
		{"a folder", func(p string) error { return os.Mkdir(p, 0o700) }, 0, []string{"notes.json is not a regular file"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			require.NoError(t, tc.write(path))
			n, err := NewNotes(path)
			if tc.wantErr != nil {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.Contains(t, err.Error(), path, "names the file")
				return
			}
			require.NoError(t, err)
			assert.Len(t, recallAll(t, n.Tools()[0]), tc.notes)
		})
	}

	// A note that cannot be saved is not remembered either: what the
	// assistant says it knows is what it will know after a restart.
	t.Run("a failed save changes nothing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.Mkdir(dir, 0o700))
		tl := noteTool(t, filepath.Join(dir, "notes.json"))
		mustCall(t, tl, `{"action":"remember","text":"kept"}`)
		// A file where the folder was: even root cannot save there.
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.WriteFile(dir, nil, 0o600))
		_, err := tl.Call(context.Background(), json.RawMessage(`{"action":"remember","text":"x"}`))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "note: saving notes:")
		_, err = tl.Call(context.Background(), json.RawMessage(`{"action":"forget","text":"kept"}`))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "note: saving notes:")
		_, err = tl.Call(context.Background(), json.RawMessage(`{"action":"forget"}`))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "note: saving notes:")
		assert.JSONEq(t, `["kept"]`, mustCall(t, tl, `{"action":"recall"}`))
	})
}

func TestDefaultNotesPath(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name  string
		state string
		want  string
	}{
		{"XDG_STATE_HOME", "/var/lib/me", "/var/lib/me/voice-agent/notes.json"},
		{"unset", "", filepath.Join(home, ".local", "state", "voice-agent", "notes.json")},
		{"relative, which XDG says to ignore", "state", filepath.Join(home, ".local", "state", "voice-agent", "notes.json")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", home)
			t.Setenv("XDG_STATE_HOME", tc.state)
			got, err := DefaultNotesPath()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
