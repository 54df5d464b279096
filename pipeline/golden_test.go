package pipeline_test

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

var updateEvents = flag.Bool("update-events", false, "rewrite testdata/event_streams.json from this code")

// The event streams of a set of sessions, with compute free, are exactly
// those recorded in testdata/event_streams.json: a refactoring of the
// turn's states changes none of them. A change meant to alter behaviour
// rewrites the file (go test ./pipeline -run TestEventStreams
// -update-events) and says why in its commit.
func TestEventStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 400 sessions and a 67-minute one")
	}
	got := map[string]string{}
	record := func(name string, events []pipeline.Event) {
		// Generation and synthesis run on goroutines of their own, so
		// events of different kinds at one audio time come in either
		// order; each kind's own order is kept.
		events = slices.Clone(events)
		slices.SortStableFunc(events, func(a, b pipeline.Event) int {
			return cmp.Or(cmp.Compare(a.At, b.At), strings.Compare(string(a.Type), string(b.Type)))
		})
		h := sha256.New()
		enc := json.NewEncoder(h)
		for _, e := range events {
			if e.Stats != nil {
				// The engine's own timings are wall time.
				st := *e.Stats
				st.Prefill, st.Decode = 0, 0
				e.Stats = &st
			}
			require.NoError(t, enc.Encode(e))
		}
		got[name] = fmt.Sprintf("%d events %s", len(events), hex.EncodeToString(h.Sum(nil)[:12]))
	}
	for _, speculate := range []bool{true, false} {
		record(fmt.Sprintf("two turns, speculate=%v", speculate), twoTurns(speculate).run(t).events)
	}
	s, src := thousandBargeIns(1000)
	clk := clock.NewVirtual()
	cfg, _ := s.config(clk)
	var thousand []pipeline.Event
	_, err := replay(t, clk, cfg, audio.VirtualConfig{Source: src, NoRecording: true, Stall: 10 * time.Second},
		func(e pipeline.Event) { thousand = append(thousand, e) })
	require.NoError(t, err)
	record("a thousand barge-ins", thousand)
	for _, sw := range overReplySweep() {
		record(sw.name, sw.s.run(t).events)
	}

	path := filepath.Join("testdata", "event_streams.json")
	if *updateEvents {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll("testdata", 0o777))
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o666))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var want map[string]string
	require.NoError(t, json.Unmarshal(b, &want))
	require.Len(t, got, len(want))
	for name, w := range want {
		assert.Equal(t, w, got[name], name)
	}
}

type sweepCase struct {
	name string
	s    scenario
}

// overReplySweep is speech over a reply in every barge-in mode, of every
// kind (words, a cough, a backchannel), starting every 60 ms from before
// the reply to after its end: 405 sessions.
func overReplySweep() []sweepCase {
	var out []sweepCase
	kinds := []struct {
		name   string
		length time.Duration
		text   string
	}{
		{"words", 400 * time.Millisecond, "stop there"},
		{"cough", 200 * time.Millisecond, ""},
		{"backchannel", 400 * time.Millisecond, "yeah"},
	}
	for _, mode := range []pipeline.InterruptMode{pipeline.InterruptPause, pipeline.InterruptDuck, pipeline.InterruptOff} {
		for _, k := range kinds {
			for i := range 45 {
				start := 300*time.Millisecond + time.Duration(i)*60*time.Millisecond
				out = append(out, sweepCase{
					name: fmt.Sprintf("%s %s at %v", mode, k.name, start),
					s: scenario{
						length: 5 * time.Second,
						user: []standin.Utterance{
							{Start: 100 * time.Millisecond, End: 500 * time.Millisecond, Text: "question"},
							{Start: start, End: start + k.length, Text: k.text},
						},
						replies:         []string{"Sure, here is my answer.", "Ok."},
						interrupt:       mode,
						tokensPerSecond: -1,
						tune: func(c *pipeline.Config) {
							c.Endpoint.SilenceWithoutModel = 300 * time.Millisecond
							c.BargeIn.ResumeAfter = 300 * time.Millisecond
						},
					},
				})
			}
		}
	}
	return out
}
