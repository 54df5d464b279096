package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/tts/normalize"
)

// timerHarness is Timers on a virtual clock, with the device's wall
// clock standing at now.
type timerHarness struct {
	*Timers
	clk   *clock.Virtual
	tools map[string]Tool
}

func newTimerHarness(t *testing.T, now time.Time) *timerHarness {
	t.Helper()
	clk := clock.NewVirtual()
	tm := NewTimers(clk, func() time.Time { return now })
	t.Cleanup(func() { closeTimers(t, tm) })
	return &timerHarness{Timers: tm, clk: clk, tools: byName(tm.Tools())}
}

// closeTimers closes tm, failing the test rather than hanging it if a
// timer's goroutine does not end.
func closeTimers(t *testing.T, tm *Timers) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		tm.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Error("Close did not return: a timer is stuck")
	}
}

func (h *timerHarness) call(t *testing.T, tool, args string) string {
	t.Helper()
	got := mustCall(t, h.tools[tool], args)
	// A timer set is asleep on the clock before the clock may move on.
	h.idle(t)
	return got
}

func (h *timerHarness) idle(t *testing.T) {
	t.Helper()
	require.NoError(t, h.clk.WaitIdle(context.Background(), 2*time.Second))
}

// nothingFired checks that no timer went off: one that did would hold the
// clock until its text was taken.
func (h *timerHarness) nothingFired(t *testing.T) {
	t.Helper()
	h.idle(t)
	select {
	case text := <-h.Fired():
		t.Fatalf("fired early: %q", text)
	default:
	}
}

// fired takes the text of a timer that went off, checks that it came with
// a hold on the clock, and releases it as the pipeline would.
func (h *timerHarness) fired(t *testing.T) string {
	t.Helper()
	var text string
	select {
	case text = <-h.Fired():
	case <-time.After(2 * time.Second):
		t.Fatal("no timer went off")
	}
	require.ErrorIs(t, h.clk.WaitIdle(context.Background(), 20*time.Millisecond), clock.ErrStalled,
		"the text comes with a hold on the clock")
	h.clk.Release()
	h.idle(t)
	return text
}

var monday = time.Date(2026, 12, 7, 14, 5, 0, 0, time.FixedZone("CET", 3600))

func TestTimerFires(t *testing.T) {
	zh := func() normalize.Language { return normalize.LangChinese }
	en := func() normalize.Language { return normalize.LangEnglish }
	tests := []struct {
		name string
		args string
		lang func() normalize.Language
		want string
	}{
		{"no label", `{"seconds":5}`, nil, "Your timer is done."},
		{"no label, English", `{"seconds":5}`, en, "Your timer is done."},
		{"a label", `{"seconds":300,"label":"tea"}`, nil, "Your tea timer is done."},
		{"a label with the word timer", `{"seconds":300,"label":" pasta Timer "}`, nil, "Your pasta timer is done."},
		{"no label, in a Chinese conversation", `{"seconds":60}`, zh, "计时结束。"},
		{"a Chinese label", `{"seconds":180,"label":"泡茶"}`, nil, "泡茶的计时结束了。"},
		{"an English label, in a Chinese conversation", `{"seconds":180,"label":"tea"}`, zh, "Your tea timer is done."},
		{"a label without letters goes by the conversation", `{"seconds":1,"label":"42"}`, zh, "42的计时结束了。"},
		{"a whole day", `{"seconds":86400}`, nil, "Your timer is done."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, monday)
			h.Lang = tc.lang
			var set struct{ Seconds int }
			require.NoError(t, json.Unmarshal([]byte(h.call(t, "set_timer", tc.args)), &set))
			d := time.Duration(set.Seconds) * time.Second

			h.clk.Advance(d - time.Millisecond)
			h.nothingFired(t)
			h.clk.Advance(time.Millisecond)
			assert.Equal(t, tc.want, h.fired(t))
			assert.JSONEq(t, `[]`, h.call(t, "list_timers", `{}`), "gone off, gone from the list")
			h.clk.Advance(48 * time.Hour)
			h.nothingFired(t)
		})
	}

	t.Run("result", func(t *testing.T) {
		h := newTimerHarness(t, monday)
		assert.JSONEq(t, `{"id":1,"label":"tea","seconds":300}`, h.call(t, "set_timer", `{"seconds":300,"label":"tea"}`))
		assert.JSONEq(t, `{"id":2,"seconds":10}`, h.call(t, "set_timer", `{"seconds":10}`))
	})
}

