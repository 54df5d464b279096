package turn_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/turn"
)

// A timeline is a list of events in audio time; "update" steps call Update
// and check what it asks for. A Predict answer is fed back only when the
// step says so (prob >= 0), as the pipeline runs the model synchronously.
type ev struct {
	at   time.Duration
	kind string // start, end, text, update
	text string
	prob float64 // for update: the model's answer if it asks to Predict; <0 none

	want       turn.Decision
	wantReason turn.Reason
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func start(at int) ev          { return ev{at: ms(at), kind: "start"} }
func end(at int) ev            { return ev{at: ms(at), kind: "end"} }
func text(at int, s string) ev { return ev{at: ms(at), kind: "text", text: s} }
func wait(at int) ev           { return ev{at: ms(at), kind: "update", prob: -1, want: turn.Wait} }
func predict(at int, p float64) ev {
	return ev{at: ms(at), kind: "update", prob: p, want: turn.Predict}
}
func commit(at int, r turn.Reason) ev {
	return ev{at: ms(at), kind: "update", prob: -1, want: turn.Commit, wantReason: r}
}

// cfg makes the thresholds distinct so a wrong one shows: commit without a
// model at 700 ms of silence, fallback at 3 s, transcript stable for 100 ms.
var cfg = turn.Config{
	CompleteThreshold:   0.5,
	StableFor:           ms(100),
	SilenceWithoutModel: ms(700),
	FallbackSilence:     ms(3000),
}

func decisionName(d turn.Decision) string {
	return [...]string{"Wait", "Predict", "Commit"}[d]
}

func TestEndpointer(t *testing.T) {
	tests := []struct {
		name     string
		hasModel bool
		events   []ev
	}{
		// Without a turn model.
		{
			name: "no model: nothing before the first speech end",
			events: []ev{
				wait(0), start(100), text(200, "hello"), wait(1000), wait(5000),
			},
		},
		{
			name: "no model: nothing before any speech at all",
			events: []ev{
				wait(0), wait(700), wait(3000), wait(10000),
			},
		},
		{
			name: "no model: commits after the silence with a stable transcript",
			events: []ev{
				start(0), text(500, "hello"), end(1000),
				wait(1000), wait(1500), wait(1699), commit(1700, turn.ReasonSilence), commit(1800, turn.ReasonSilence),
			},
		},
		{
			name: "no model: waits while the transcript still changes",
			events: []ev{
				start(0), text(500, "hel"), end(1000), text(1650, "hello"),
				wait(1700), wait(1749), commit(1750, turn.ReasonSilence),
			},
		},
		{
			name: "no model: the same transcript again is not a change",
			events: []ev{
				start(0), text(500, "hello"), end(1000), text(1650, "hello"),
				commit(1700, turn.ReasonSilence),
			},
		},
		{
			name: "no model: speech start cancels the pause",
			events: []ev{
				start(0), text(100, "hi"), end(1000), wait(1500), start(1600),
				wait(1700), wait(5000),
				end(6000), wait(6699), commit(6700, turn.ReasonSilence),
			},
		},
		{
			name: "no model: the silence counts from the last speech end",
			events: []ev{
				start(0), end(1000), start(1200), end(1400),
				wait(1700), wait(2099), commit(2100, turn.ReasonSilence),
			},
		},
		{
			name: "no model: a transcript that never settles falls back",
			events: []ev{
				start(0), end(1000),
				text(1650, "a"), wait(1700), text(2500, "ab"), wait(2550), text(3950, "abc"),
				commit(4000, turn.ReasonFallback),
			},
		},

		// With a turn model.
		{
			name:     "model: nothing before the first speech end",
			hasModel: true,
			events: []ev{
				wait(0), start(100), text(200, "hi"), wait(500), wait(4000),
			},
		},
		{
			name:     "model: asks at the pause and commits when complete",
			hasModel: true,
			events: []ev{
				start(0), text(500, "what time is it"), end(1000),
				predict(1000, 0.9), commit(1000, turn.ReasonComplete),
			},
		},
		{
			// pipecat-ai/smart-turn inference.py:69: prediction = 1 if
			// probability > 0.5 else 0; the threshold itself is incomplete.
			name:     "model: the threshold itself is incomplete",
			hasModel: true,
			events: []ev{
				start(0), text(500, "hi"), end(1000),
				predict(1010, 0.5), wait(1100), wait(3999),
				commit(4000, turn.ReasonFallback),
			},
		},
		{
			name:     "model: just above the threshold is complete",
			hasModel: true,
			events: []ev{
				start(0), text(500, "hi"), end(1000),
				predict(1010, math.Nextafter(0.5, 1)), commit(1010, turn.ReasonComplete),
			},
		},
		{
			name:     "model: asks once per pause, waits when incomplete, falls back",
			hasModel: true,
			events: []ev{
				start(0), text(500, "I want to"), end(1000),
				predict(1010, 0.49),
				wait(1100), wait(1700), wait(2500), wait(3999),
				commit(4000, turn.ReasonFallback),
			},
		},
		{
			name:     "model: a complete verdict waits for a stable transcript",
			hasModel: true,
			events: []ev{
				start(0), text(990, "what time"), end(1000),
				predict(1010, 0.9),
				wait(1010), wait(1089), commit(1090, turn.ReasonComplete),
			},
		},
		{
			name:     "model: a late transcript change delays the commit",
			hasModel: true,
			events: []ev{
				start(0), text(500, "what time"), end(1000),
				text(1005, "what time is it"),
				predict(1010, 0.9),
				wait(1050), commit(1105, turn.ReasonComplete),
			},
		},
		{
			name:     "model: speech start cancels the candidate and a new pause asks again",
			hasModel: true,
			events: []ev{
				start(0), text(500, "so"), end(1000),
				predict(1010, 0.2), wait(1200),
				start(1300), wait(1400), wait(4500), // no fallback while speaking
				text(1600, "so I was thinking"), end(5000),
				predict(5010, 0.8), commit(5010, turn.ReasonComplete),
			},
		},
		{
			name:     "model: speech start cancels even a complete verdict",
			hasModel: true,
			events: []ev{
				start(0), text(500, "hi"), end(1000),
				predict(1010, 0.9), start(1020),
				wait(1100), wait(9000),
			},
		},
		{
			name:     "model: the fallback counts from the latest speech end",
			hasModel: true,
			events: []ev{
				start(0), end(1000), predict(1000, 0.1),
				start(2000), end(2500), predict(2500, 0.1),
				wait(4000), wait(5499), commit(5500, turn.ReasonFallback),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := turn.NewEndpointer(cfg, tc.hasModel)
			for i, s := range tc.events {
				where := fmt.Sprintf("event %d (%s at %v)", i, s.kind, s.at)
				switch s.kind {
				case "start":
					e.SpeechStart()
				case "end":
					e.SpeechEnd(s.at)
				case "text":
					e.Transcript(s.text, s.at)
				case "update":
					d, r := e.Update(s.at)
					require.Equal(t, decisionName(s.want), decisionName(d), where)
					assert.Equal(t, s.wantReason, r, where)
					if d == turn.Predict {
						require.GreaterOrEqual(t, s.prob, 0.0, "%s: test gave no answer for Predict", where)
						e.Predicted(s.prob)
					}
				}
			}
		})
	}
}

// TestEndpointerPredictOncePerPause drives Update every 10 ms, as the
// pipeline does per frame, and counts how often the model is consulted.
func TestEndpointerPredictOncePerPause(t *testing.T) {
	tests := []struct {
		name       string
		prob       float64
		pauses     int
		wantCalls  int
		wantReason turn.Reason
		wantAt     time.Duration // after the last speech end
	}{
		{"complete at once", 0.9, 1, 1, turn.ReasonComplete, 0},
		{"incomplete until the fallback", 0.1, 1, 1, turn.ReasonFallback, ms(3000)},
		{"three pauses", 0.1, 3, 3, turn.ReasonFallback, ms(3000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := turn.NewEndpointer(cfg, true)
			calls := 0
			now := time.Duration(0)
			var lastEnd time.Duration
			for p := range tc.pauses {
				e.SpeechStart()
				e.Transcript(fmt.Sprintf("words %d", p), now)
				now += ms(500)
				e.SpeechEnd(now)
				lastEnd = now
				if p < tc.pauses-1 {
					// A short pause, then speech again.
					for range 20 {
						now += ms(10)
						if d, _ := e.Update(now); d == turn.Predict {
							calls++
							e.Predicted(tc.prob)
						}
					}
					continue
				}
				for {
					d, r := e.Update(now)
					if d == turn.Predict {
						calls++
						e.Predicted(tc.prob)
						continue
					}
					if d == turn.Commit {
						assert.Equal(t, tc.wantReason, r)
						assert.Equal(t, tc.wantAt, now-lastEnd)
						break
					}
					require.Less(t, now-lastEnd, ms(10000), "never committed")
					now += ms(10)
				}
			}
			assert.Equal(t, tc.wantCalls, calls)
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	c := turn.DefaultConfig()
	assert.Equal(t, 0.5, c.CompleteThreshold)
	assert.Less(t, c.StableFor, c.SilenceWithoutModel)
	assert.Less(t, c.SilenceWithoutModel, c.FallbackSilence)
}

func TestModelIsAskedOnlyAfterTheCandidateSilence(t *testing.T) {
	cfg := turn.DefaultConfig()
	e := turn.NewEndpointer(cfg, true)
	e.SpeechStart()
	e.SpeechEnd(time.Second)
	for _, at := range []time.Duration{time.Second, 1100 * time.Millisecond, 1199 * time.Millisecond} {
		d, _ := e.Update(at)
		assert.Equal(t, turn.Wait, d, "at %v: a pause between words", at)
	}
	d, _ := e.Update(time.Second + cfg.CandidateSilence)
	assert.Equal(t, turn.Predict, d)
}
