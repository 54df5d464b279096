package tools

import (
	"fmt"
	"slices"
	"strings"
)

// builtinNames are the names of the built-in tools, which Disable checks a
// configuration against.
var builtinNames = []string{
	"get_time",
	"timer",
	"note",
	"set_volume",
	"repeat_last_reply",
}

// Disable returns tools without those named in off, which must all be
// built-in tools: a misspelt name in a configuration would otherwise
// leave a tool on that the user meant to turn off.
func Disable(tools []Tool, off []string) ([]Tool, error) {
	var unknown []string
	for _, name := range off {
		if !slices.Contains(builtinNames, name) {
			unknown = append(unknown, fmt.Sprintf("%q", name))
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("cannot disable %s: no such built-in tool (they are %s)",
			strings.Join(unknown, ", "), strings.Join(builtinNames, ", "))
	}
	kept := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if !slices.Contains(off, t.Spec().Name) {
			kept = append(kept, t)
		}
	}
	return kept, nil
}