func TestAlarm(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	at := func(day, h, m, s int) time.Time { return time.Date(2026, 12, day, h, m, s, 0, cet) }
	tests := []struct {
		name    string
		now     time.Time
		args    string
		lang    normalize.Language
		wait    time.Duration
		want    string // result
		wantSay string
	}{
		{"later today", at(7, 6, 0, 0), `{"time":"07:30"}`, normalize.LangEnglish, 90 * time.Minute,
			`{"id":1,"time":"07:30","day":"today"}`, "It's 07:30, your alarm."},
		{"across midnight", at(7, 23, 50, 0), `{"time":"00:10"}`, normalize.LangEnglish, 20 * time.Minute,
			`{"id":1,"time":"00:10","day":"tomorrow"}`, "It's 00:10, your alarm."},
		{"the minute it is now is tomorrow", at(7, 7, 30, 0), `{"time":"07:30"}`, normalize.LangEnglish, 24 * time.Hour,
			`{"id":1,"time":"07:30","day":"tomorrow"}`, "It's 07:30, your alarm."},
		{"just passed", at(7, 7, 30, 20), `{"time":"7:30","label":"wake up"}`, normalize.LangEnglish, 24*time.Hour - 20*time.Second,
			`{"id":1,"time":"07:30","label":"wake up","day":"tomorrow"}`, "It's 07:30, your wake up alarm."},
		{"a label with the word alarm", at(7, 8, 0, 0), `{"time":"09:15","label":"gym alarm"}`, normalize.LangEnglish, 75 * time.Minute,
			`{"id":1,"time":"09:15","label":"gym alarm","day":"today"}`, "It's 09:15, your gym alarm."},
		{"Chinese", at(7, 22, 0, 0), `{"time":"07:30"}`, normalize.LangChinese, 9*time.Hour + 30*time.Minute,
			`{"id":1,"time":"07:30","day":"tomorrow"}`, "闹钟：07:30。"},
		{"a Chinese label", at(7, 6, 0, 0), `{"time":"06:45","label":"起床"}`, normalize.LangEnglish, 45 * time.Minute,
			`{"id":1,"time":"06:45","label":"起床","day":"today"}`, "起床的闹钟：06:45。"},
		{"end of the year", time.Date(2026, 12, 31, 23, 59, 30, 0, cet), `{"time":"00:00"}`, normalize.LangEnglish, 30 * time.Second,
			`{"id":1,"time":"00:00","day":"tomorrow"}`, "It's 00:00, your alarm."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, tc.now)
			h.Lang = func() normalize.Language { return tc.lang }
			assert.JSONEq(t, tc.want, h.call(t, "set_alarm", tc.args))
			var list []struct {
				Kind    string `json:"kind"`
				Seconds int64  `json:"remaining_seconds"`
			}
			require.NoError(t, json.Unmarshal([]byte(h.call(t, "list_timers", `{}`)), &list))
			require.Len(t, list, 1)
			assert.Equal(t, "alarm", list[0].Kind)
			assert.Equal(t, int64(tc.wait/time.Second), list[0].Seconds)

			h.clk.Advance(tc.wait - time.Second)
			h.nothingFired(t)
			h.clk.Advance(time.Second)
			assert.Equal(t, tc.wantSay, h.fired(t))
		})
	}

	// The next 07:30 is on the calendar, not 24 hours on: the night the
	// clocks go forward it is an hour nearer.
	t.Run("across the change to summer time", func(t *testing.T) {
		berlin, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Skip("no time zone database:", err)
		}
		h := newTimerHarness(t, time.Date(2026, 3, 28, 23, 0, 0, 0, berlin))
		h.call(t, "set_alarm", `{"time":"07:30"}`)
		h.clk.Advance(7*time.Hour + 30*time.Minute - time.Second)
		h.nothingFired(t)
		h.clk.Advance(time.Second)
		assert.Equal(t, "It's 07:30, your alarm.", h.fired(t))
	})
}

