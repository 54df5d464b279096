package pipeline

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline/fsm"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/pipeline/reply"
)

// docTransitions reads the table under heading in docs/ARCHITECTURE.md
// as from → to pairs.
func docTransitions(t *testing.T, heading string) [][2]string {
	t.Helper()
	b, err := os.ReadFile("../docs/ARCHITECTURE.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	require.True(t, ok, "docs/ARCHITECTURE.md has no %q", heading)
	var pairs [][2]string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "from" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		pairs = append(pairs, [2]string{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])})
	}
	require.NotEmpty(t, pairs, heading)
	return pairs
}

// checkMachine checks that the code's table is the doc's, then drives
// every transition between the states: the legal ones move, the others
// are reported and leave the state as it was.
func checkMachine[S comparable](t *testing.T, heading string, legal map[S][]S, states []S, name func(S) string) {
	var code [][2]string
	for from, tos := range legal {
		for _, to := range tos {
			code = append(code, [2]string{name(from), name(to)})
		}
	}
	assert.ElementsMatch(t, docTransitions(t, heading), code, "docs/ARCHITECTURE.md %q against the code", heading)
	for _, from := range states {
		for _, to := range states {
			t.Run(fmt.Sprintf("%s to %s", name(from), name(to)), func(t *testing.T) {
				var reported error
				m := fsm.New(heading, legal, func(err error) { reported = err })
				state := from
				if slices.Contains(legal[from], to) {
					assert.True(t, m.Move(&state, to))
					assert.Equal(t, to, state)
					assert.NoError(t, reported)
					return
				}
				assert.False(t, m.Move(&state, to))
				assert.Equal(t, from, state, "an illegal transition leaves the state as it was")
				assert.ErrorContains(t, reported, "no transition from", "what the scenarios' replay fails on")
			})
		}
	}
}

func TestTurnStates(t *testing.T) {
	states := []State{"", StateListening, StateUserSpeaking, StateThinking, StateSpeaking, StateInterrupted}
	checkMachine(t, "### Turn states", stateTransitions, states, func(s State) string {
		if s == "" {
			return "(start)"
		}
		return string(s)
	})
}

func TestBargeInStates(t *testing.T) {
	states := []bargeInState{bargeInNone, bargeInPending}
	checkMachine(t, "### Barge-in states", bargeInTransitions, states, bargeInState.String)
}

func TestListeningPhases(t *testing.T) {
	states := []listen.Phase{listen.Idle, listen.Speaking, listen.Paused, listen.Finalizing, listen.Committed}
	checkMachine(t, "### Listening phases", listen.Transitions, states, listen.Phase.String)
}

func TestReplyStates(t *testing.T) {
	states := []reply.State{"", reply.Speculative, reply.Current, reply.Dropped, reply.Cancelled, reply.Done}
	checkMachine(t, "### Reply states", reply.Transitions, states, func(s reply.State) string {
		if s == "" {
			return "(start)"
		}
		return string(s)
	})
}
