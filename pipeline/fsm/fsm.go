// Package fsm checks a state machine's moves against its table of legal
// transitions: the turn's, the barge-in's, a reply's lifecycle and the
// listening side's, each listed in docs/ARCHITECTURE.md and checked
// against it.
package fsm

import (
	"fmt"
	"slices"
)

// Machine is a state machine's table of legal transitions.
type Machine[S comparable] struct {
	name  string
	legal map[S][]S
	// report takes an illegal transition, which is a bug, and the state
	// stays as it was: the pipeline publishes it as an error event, on
	// which its tests fail, while a user's session goes on.
	report func(error)
}

// New is the machine called name with the transitions legal, reporting an
// illegal one to report.
func New[S comparable](name string, legal map[S][]S, report func(error)) Machine[S] {
	return Machine[S]{name: name, legal: legal, report: report}
}

// Move sets *state to next if that is a legal transition from it, and
// says whether it was.
func (m Machine[S]) Move(state *S, next S) bool {
	if slices.Contains(m.legal[*state], next) {
		*state = next
		return true
	}
	m.report(fmt.Errorf("pipeline: %s: no transition from %v to %v", m.name, *state, next))
	return false
}