func TestListTimers(t *testing.T) {
	h := newTimerHarness(t, time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	assert.JSONEq(t, `[]`, h.call(t, "list_timers", ``), "none, and no arguments at all")
	h.call(t, "set_timer", `{"seconds":300,"label":"tea"}`)
	h.call(t, "set_alarm", `{"time":"08:00","label":"起床"}`)
	h.clk.Advance(10 * time.Second)
	h.idle(t)
	h.call(t, "set_timer", `{"seconds":60}`)
	h.clk.Advance(20*time.Second + 500*time.Millisecond)
	h.idle(t)
	assert.JSONEq(t, `[
		{"id":3,"kind":"timer","remaining_seconds":40},
		{"id":1,"kind":"timer","label":"tea","remaining_seconds":270},
		{"id":2,"kind":"alarm","label":"起床","time":"08:00","remaining_seconds":3570}
	]`, h.call(t, "list_timers", `{}`), "soonest first, a part second rounded up")
}

func TestCancelTimer(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
		fire    []string // what still goes off
	}{
		{"by id", `{"id":2}`, `{"cancelled":[{"id":2,"kind":"timer","label":"eggs"}]}`, "",
			[]string{"Your tea timer is done.", "泡茶的计时结束了。", "It's 08:00, your alarm."}},
		{"by label, any case", `{"label":" TEA "}`, `{"cancelled":[{"id":1,"kind":"timer","label":"tea"}]}`, "",
			[]string{"Your eggs timer is done.", "泡茶的计时结束了。", "It's 08:00, your alarm."}},
		{"by a Chinese label", `{"label":"泡茶"}`, `{"cancelled":[{"id":3,"kind":"timer","label":"泡茶"}]}`, "",
			[]string{"Your tea timer is done.", "Your eggs timer is done.", "It's 08:00, your alarm."}},
		{"an alarm by id", `{"id":4}`, `{"cancelled":[{"id":4,"kind":"alarm","time":"08:00"}]}`, "",
			[]string{"Your tea timer is done.", "Your eggs timer is done.", "泡茶的计时结束了。"}},
		{"all", `{"all":true}`, `{"cancelled":[
			{"id":1,"kind":"timer","label":"tea"},{"id":2,"kind":"timer","label":"eggs"},
			{"id":3,"kind":"timer","label":"泡茶"},{"id":4,"kind":"alarm","time":"08:00"}]}`, "", nil},
		{"an unknown id", `{"id":9}`, "", "cancel_timer: no timer or alarm has id 9", nil},
		{"an unknown label", `{"label":"bread"}`, "", `cancel_timer: no timer or alarm is labelled "bread"`, nil},
		{"an empty label", `{"label":""}`, "", "cancel_timer: label is empty", nil},
		{"nothing said", `{}`, "", "cancel_timer: give exactly one of id, label or all", nil},
		{"all false", `{"all":false}`, "", "cancel_timer: give exactly one of id, label or all", nil},
		{"two ways", `{"id":1,"label":"tea"}`, "", "cancel_timer: give exactly one of id, label or all", nil},
		{"an id as text", `{"id":"1"}`, "", "cancel_timer: id must be a whole number, not string", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
			h.call(t, "set_timer", `{"seconds":60,"label":"tea"}`)
			h.call(t, "set_timer", `{"seconds":120,"label":"eggs"}`)
			h.call(t, "set_timer", `{"seconds":180,"label":"泡茶"}`)
			h.call(t, "set_alarm", `{"time":"08:00"}`)
			got, err := h.tools["cancel_timer"].Call(context.Background(), json.RawMessage(tc.args))
			h.idle(t) // a cancelled timer's goroutine is done
			fire := tc.fire
			if tc.wantErr != "" {
				assert.EqualError(t, err, tc.wantErr)
				fire = []string{"Your tea timer is done.", "Your eggs timer is done.", "泡茶的计时结束了。", "It's 08:00, your alarm."}
			} else {
				require.NoError(t, err)
				assert.JSONEq(t, tc.want, got)
			}
			for _, want := range fire {
				next, ok := h.clk.NextWake()
				require.True(t, ok, "%q should be pending", want)
				h.clk.Advance(next - h.clk.Now())
				assert.Equal(t, want, h.fired(t))
			}
			_, ok := h.clk.NextWake()
			assert.False(t, ok, "nothing else is pending")
			h.clk.Advance(48 * time.Hour)
			h.nothingFired(t)
		})
	}

	t.Run("all, with none set", func(t *testing.T) {
		h := newTimerHarness(t, monday)
		assert.JSONEq(t, `{"cancelled":[]}`, h.call(t, "cancel_timer", `{"all":true}`))
	})
}

