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
	clk  *clock.Virtual
	tool Tool // timer
}

func newTimerHarness(t *testing.T, now time.Time) *timerHarness {
	t.Helper()
	clk := clock.NewVirtual()
	tm := NewTimers(clk, func() time.Time { return now })
	t.Cleanup(func() { closeTimers(t, tm) })
	tools := tm.Tools()
	require.Len(t, tools, 1)
	return &timerHarness{Timers: tm, clk: clk, tool: tools[0]}
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

// call calls the timer tool with args, which must succeed.
func (h *timerHarness) call(t *testing.T, args string) string {
	t.Helper()
	got := mustCall(t, h.tool, args)
	// A timer set is asleep on the clock before the clock may move on.
	h.idle(t)
	return got
}

// try calls the timer tool with args.
func (h *timerHarness) try(args string) (string, error) {
	return h.tool.Call(context.Background(), json.RawMessage(args))
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

// The timer tool is what the model reads in every prompt, exactly.
func TestTimerSpec(t *testing.T) {
	h := newTimerHarness(t, monday)
	spec := h.tool.Spec()
	assert.Equal(t, "timer", spec.Name)
	assert.Equal(t, "Set, list or cancel timers and alarms.", spec.Description)
	assert.Equal(t, `{"type":"object","properties":{`+
		`"action":{"type":"string","enum":["set","list","cancel"],"description":"What to do"},`+
		`"seconds":{"type":"integer","description":"A timer's length"},`+
		`"at":{"type":"string","description":"An alarm's time, HH:MM"},`+
		`"label":{"type":"string","description":"A short name"},`+
		`"id":{"type":"integer","description":"Which to cancel"}},`+
		`"required":["action"]}`, string(spec.Parameters))
	assert.True(t, json.Valid(spec.Parameters))
}

func TestTimerFires(t *testing.T) {
	zh := func() normalize.Language { return normalize.LangChinese }
	en := func() normalize.Language { return normalize.LangEnglish }
	tests := []struct {
		name string
		args string
		lang func() normalize.Language
		want string
	}{
		{"no label", `{"action":"set","seconds":5}`, nil, "Your timer is done."},
		{"no label, English", `{"action":"set","seconds":5}`, en, "Your timer is done."},
		{"a label", `{"action":"set","seconds":300,"label":"tea"}`, nil, "Your tea timer is done."},
		{"a label with the word timer", `{"action":"set","seconds":300,"label":" pasta Timer "}`, nil, "Your pasta timer is done."},
		{"no label, in a Chinese conversation", `{"action":"set","seconds":60}`, zh, "计时结束。"},
		{"a Chinese label", `{"action":"set","seconds":180,"label":"泡茶"}`, nil, "泡茶的计时结束了。"},
		{"an English label, in a Chinese conversation", `{"action":"set","seconds":180,"label":"tea"}`, zh, "Your tea timer is done."},
		{"a label without letters goes by the conversation", `{"action":"set","seconds":1,"label":"42"}`, zh, "42的计时结束了。"},
		{"a whole day", `{"action":"set","seconds":86400}`, nil, "Your timer is done."},
		{"an empty at is left out", `{"action":"set","seconds":5,"at":""}`, nil, "Your timer is done."},
		{"the action in another case", `{"action":" Set ","seconds":5}`, nil, "Your timer is done."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, monday)
			h.Lang = tc.lang
			var set struct{ Seconds int }
			require.NoError(t, json.Unmarshal([]byte(h.call(t, tc.args)), &set))
			d := time.Duration(set.Seconds) * time.Second

			h.clk.Advance(d - time.Millisecond)
			h.nothingFired(t)
			h.clk.Advance(time.Millisecond)
			assert.Equal(t, tc.want, h.fired(t))
			assert.JSONEq(t, `[]`, h.call(t, `{"action":"list"}`), "gone off, gone from the list")
			h.clk.Advance(48 * time.Hour)
			h.nothingFired(t)
		})
	}

	t.Run("result", func(t *testing.T) {
		h := newTimerHarness(t, monday)
		assert.JSONEq(t, `{"id":1,"label":"tea","seconds":300}`, h.call(t, `{"action":"set","seconds":300,"label":"tea"}`))
		assert.JSONEq(t, `{"id":2,"seconds":10}`, h.call(t, `{"action":"set","seconds":10}`))
		assert.JSONEq(t, `{"id":3,"seconds":10}`, h.call(t, `{"action":"set","seconds":10,"label":null,"at":null}`), "a null is left out")
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
		{"later today", at(7, 6, 0, 0), `{"action":"set","at":"07:30"}`, normalize.LangEnglish, 90 * time.Minute,
			`{"id":1,"time":"07:30","day":"today"}`, "It's 07:30, your alarm."},
		{"across midnight", at(7, 23, 50, 0), `{"action":"set","at":"00:10"}`, normalize.LangEnglish, 20 * time.Minute,
			`{"id":1,"time":"00:10","day":"tomorrow"}`, "It's 00:10, your alarm."},
		{"the minute it is now is tomorrow", at(7, 7, 30, 0), `{"action":"set","at":"07:30"}`, normalize.LangEnglish, 24 * time.Hour,
			`{"id":1,"time":"07:30","day":"tomorrow"}`, "It's 07:30, your alarm."},
		{"just passed", at(7, 7, 30, 20), `{"action":"set","at":"7:30","label":"wake up"}`, normalize.LangEnglish, 24*time.Hour - 20*time.Second,
			`{"id":1,"time":"07:30","label":"wake up","day":"tomorrow"}`, "It's 07:30, your wake up alarm."},
		{"a label with the word alarm", at(7, 8, 0, 0), `{"action":"set","at":"09:15","label":"gym alarm"}`, normalize.LangEnglish, 75 * time.Minute,
			`{"id":1,"time":"09:15","label":"gym alarm","day":"today"}`, "It's 09:15, your gym alarm."},
		{"Chinese", at(7, 22, 0, 0), `{"action":"set","at":"07:30"}`, normalize.LangChinese, 9*time.Hour + 30*time.Minute,
			`{"id":1,"time":"07:30","day":"tomorrow"}`, "闹钟：07:30。"},
		{"a Chinese label", at(7, 6, 0, 0), `{"action":"set","at":"06:45","label":"起床"}`, normalize.LangEnglish, 45 * time.Minute,
			`{"id":1,"time":"06:45","label":"起床","day":"today"}`, "起床的闹钟：06:45。"},
		{"end of the year", time.Date(2026, 12, 31, 23, 59, 30, 0, cet), `{"action":"set","at":"00:00"}`, normalize.LangEnglish, 30 * time.Second,
			`{"id":1,"time":"00:00","day":"tomorrow"}`, "It's 00:00, your alarm."},
		{"a null seconds is left out", at(7, 6, 0, 0), `{"action":"set","at":"07:30","seconds":null}`, normalize.LangEnglish, 90 * time.Minute,
			`{"id":1,"time":"07:30","day":"today"}`, "It's 07:30, your alarm."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, tc.now)
			h.Lang = func() normalize.Language { return tc.lang }
			assert.JSONEq(t, tc.want, h.call(t, tc.args))
			var list []struct {
				Kind    string `json:"kind"`
				Seconds int64  `json:"remaining_seconds"`
			}
			require.NoError(t, json.Unmarshal([]byte(h.call(t, `{"action":"list"}`)), &list))
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
		h.call(t, `{"action":"set","at":"07:30"}`)
		h.clk.Advance(7*time.Hour + 30*time.Minute - time.Second)
		h.nothingFired(t)
		h.clk.Advance(time.Second)
		assert.Equal(t, "It's 07:30, your alarm.", h.fired(t))
	})
}

