package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/wiring"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/running.md's barge-in table from the code")

const runningDoc = "../../docs/running.md"

// bargeInTable is docs/running.md's table of the barge-in settings: the
// defaults are pipeline.DefaultBargeIn's, and what each does is its flag's
// help.
func bargeInTable() string {
	s := wiring.DefaultStages()
	f := pflag.NewFlagSet("", pflag.ContinueOnError)
	s.AddFlags(f, wiring.ConversationFlags)
	d := pipeline.DefaultBargeIn()
	bc := d.Backchannels
	var b strings.Builder
	b.WriteString("| Flag | Key under `stages.barge_in` | Default | Effect |\n|---|---|---|---|\n")
	for _, r := range []struct{ flag, key, def string }{
		{"barge-in", "mode", fmt.Sprintf("`%v`", d.Mode)},
		{"barge-in-min-speech", "min_speech", fmt.Sprintf("`%v`", d.MinSpeech)},
		{"barge-in-min-words", "min_words", fmt.Sprintf("`%v`", d.MinWords)},
		{"barge-in-resume-after", "resume_after", fmt.Sprintf("`%v`", d.ResumeAfter)},
		{"backchannels", "backchannels", fmt.Sprintf("`%s`, `%s` … `%s` (%d in all)", bc[0], bc[1], bc[len(bc)-1], len(bc))},
	} {
		fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s |\n", r.flag, r.key, r.def, f.Lookup(r.flag).Usage)
	}
	return b.String()
}

// docs/running.md's barge-in table says what the code does; -update-docs
// writes it.
func TestRunningDocHasTheBargeInDefaults(t *testing.T) {
	data, err := os.ReadFile(runningDoc)
	require.NoError(t, err)
	doc, want := string(data), bargeInTable()
	header, _, _ := strings.Cut(want, "\n")
	start := strings.Index(doc, header+"\n")
	require.GreaterOrEqual(t, start, 0, "%s has no line %q", runningDoc, header)
	end := start
	for end < len(doc) && doc[end] == '|' {
		end += strings.IndexByte(doc[end:], '\n') + 1
	}
	if *updateDocs {
		require.NoError(t, os.WriteFile(runningDoc, []byte(doc[:start]+want+doc[end:]), 0o644))
		return
	}
	assert.Equal(t, want, doc[start:end], "go test ./cmd/voice-agent -run TestRunningDoc -update-docs writes it")
}