func TestTimerArgs(t *testing.T) {
	tests := []struct {
		tool, args, wantErr string
	}{
		{"set_timer", `{}`, "set_timer: seconds is required"},
		{"set_timer", `{"label":"tea"}`, "set_timer: seconds is required"},
		{"set_timer", `{"seconds":0}`, "set_timer: seconds must be 1 to 86400 (a day), not 0; for a time of day use set_alarm"},
		{"set_timer", `{"seconds":-5}`, "set_timer: seconds must be 1 to 86400 (a day), not -5"},
		{"set_timer", `{"seconds":86401}`, "set_timer: seconds must be 1 to 86400 (a day), not 86401"},
		{"set_timer", `{"seconds":"300"}`, "set_timer: seconds must be a whole number, not string"},
		{"set_timer", `{"seconds":1.5}`, "set_timer: seconds must be a whole number, not number 1.5"},
		{"set_timer", `{"minutes":5}`, `set_timer: unknown argument "minutes": this tool takes only seconds, label`},
		{"set_timer", `{"seconds":5,"label":"` + strings.Repeat("x", 41) + `"}`, "set_timer: label must be at most 40 characters, not 41"},
		{"set_alarm", `{}`, "set_alarm: time is required, as HH:MM"},
		{"set_alarm", `{"time":"25:00"}`, `set_alarm: time must be HH:MM on the 24-hour clock, 00:00 to 23:59, not "25:00"`},
		{"set_alarm", `{"time":"24:00"}`, `not "24:00"`},
		{"set_alarm", `{"time":"07:60"}`, `not "07:60"`},
		{"set_alarm", `{"time":"7:30pm"}`, `not "7:30pm"`},
		{"set_alarm", `{"time":"07:30:00"}`, `not "07:30:00"`},
		{"set_alarm", `{"time":"0730"}`, `not "0730"`},
		{"set_alarm", `{"time":730}`, "set_alarm: time must be a string, not number"},
		{"set_alarm", `{"time":"07:30","label":"` + strings.Repeat("闹", 41) + `"}`, "set_alarm: label must be at most 40 characters, not 41"},
		{"list_timers", `{"all":true}`, `list_timers: unknown argument "all": this tool takes no arguments`},
	}
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			h := newTimerHarness(t, monday)
			_, err := h.tools[tc.tool].Call(context.Background(), json.RawMessage(tc.args))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.JSONEq(t, `[]`, h.call(t, "list_timers", `{}`), "nothing set")
			_, pending := h.clk.NextWake()
			assert.False(t, pending)
		})
	}
}

func TestTimersBounded(t *testing.T) {
	h := newTimerHarness(t, monday)
	for i := range maxTimers {
		h.call(t, "set_timer", fmt.Sprintf(`{"seconds":%d}`, 60+i))
	}
	_, err := h.tools["set_alarm"].Call(context.Background(), json.RawMessage(`{"time":"07:00"}`))
	assert.EqualError(t, err, "set_alarm: 32 timers and alarms are set, the most there can be; cancel one first")
	_, err = h.tools["set_timer"].Call(context.Background(), json.RawMessage(`{"seconds":5}`))
	assert.ErrorContains(t, err, "32 timers and alarms are set")

	h.call(t, "cancel_timer", `{"id":1}`)
	assert.JSONEq(t, `{"id":33,"seconds":5}`, h.call(t, "set_timer", `{"seconds":5}`), "room again")

	h.clk.Advance(5 * time.Second)
	h.fired(t)
	h.call(t, "set_timer", `{"seconds":5}`) // one gone off makes room too
}

func TestTimersClose(t *testing.T) {
	tests := []struct {
		name    string
		advance time.Duration
	}{
		{"asleep", 0},
		{"gone off, its text not taken", 10 * time.Second},
		{"some gone off, some asleep", 90 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, monday)
			h.call(t, "set_timer", `{"seconds":10}`)
			h.call(t, "set_timer", `{"seconds":60}`)
			h.call(t, "set_timer", `{"seconds":600}`)
			h.call(t, "set_alarm", `{"time":"20:00"}`)
			h.clk.Advance(tc.advance)

			closeTimers(t, h.Timers)
			h.idle(t) // every hold given back
			_, open := <-h.Fired()
			assert.False(t, open, "Fired is closed")
			_, pending := h.clk.NextWake()
			assert.False(t, pending, "nobody asleep on the clock")
			_, err := h.tools["set_timer"].Call(context.Background(), json.RawMessage(`{"seconds":5}`))
			assert.EqualError(t, err, "set_timer: timers are shut down")
			h.Close() // again: nothing to do
		})
	}
}

// Calls from several replies at once, with timers going off.
func TestTimersConcurrent(t *testing.T) {
	clk := clock.NewVirtual()
	tm := NewTimers(clk, func() time.Time { return monday })
	tools := byName(tm.Tools())
	received := make(chan int)
	go func() {
		n := 0
		for range tm.Fired() {
			n++
			clk.Release()
		}
		received <- n
	}()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 4 {
				_, err := tools["set_timer"].Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"seconds":%d,"label":"t%d"}`, 1+j, i)))
				assert.NoError(t, err)
				_, err = tools["list_timers"].Call(context.Background(), nil)
				assert.NoError(t, err)
			}
			if i%2 == 1 {
				_, err := tools["cancel_timer"].Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"label":"t%d"}`, i)))
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
	clk.Advance(10 * time.Second)
	require.NoError(t, clk.WaitIdle(context.Background(), 2*time.Second))
	closeTimers(t, tm)
	n := <-received
	assert.Equal(t, 4*4, n, "every timer not cancelled went off and was taken")
}
