package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
)

// builtins makes every built-in tool, with stand-ins for what they act on.
func builtins(t *testing.T) []Tool {
	t.Helper()
	timers := NewTimers(clock.NewVirtual(), time.Now)
	t.Cleanup(timers.Close)
	notes, err := NewNotes(t.TempDir() + "/notes.json")
	require.NoError(t, err)
	all := []Tool{NewTime(time.Now), NewVolume(&fakeVolume{v: 1}), NewRepeat(func() string { return "" })}
	all = append(all, timers.Tools()...)
	return append(all, notes.Tools()...)
}

// The list Disable checks against is the tools there are, and each
// tool's schema is one the model can follow: an object whose properties
// are exactly the arguments the tool takes.
func TestBuiltinSpecs(t *testing.T) {
	var names []string
	for _, tl := range builtins(t) {
		spec := tl.Spec()
		names = append(names, spec.Name)
		t.Run(spec.Name, func(t *testing.T) {
			assert.NotEmpty(t, spec.Description)
			assert.LessOrEqual(t, len(spec.Description), 80, "short, for a small model")
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			dec := json.NewDecoder(bytes.NewReader(spec.Parameters))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&schema), "%s", spec.Parameters)
			assert.Equal(t, "object", schema.Type)
			// An empty "required" is left out, as Hugging Face's schemas
			// leave it: every character is in every prompt.
			assert.NotNil(t, schema.Properties)
			for _, r := range schema.Required {
				assert.Contains(t, schema.Properties, r, "required but not a property")
			}
			for name, p := range schema.Properties {
				var prop struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				}
				require.NoError(t, json.Unmarshal(p, &prop))
				assert.Contains(t, []string{"integer", "string", "boolean"}, prop.Type, "%s", name)
				assert.NotEmpty(t, prop.Description, "%s", name)
				// A property the tool does not take would be refused as
				// unknown when the model uses it.
				_, err := tl.Call(context.Background(), json.RawMessage(`{"`+name+`":null}`))
				if err != nil {
					assert.NotContains(t, err.Error(), "unknown argument", "%s", name)
				}
			}
			_, err := tl.Call(context.Background(), json.RawMessage(`{"bogus":1}`))
			require.Error(t, err)
			assert.Contains(t, err.Error(), spec.Name+`: unknown argument "bogus"`)
		})
	}
	assert.ElementsMatch(t, builtinNames, names)
	assert.Equal(t, []string{"get_time", "timer", "note", "set_volume", "repeat_last_reply"}, builtinNames,
		"five tools: every one is in every prompt")
}

func TestDisable(t *testing.T) {
	names := func(ts []Tool) []string {
		var out []string
		for _, tl := range ts {
			out = append(out, tl.Spec().Name)
		}
		return out
	}
	tests := []struct {
		name    string
		off     []string
		want    []string
		wantErr string
	}{
		{"none", nil, builtinNames, ""},
		{"one", []string{"set_volume"}, slices.DeleteFunc(slices.Clone(builtinNames), func(n string) bool { return n == "set_volume" }), ""},
		{"timers and notes", []string{"timer", "note"}, []string{"get_time", "set_volume", "repeat_last_reply"}, ""},
		{"every one", builtinNames, nil, ""},
		{"a typo", []string{"get_time", "timr"}, nil,
			`cannot disable "timr": no such built-in tool (they are get_time, timer, note, set_volume, repeat_last_reply)`},
		{"two typos", []string{"x", "get_time", "y"}, nil, `cannot disable "x", "y": no such built-in tool`},
		// A configuration written for the ten tools there were is told of
		// the five there are, not left with the tools on.
		{"tools merged into timer and note", []string{"set_timer", "forget_note"}, nil,
			`cannot disable "set_timer", "forget_note": no such built-in tool (they are get_time, timer, note, set_volume, repeat_last_reply)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			all := builtins(t)
			before := names(all)
			got, err := Disable(all, tc.off)
			assert.Equal(t, before, names(all), "the tools given are left alone")
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, names(got))
		})
	}

	t.Run("a built-in not among the tools", func(t *testing.T) {
		got, err := Disable([]Tool{NewTime(time.Now)}, []string{"timer"})
		require.NoError(t, err)
		assert.Len(t, got, 1)
	})
}
