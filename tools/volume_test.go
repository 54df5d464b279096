package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
)

// set_volume turns the player itself.
var _ Volumer = (*audio.Player)(nil)

type fakeVolume struct{ v float32 }

func (f *fakeVolume) SetVolume(v float32) { f.v = v }
func (f *fakeVolume) Volume() float32     { return f.v }

func TestSetVolume(t *testing.T) {
	type step struct {
		args    string // empty: another control sets the volume to set
		set     float32
		want    string
		wantErr string
	}
	tests := []struct {
		name  string
		start float32
		steps []step
		end   float32 // the Volumer's level at the end
	}{
		{"up", 0.4, []step{{args: `{"action":"up"}`, want: `{"volume":60,"muted":false}`}}, 0.6},
		{"up stops at 100", 0.9, []step{{args: `{"action":"up"}`, want: `{"volume":100,"muted":false}`}}, 1},
		{"down", 1, []step{
			{args: `{"action":"down"}`, want: `{"volume":80,"muted":false}`},
			{args: `{"action":"down"}`, want: `{"volume":60,"muted":false}`},
		}, 0.6},
		{"down stops at 0", 0.1, []step{{args: `{"action":"down"}`, want: `{"volume":0,"muted":false}`}}, 0},
		{"set", 1, []step{{args: `{"action":"set","level":35}`, want: `{"volume":35,"muted":false}`}}, 0.35},
		{"set 0", 1, []step{{args: `{"action":"set","level":0}`, want: `{"volume":0,"muted":false}`}}, 0},
		{"mute, then unmute restores the level", 0.6, []step{
			{args: `{"action":"mute"}`, want: `{"volume":0,"muted":true}`},
			{args: `{"action":"mute"}`, want: `{"volume":0,"muted":true}`},
			{args: `{"action":"unmute"}`, want: `{"volume":60,"muted":false}`},
		}, 0.6},
		{"up while muted goes up from the level before", 0.6, []step{
			{args: `{"action":"mute"}`, want: `{"volume":0,"muted":true}`},
			{args: `{"action":"up"}`, want: `{"volume":80,"muted":false}`},
		}, 0.8},
		{"set while muted unmutes", 0.6, []step{
			{args: `{"action":"mute"}`, want: `{"volume":0,"muted":true}`},
			{args: `{"action":"set","level":20}`, want: `{"volume":20,"muted":false}`},
			{args: `{"action":"unmute"}`, want: `{"volume":20,"muted":false}`},
		}, 0.2},
		{"a level set elsewhere ends the mute", 0.6, []step{
			{args: `{"action":"mute"}`, want: `{"volume":0,"muted":true}`},
			{set: 0.3},
			{args: `{"action":"unmute"}`, want: `{"volume":30,"muted":false}`},
		}, 0.3},
		{"unmute to silence is a step up", 0, []step{
			{args: `{"action":"unmute"}`, want: `{"volume":20,"muted":false}`},
		}, 0.2},
		{"errors change nothing", 0.5, []step{
			{args: `{}`, wantErr: "set_volume: action is required"},
			{args: `{"action":"set"}`, wantErr: "set_volume: set needs level, 0 to 100"},
			{args: `{"action":"set","level":101}`, wantErr: "level must be 0 to 100, not 101"},
			{args: `{"action":"set","level":-1}`, wantErr: "level must be 0 to 100, not -1"},
			{args: `{"action":"set","level":"50"}`, wantErr: "level must be a whole number, not string"},
			{args: `{"action":"up","level":20}`, wantErr: "level goes only with set, not with up"},
			{args: `{"action":"louder"}`, wantErr: `action must be up, down, set, mute or unmute, not "louder"`},
			{args: `{"action":"up","by":20}`, wantErr: `unknown argument "by"`},
		}, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &fakeVolume{v: tc.start}
			tl := NewVolume(v)
			for i, s := range tc.steps {
				if s.args == "" {
					v.SetVolume(s.set)
					continue
				}
				got, err := tl.Call(context.Background(), json.RawMessage(s.args))
				if s.wantErr != "" {
					require.Error(t, err, "step %d", i)
					assert.Contains(t, err.Error(), s.wantErr, "step %d", i)
					continue
				}
				require.NoError(t, err, "step %d", i)
				assert.JSONEq(t, s.want, got, "step %d", i)
			}
			assert.InDelta(t, tc.end, v.Volume(), 1e-6)
		})
	}
}

// The player's clamped float volume reads back as whole points.
func TestSetVolumeOnPlayer(t *testing.T) {
	p := audio.NewPlayer(audio.Mono16k, time.Second, nil)
	tl := NewVolume(p)
	for _, c := range []struct {
		args string
		want float32
	}{
		{`{"action":"set","level":70}`, 0.7},
		{`{"action":"down"}`, 0.5},
		{`{"action":"mute"}`, 0},
		{`{"action":"unmute"}`, 0.5},
	} {
		_, err := tl.Call(context.Background(), json.RawMessage(c.args))
		require.NoError(t, err)
		assert.InDelta(t, c.want, p.Volume(), 1e-6, "%s", c.args)
	}
}
