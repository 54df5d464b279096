package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type testArgs struct {
	N *int   `json:"n"`
	S string `json:"s"`
	B bool   `json:"b"`
}

func TestDecodeArgs(t *testing.T) {
	seven := 7
	tests := []struct {
		name    string
		args    string
		want    testArgs
		wantErr string
	}{
		{"empty is no arguments", "", testArgs{}, ""},
		{"null is no arguments", " null ", testArgs{}, ""},
		{"an empty object", "{}", testArgs{}, ""},
		{"all fields", `{"n":7,"s":"泡茶","b":true}`, testArgs{N: &seven, S: "泡茶", B: true}, ""},
		{"an unknown field", `{"n":7,"seconds":3}`, testArgs{}, `unknown argument "seconds": this tool takes only n, s, b`},
		{"unknown fields, sorted", `{"z":1,"a":2}`, testArgs{}, `unknown argument "a", "z": this tool takes only n, s, b`},
		{"names are case-sensitive", `{"N":7}`, testArgs{}, `unknown argument "N"`},
		{"an array", `[1]`, testArgs{}, "the arguments must be a JSON object, not array"},
		{"a string", `"n"`, testArgs{}, "the arguments must be a JSON object, not string"},
		{"not JSON", `{"n":`, testArgs{}, "the arguments are not valid JSON"},
		{"trailing text", `{"n":1} x`, testArgs{}, "the arguments are not valid JSON"},
		{"a string for a number", `{"n":"7"}`, testArgs{}, "n must be a whole number, not string"},
		{"a fraction for a whole number", `{"n":7.5}`, testArgs{}, "n must be a whole number, not number 7.5"},
		{"a number for a string", `{"s":3}`, testArgs{}, "s must be a string, not number"},
		{"a string for a flag", `{"b":"yes"}`, testArgs{}, "b must be true or false, not string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeArgs[testArgs](json.RawMessage(tc.args))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	t.Run("a tool without arguments says so", func(t *testing.T) {
		_, err := decodeArgs[struct{}](json.RawMessage(`{"x":1}`))
		assert.EqualError(t, err, `unknown argument "x": this tool takes no arguments`)
	})
}

func TestMarshalKeepsText(t *testing.T) {
	got, err := marshal(map[string]string{"note": "salt & pepper <b>"})
	require.NoError(t, err)
	assert.Equal(t, `{"note":"salt & pepper <b>"}`, got)
}

func byName(ts []Tool) map[string]Tool {
	m := make(map[string]Tool, len(ts))
	for _, tl := range ts {
		m[tl.Spec().Name] = tl
	}
	return m
}

func mustCall(t *testing.T, tl Tool, args string) string {
	t.Helper()
	got, err := tl.Call(context.Background(), json.RawMessage(args))
	require.NoError(t, err, "%s %s", tl.Spec().Name, args)
	return got
}
