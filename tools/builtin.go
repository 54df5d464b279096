package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/llm"
)

// tool is a built-in tool: its arguments are decoded into an A, and what
// call returns is the result, as JSON.
type tool[A any] struct {
	spec llm.ToolSpec
	call func(ctx context.Context, args A) (any, error)
}

// newTool makes a tool; params is its JSON schema, written out by hand so
// that what the model reads is exactly what is reviewed.
func newTool[A any](name, description, params string, call func(context.Context, A) (any, error)) Tool {
	return &tool[A]{
		spec: llm.ToolSpec{Name: name, Description: description, Parameters: json.RawMessage(params)},
		call: call,
	}
}

func (t *tool[A]) Spec() llm.ToolSpec { return t.spec }

func (t *tool[A]) Call(ctx context.Context, raw json.RawMessage) (string, error) {
	args, err := decodeArgs[A](raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	res, err := t.call(ctx, args)
	if err != nil {
		return "", fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	return marshal(res)
}

// marshal writes a result as compact JSON. HTML escaping is off: the
// model reads the result literally, and a note's "&" should stay "&", not
// become \u0026.
func marshal(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encoding the result: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// decodeArgs decodes a tool call's arguments into T, a struct, strictly:
// an argument T has no field for is an error naming it, so a model that
// misspells one is told so instead of having it silently ignored. No
// arguments at all (empty or null) are taken as {}, as small models write
// them for tools without parameters.
func decodeArgs[T any](args json.RawMessage) (T, error) {
	var v T
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			return v, fmt.Errorf("the arguments must be a JSON object, not %s", te.Value)
		}
		return v, fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	known := fieldNames(reflect.TypeFor[T]())
	var unknown []string
	for name := range fields {
		if !slices.Contains(known, name) {
			unknown = append(unknown, fmt.Sprintf("%q", name))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		takes := "no arguments"
		if len(known) > 0 {
			takes = "only " + strings.Join(known, ", ")
		}
		return v, fmt.Errorf("unknown argument %s: this tool takes %s", strings.Join(unknown, ", "), takes)
	}
	if err := json.Unmarshal(args, &v); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Field != "" {
			return v, fmt.Errorf("%s must be %s, not %s", te.Field, jsonKind(te.Type), te.Value)
		}
		return v, fmt.Errorf("decoding the arguments: %w", err)
	}
	return v, nil
}

// parseAction is the action a tool of several (timer, note) was asked
// for, one of valid; the model may write it in any case.
func parseAction(action string, valid ...string) (string, error) {
	a := strings.ToLower(strings.TrimSpace(action))
	switch {
	case a == "":
		return "", fmt.Errorf("action is required: %s", orList(valid))
	case !slices.Contains(valid, a):
		return "", fmt.Errorf("action must be %s, not %q", orList(valid), action)
	}
	return a, nil
}

// orList writes "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// extra checks that an action was given none of the arguments it does
// not take: args are the arguments given, of those the tool has; takes
// says what the action does take.
func extra(action, takes string, args []string, allowed ...string) error {
	var not []string
	for _, a := range args {
		if !slices.Contains(allowed, a) {
			not = append(not, a)
		}
	}
	if len(not) > 0 {
		return fmt.Errorf("%s takes %s, not %s", action, takes, strings.Join(not, ", "))
	}
	return nil
}

// deref is *s, or "" for an argument left out.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fieldNames are the JSON names of a struct's fields.
func fieldNames(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// jsonKind names a Go type as the JSON value the model should have
// written.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}
