package pipeline

import (
	"fmt"
	"slices"
	"testing"
)

// machine is the table of a state machine's legal transitions: the turn's
// (State), the barge-in's and the speculation's, each listed in
// docs/ARCHITECTURE.md and checked against it.
type machine[S comparable] struct {
	name  string
	legal map[S][]S
	// report takes an illegal transition, which is a bug: in production
	// it becomes an error event and the state stays as it was; strict (in
	// tests) it panics, so the test that reaches one fails where it
	// happened.
	report func(error)
	strict bool
}

func newMachine[S comparable](name string, legal map[S][]S, report func(error)) machine[S] {
	return machine[S]{name: name, legal: legal, report: report, strict: testing.Testing()}
}

// move sets *state to next if that is a legal transition from it, and
// says whether it was.
func (m machine[S]) move(state *S, next S) bool {
	if slices.Contains(m.legal[*state], next) {
		*state = next
		return true
	}
	err := fmt.Errorf("pipeline: %s: no transition from %v to %v", m.name, *state, next)
	if m.strict {
		panic(err)
	}
	m.report(err)
	return false
}
