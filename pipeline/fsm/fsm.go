// Package fsm checks a state machine's moves against its table of legal
// transitions: the turn's, the barge-in's, a reply's lifecycle and the
// listening side's, each listed in docs/ARCHITECTURE.md and checked
// against it.
package fsm

import (
	"fmt"
	"slices"
	"testing"
)

// Machine is a state machine's table of legal transitions.
type Machine[S comparable] struct {
	name  string
	legal map[S][]S
	// report takes an illegal transition, which is a bug: in production
	// it becomes an error event and the state stays as it was; strict (in
	// tests) it panics, so the test that reaches one fails where it
	// happened.
	report func(error)
	strict bool
}

// New is the machine called name with the transitions legal, reporting an
// illegal one to report.
func New[S comparable](name string, legal map[S][]S, report func(error)) Machine[S] {
	return Machine[S]{name: name, legal: legal, report: report, strict: testing.Testing()}
}

// Lenient is m reporting illegal transitions instead of panicking, in a
// test as in production.
func (m Machine[S]) Lenient(report func(error)) Machine[S] {
	m.strict, m.report = false, report
	return m
}

// Move sets *state to next if that is a legal transition from it, and
// says whether it was.
func (m Machine[S]) Move(state *S, next S) bool {
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