func TestListTimers(t *testing.T) {
	h := newTimerHarness(t, time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
	assert.JSONEq(t, `[]`, h.call(t, `{"action":"list"}`), "none")
	h.call(t, `{"action":"set","seconds":300,"label":"tea"}`)
	h.call(t, `{"action":"set","at":"08:00","label":"起床"}`)
	h.clk.Advance(10 * time.Second)
	h.idle(t)
	h.call(t, `{"action":"set","seconds":60}`)
	h.clk.Advance(20*time.Second + 500*time.Millisecond)
	h.idle(t)
	assert.JSONEq(t, `[
		{"id":3,"kind":"timer","remaining_seconds":40},
		{"id":1,"kind":"timer","label":"tea","remaining_seconds":270},
		{"id":2,"kind":"alarm","label":"起床","time":"08:00","remaining_seconds":3570}
	]`, h.call(t, `{"action":"list"}`), "soonest first, a part second rounded up")
	assert.Equal(t, h.call(t, `{"action":"list"}`), h.call(t, `{"action":"list","id":null}`), "a null is left out")
}

func TestCancelTimer(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		want    string
		wantErr string
		fire    []string // what still goes off
	}{
		{"by id", `{"action":"cancel","id":2}`, `{"cancelled":[{"id":2,"kind":"timer","label":"eggs"}]}`, "",
			[]string{"Your tea timer is done.", "泡茶的计时结束了。", "It's 08:00, your alarm."}},
		{"by label, any case", `{"action":"cancel","label":" TEA "}`, `{"cancelled":[{"id":1,"kind":"timer","label":"tea"}]}`, "",
			[]string{"Your eggs timer is done.", "泡茶的计时结束了。", "It's 08:00, your alarm."}},
		{"by a Chinese label", `{"action":"cancel","label":"泡茶"}`, `{"cancelled":[{"id":3,"kind":"timer","label":"泡茶"}]}`, "",
			[]string{"Your tea timer is done.", "Your eggs timer is done.", "It's 08:00, your alarm."}},
		{"an alarm by id", `{"action":"cancel","id":4}`, `{"cancelled":[{"id":4,"kind":"alarm","time":"08:00"}]}`, "",
			[]string{"Your tea timer is done.", "Your eggs timer is done.", "泡茶的计时结束了。"}},
		{"all, with neither id nor label", `{"action":"cancel"}`, `{"cancelled":[
			{"id":1,"kind":"timer","label":"tea"},{"id":2,"kind":"timer","label":"eggs"},
			{"id":3,"kind":"timer","label":"泡茶"},{"id":4,"kind":"alarm","time":"08:00"}]}`, "", nil},
		{"an unknown id", `{"action":"cancel","id":9}`, "", "timer: no timer or alarm has id 9", nil},
		{"an unknown label", `{"action":"cancel","label":"bread"}`, "", `timer: no timer or alarm is labelled "bread"`, nil},
		{"an empty label", `{"action":"cancel","label":""}`, "", "timer: label is empty; leave it out to cancel every timer and alarm", nil},
		{"a blank label", `{"action":"cancel","label":"  "}`, "", "timer: label is empty; leave it out to cancel every timer and alarm", nil},
		{"id and label", `{"action":"cancel","id":1,"label":"tea"}`, "", "timer: cancel takes id or label, not both; with neither it cancels every timer and alarm", nil},
		{"the old all", `{"action":"cancel","all":true}`, "", `timer: unknown argument "all": this tool takes only action, seconds, at, label, id`, nil},
		{"seconds", `{"action":"cancel","seconds":60}`, "", "timer: cancel takes id or label, not seconds", nil},
		{"at and id", `{"action":"cancel","id":4,"at":"08:00"}`, "", "timer: cancel takes id or label, not at", nil},
		{"an id as text", `{"action":"cancel","id":"1"}`, "", "timer: id must be a whole number, not string", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, time.Date(2026, 12, 7, 7, 0, 0, 0, time.UTC))
			h.call(t, `{"action":"set","seconds":60,"label":"tea"}`)
			h.call(t, `{"action":"set","seconds":120,"label":"eggs"}`)
			h.call(t, `{"action":"set","seconds":180,"label":"泡茶"}`)
			h.call(t, `{"action":"set","at":"08:00"}`)
			got, err := h.try(tc.args)
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
		assert.JSONEq(t, `{"cancelled":[]}`, h.call(t, `{"action":"cancel"}`))
	})
}

