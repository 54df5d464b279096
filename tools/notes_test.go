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

// noteTools makes notes kept at path, failing the test if they cannot be
// loaded.
func noteTools(t *testing.T, path string) map[string]Tool {
	t.Helper()
	n, err := NewNotes(path)
	require.NoError(t, err)
	return byName(n.Tools())
}

func TestNotesRememberAndRecall(t *testing.T) {
	notes := []string{"buy milk", "Anna's birthday is on 3 May", "钥匙在抽屉里", "salt & pepper <both>", "买牛奶和鸡蛋"}
	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{"all, newest last", "", notes},
		{"all, with an empty query", `""`, notes},
		{"a word", `"milk"`, []string{"buy milk"}},
		{"any case", `"ANNA"`, []string{"Anna's birthday is on 3 May"}},
		{"Chinese", `"牛奶"`, []string{"买牛奶和鸡蛋"}},
		{"Chinese, one character", `"抽屉"`, []string{"钥匙在抽屉里"}},
		{"none", `"bread"`, []string{}},
		{"kept literally", `"&"`, []string{"salt & pepper <both>"}},
	}
	tl := noteTools(t, filepath.Join(t.TempDir(), "notes.json"))
	for i, n := range notes {
		text, err := json.Marshal(n)
		require.NoError(t, err)
		got := mustCall(t, tl["remember_note"], `{"text":`+string(text)+`}`)
		want, err := json.Marshal(map[string]any{"remembered": n, "notes": i + 1})
		require.NoError(t, err)
		assert.JSONEq(t, string(want), got)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := "{}"
			if tc.query != "" {
				args = `{"query":` + tc.query + `}`
			}
			var got []string
			require.NoError(t, json.Unmarshal([]byte(mustCall(t, tl["recall_notes"], args)), &got))
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNotesRememberedAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "voice-agent", "notes.json")
	first := noteTools(t, path)
	mustCall(t, first["remember_note"], `{"text":"  the car is on level 3  "}`)
	mustCall(t, first["remember_note"], `{"text":"车停在三楼"}`)

	again := noteTools(t, path)
	assert.JSONEq(t, `["the car is on level 3","车停在三楼"]`, mustCall(t, again["recall_notes"], `{}`))

	mustCall(t, again["forget_note"], `{"query":"car"}`)
	assert.JSONEq(t, `["车停在三楼"]`, mustCall(t, noteTools(t, path)["recall_notes"], `{}`), "forgotten across a restart too")

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
	long := func(r string, n int) string { return `{"text":"` + strings.Repeat(r, n) + `"}` }
	tests := []struct {
		name    string
		args    string
		wantErr string
	}{
		{"500 characters", long("a", 500), ""},
		{"500 Chinese characters (1500 bytes)", long("记", 500), ""},
		{"501 characters", long("a", 501), "remember_note: a note can be at most 500 characters, and this one has 501: shorten it"},
		{"501 Chinese characters", long("记", 501), "remember_note: a note can be at most 500 characters, and this one has 501: shorten it"},
		{"empty", `{"text":"  "}`, "remember_note: text is required"},
		{"missing", `{}`, "remember_note: text is required"},
		{"misnamed", `{"note":"x"}`, `remember_note: unknown argument "note": this tool takes only text`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			tl := noteTools(t, path)
			_, err := tl["remember_note"].Call(context.Background(), json.RawMessage(tc.args))
			var got []string
			require.NoError(t, json.Unmarshal([]byte(mustCall(t, tl["recall_notes"], `{}`)), &got))
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
		tl := noteTools(t, path)
		for i := range maxNotes {
			mustCall(t, tl["remember_note"], fmt.Sprintf(`{"text":"note %d"}`, i))
		}
		got := mustCall(t, tl["remember_note"], `{"text":"one more"}`)
		assert.JSONEq(t, `{"remembered":"one more","notes":100,"dropped_oldest":"note 0"}`, got)
		var all []string
		require.NoError(t, json.Unmarshal([]byte(mustCall(t, noteTools(t, path)["recall_notes"], `{}`)), &all))
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
		var all []string
		require.NoError(t, json.Unmarshal([]byte(mustCall(t, noteTools(t, path)["recall_notes"], `{}`)), &all))
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
		{"by a word, any case", `{"query":"MILK"}`, `{"forgot":["buy milk","Milk the cow"],"notes_left":2}`, "", []string{"钥匙在抽屉里", "call Bob"}},
		{"in Chinese", `{"query":"钥匙"}`, `{"forgot":["钥匙在抽屉里"],"notes_left":3}`, "", []string{"buy milk", "Milk the cow", "call Bob"}},
		{"all", `{"all":true}`, `{"forgot":["buy milk","Milk the cow","钥匙在抽屉里","call Bob"],"notes_left":0}`, "", []string{}},
		{"no match", `{"query":"bread"}`, "", `forget_note: no note contains "bread"`, start},
		{"neither", `{}`, "", "forget_note: give either query or all", start},
		{"an empty query", `{"query":" "}`, "", "forget_note: give either query or all", start},
		{"all false", `{"all":false}`, "", "forget_note: give either query or all", start},
		{"both", `{"query":"milk","all":true}`, "", "forget_note: give either query or all", start},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			tl := noteTools(t, path)
			for _, n := range start {
				mustCall(t, tl["remember_note"], `{"text":"`+n+`"}`)
			}
			got, err := tl["forget_note"].Call(context.Background(), json.RawMessage(tc.args))
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
				assert.JSONEq(t, tc.want, got)
			}
			var left []string
			require.NoError(t, json.Unmarshal([]byte(mustCall(t, noteTools(t, path)["recall_notes"], `{}`)), &left))
			assert.Equal(t, tc.left, left)
		})
	}

	t.Run("all, with no notes", func(t *testing.T) {
		tl := noteTools(t, filepath.Join(t.TempDir(), "notes.json"))
		assert.JSONEq(t, `{"forgot":[],"notes_left":0}`, mustCall(t, tl["forget_note"], `{"all":true}`))
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
			var got []string
			require.NoError(t, json.Unmarshal([]byte(mustCall(t, byName(n.Tools())["recall_notes"], `{}`)), &got))
			assert.Len(t, got, tc.notes)
		})
	}

	// A note that cannot be saved is not remembered either: what the
	// assistant says it knows is what it will know after a restart.
	t.Run("a failed save changes nothing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "state")
		require.NoError(t, os.Mkdir(dir, 0o700))
		tl := noteTools(t, filepath.Join(dir, "notes.json"))
		// A file where the folder was: even root cannot save there.
		require.NoError(t, os.Remove(dir))
		require.NoError(t, os.WriteFile(dir, nil, 0o600))
		_, err := tl["remember_note"].Call(context.Background(), json.RawMessage(`{"text":"x"}`))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "remember_note: saving notes:")
		assert.JSONEq(t, `[]`, mustCall(t, tl["recall_notes"], `{}`))
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
