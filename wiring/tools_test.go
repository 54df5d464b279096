package wiring

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tools"
)

// toolUser is a generator double that records what it was told of tools.
type toolUser struct{ told [][]string }

func (g *toolUser) Generate(context.Context, []llm.Message, func(string) error) (llm.Stats, error) {
	return llm.Stats{}, nil
}

func (g *toolUser) SetTools(specs []llm.ToolSpec) error {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	g.told = append(g.told, names)
	return nil
}

func TestToolset(t *testing.T) {
	builtins := []string{"get_time", "timer", "note", "set_volume", "repeat_last_reply"}
	for _, tc := range []struct {
		name    string
		disable []string
		want    []string
		err     string
	}{
		{name: "every built-in", want: builtins},
		{name: "some turned off", disable: []string{"note", "repeat_last_reply"},
			want: slices.DeleteFunc(slices.Clone(builtins), func(n string) bool { return n == "note" || n == "repeat_last_reply" })},
		{name: "a typo is an error", disable: []string{"get_tmie"}, err: "get_tmie"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gen := &toolUser{}
			cfg := DefaultTools()
			cfg.Enabled, cfg.Disable, cfg.NotesFile = true, tc.disable, filepath.Join(t.TempDir(), "notes.json")
			ts, err := NewToolset(cfg, clock.NewVirtual(), llm.NewHistory("", 0), gen, nil)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer ts.Close()
			var names []string
			for _, s := range ts.Registry.Specs() {
				names = append(names, s.Name)
			}
			assert.Equal(t, tc.want, names)
			require.Len(t, gen.told, 1, "the model is told of the tools once they are in")
			assert.Equal(t, tc.want, gen.told[0])

			// The host's tools go into the same registry, and the model
			// is told again.
			host := tools.NewHostTools(ts.Registry, func(tools.HostCall) error { return nil }, time.Second)
			require.NoError(t, host.Declare([]llm.ToolSpec{{Name: "take_photo", Description: "Takes a photo."}}))
			require.Len(t, gen.told, 2)
			assert.Equal(t, "take_photo", gen.told[1][len(gen.told[1])-1])
		})
	}
}

// A notes file that cannot be read stops the start with the file named,
// not a session that forgets what it was told.
func TestToolsetCorruptNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.json")
	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o600))
	cfg := DefaultTools()
	cfg.Enabled, cfg.NotesFile = true, path
	_, err := NewToolset(cfg, clock.NewVirtual(), llm.NewHistory("", 0), &toolUser{}, nil)
	require.ErrorContains(t, err, path)
}

// The volume set before the session has a player plays once it has one.
func TestVolumeAttach(t *testing.T) {
	var v Volume
	v.SetVolume(0.4)
	p := audio.NewPlayer(audio.Mono16k, time.Second, clock.NewVirtual())
	v.Attach(p)
	assert.InDelta(t, 0.4, p.Volume(), 1e-6)
	v.SetVolume(0.8)
	assert.InDelta(t, 0.8, p.Volume(), 1e-6)
	assert.InDelta(t, 0.8, v.Volume(), 1e-6)
}

func TestToolsValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Tools)
		err  string
	}{
		{func(*Tools) {}, ""},
		{func(t *Tools) { t.HostTimeout = -time.Second }, "tools.host_timeout"},
		{func(t *Tools) { t.AckAfter = time.Minute }, "tools.ack_after"},
		{func(t *Tools) { t.Rounds = 11 }, "tools.rounds"},
		{func(t *Tools) { t.Disable = []string{"nope"} }, "tools.disable"},
	} {
		cfg := DefaultTools()
		tc.edit(&cfg)
		err := cfg.Validate()
		if tc.err == "" {
			assert.NoError(t, err)
		} else {
			assert.ErrorContains(t, err, tc.err)
		}
	}
}

// Build with tools on hands the pipeline the registry, its policy and the
// timers' notices; off, none of them (the golden event streams' case).
func TestBuildWithTools(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"user":[],"replies":["hello"]}`), 0o644))
	s := DefaultStages()
	s.VAD, s.ASR, s.Turn, s.LLM, s.TTS, s.Script = VADEnergy, ASRScripted, TurnNone, LLMScripted, TTSNone, script
	s.Tools.NotesFile = filepath.Join(t.TempDir(), "notes.json")

	cfg, closeStages, err := Build(s, clock.NewVirtual())
	require.NoError(t, err)
	assert.Nil(t, cfg.Tools)
	assert.Nil(t, cfg.Notices)
	require.NoError(t, closeStages())

	s.Tools.Enabled = true
	cfg, closeStages, err = Build(s, clock.NewVirtual())
	require.NoError(t, err)
	assert.NotNil(t, cfg.Tools)
	assert.NotNil(t, cfg.Notices)
	assert.Equal(t, 3, cfg.ToolPolicy.Rounds)
	require.NoError(t, closeStages())
	_, open := <-cfg.Notices
	assert.False(t, open, "closing the stages stops the timers")
}