func TestTimerArgs(t *testing.T) {
	const setOne = "timer: set takes seconds for a timer or at (HH:MM) for an alarm, one of them"
	tests := []struct {
		name, args, wantErr string
	}{
		{"no action", `{}`, "timer: action is required: set, list or cancel"},
		{"no arguments at all", ``, "timer: action is required: set, list or cancel"},
		{"an empty action", `{"action":" ","seconds":5}`, "timer: action is required: set, list or cancel"},
		{"no action, only seconds", `{"seconds":5}`, "timer: action is required: set, list or cancel"},
		{"an unknown action", `{"action":"start","seconds":5}`, `timer: action must be set, list or cancel, not "start"`},
		{"an old tool's name", `{"action":"set_timer","seconds":5}`, `timer: action must be set, list or cancel, not "set_timer"`},
		{"an action as a number", `{"action":1}`, "timer: action must be a string, not number"},
		{"an unknown argument", `{"action":"set","minutes":5}`, `timer: unknown argument "minutes": this tool takes only action, seconds, at, label, id`},
		{"the old time", `{"action":"set","time":"07:30"}`, `timer: unknown argument "time": this tool takes only action, seconds, at, label, id`},

		{"set with neither", `{"action":"set"}`, setOne},
		{"set with a label only", `{"action":"set","label":"tea"}`, setOne},
		{"set with an empty at", `{"action":"set","at":""}`, setOne},
		{"set with both", `{"action":"set","seconds":300,"at":"07:30"}`, "timer: set takes seconds for a timer or at (HH:MM) for an alarm, not both"},
		{"set with an id", `{"action":"set","seconds":300,"id":1}`, "timer: set takes seconds or at, and label, not id"},

		{"seconds 0", `{"action":"set","seconds":0}`, "timer: seconds must be 1 to 86400 (a day), not 0; for a time of day use at"},
		{"seconds below 0", `{"action":"set","seconds":-5}`, "timer: seconds must be 1 to 86400 (a day), not -5"},
		{"seconds over a day", `{"action":"set","seconds":86401}`, "timer: seconds must be 1 to 86400 (a day), not 86401"},
		{"seconds as text", `{"action":"set","seconds":"300"}`, "timer: seconds must be a whole number, not string"},
		{"seconds a fraction", `{"action":"set","seconds":1.5}`, "timer: seconds must be a whole number, not number 1.5"},
		{"a timer's label too long", `{"action":"set","seconds":5,"label":"` + strings.Repeat("x", 41) + `"}`, "timer: label must be at most 40 characters, not 41"},

		{"at 25:00", `{"action":"set","at":"25:00"}`, `timer: at must be HH:MM on the 24-hour clock, 00:00 to 23:59, not "25:00"`},
		{"at 24:00", `{"action":"set","at":"24:00"}`, `not "24:00"`},
		{"at 07:60", `{"action":"set","at":"07:60"}`, `not "07:60"`},
		{"at 7:30pm", `{"action":"set","at":"7:30pm"}`, `not "7:30pm"`},
		{"at with seconds", `{"action":"set","at":"07:30:00"}`, `not "07:30:00"`},
		{"at without a colon", `{"action":"set","at":"0730"}`, `not "0730"`},
		{"at as a number", `{"action":"set","at":730}`, "timer: at must be a string, not number"},
		{"an alarm's label too long", `{"action":"set","at":"07:30","label":"` + strings.Repeat("闹", 41) + `"}`, "timer: label must be at most 40 characters, not 41"},

		{"list with a label", `{"action":"list","label":"tea"}`, "timer: list takes no other argument, not label"},
		{"list with seconds and id", `{"action":"list","seconds":5,"id":1}`, "timer: list takes no other argument, not seconds, id"},
		{"list with the old all", `{"action":"list","all":true}`, `timer: unknown argument "all"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTimerHarness(t, monday)
			_, err := h.try(tc.args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.JSONEq(t, `[]`, h.call(t, `{"action":"list"}`), "nothing set")
			_, pending := h.clk.NextWake()
			assert.False(t, pending)
		})
	}
}

func TestTimersBounded(t *testing.T) {
	h := newTimerHarness(t, monday)
	for i := range maxTimers {
		h.call(t, fmt.Sprintf(`{"action":"set","seconds":%d}`, 60+i))
	}
	_, err := h.try(`{"action":"set","at":"07:00"}`)
	assert.EqualError(t, err, "timer: 32 timers and alarms are set, the most there can be; cancel one first")
	_, err = h.try(`{"action":"set","seconds":5}`)
	assert.ErrorContains(t, err, "32 timers and alarms are set")

	h.call(t, `{"action":"cancel","id":1}`)
	assert.JSONEq(t, `{"id":33,"seconds":5}`, h.call(t, `{"action":"set","seconds":5}`), "room again")

	h.clk.Advance(5 * time.Second)
	h.fired(t)
	h.call(t, `{"action":"set","seconds":5}`) // one gone off makes room too
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
			h.call(t, `{"action":"set","seconds":10}`)
			h.call(t, `{"action":"set","seconds":60}`)
			h.call(t, `{"action":"set","seconds":600}`)
			h.call(t, `{"action":"set","at":"20:00"}`)
			h.clk.Advance(tc.advance)

			closeTimers(t, h.Timers)
			h.idle(t) // every hold given back
			_, open := <-h.Fired()
			assert.False(t, open, "Fired is closed")
			_, pending := h.clk.NextWake()
			assert.False(t, pending, "nobody asleep on the clock")
			_, err := h.try(`{"action":"set","seconds":5}`)
			assert.EqualError(t, err, "timer: timers are shut down")
			h.Close() // again: nothing to do
		})
	}
}

// Calls from several replies at once, with timers going off.
func TestTimersConcurrent(t *testing.T) {
	clk := clock.NewVirtual()
	tm := NewTimers(clk, func() time.Time { return monday })
	tool := tm.Tools()[0]
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
				_, err := tool.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"action":"set","seconds":%d,"label":"t%d"}`, 1+j, i)))
				assert.NoError(t, err)
				_, err = tool.Call(context.Background(), json.RawMessage(`{"action":"list"}`))
				assert.NoError(t, err)
			}
			if i%2 == 1 {
				_, err := tool.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"action":"cancel","label":"t%d"}`, i)))
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
