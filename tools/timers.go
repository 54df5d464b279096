package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/tts/normalize"
)

const (
	// maxTimers bounds the goroutines a confused model can start.
	maxTimers = 32
	// maxTimerSeconds is a day: anything longer is an alarm.
	maxTimerSeconds = 24 * 60 * 60
	// maxLabel keeps a label short enough to say in the announcement.
	maxLabel = 40
)

// Timers are the countdown timers and alarms the assistant has set, each a
// goroutine sleeping on the session's clock. When one goes off, its text
// to say comes on Fired.
type Timers struct {
	// Lang is the language of a timer without a label (or one whose label
	// has no letters) as it is set; nil is English. A label in Chinese or
	// English speaks for itself. Set it before the tools are first called.
	Lang func() normalize.Language

	clk clock.Clock
	now func() time.Time
	// fired is unbuffered: a text left in a buffer at Close would keep its
	// hold on the clock, with nobody to release it.
	fired  chan string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once

	mu     sync.Mutex
	closed bool
	lastID int
	active map[int]*timer
}

type timer struct {
	id    int
	kind  string // "timer" or "alarm"
	label string
	clock string        // an alarm's HH:MM
	at    time.Duration // when it goes off, on clk
	stop  context.CancelFunc
}

// NewTimers returns timers that wait on clk; now is the device's wall
// clock (its Location the device's zone), which alarms are set by.
func NewTimers(clk clock.Clock, now func() time.Time) *Timers {
	ctx, cancel := context.WithCancel(context.Background())
	return &Timers{
		clk:    clk,
		now:    now,
		fired:  make(chan string),
		ctx:    ctx,
		cancel: cancel,
		active: make(map[int]*timer),
	}
}

// Fired gives the text to say for each timer or alarm that goes off. Each
// comes with a hold on the clock that the receiver releases (clk.Release)
// once it has acted on it, so a replay does not run past the
// announcement. It is closed by Close.
func (t *Timers) Fired() <-chan string { return t.fired }

// Close cancels every timer and alarm and waits for their goroutines; a
// text not yet received is dropped and its hold released.
func (t *Timers) Close() {
	t.once.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.cancel()
		t.wg.Wait()
		close(t.fired)
	})
}

// Tools are set_timer, set_alarm, list_timers and cancel_timer.
func (t *Timers) Tools() []Tool {
	return []Tool{
		newTool("set_timer", "Start a countdown timer.",
			`{"type":"object","properties":{`+
				`"seconds":{"type":"integer","description":"How long, in seconds"},`+
				`"label":{"type":"string","description":"Optional short name, like tea"}},`+
				`"required":["seconds"]}`,
			t.setTimer),
		newTool("set_alarm", "Set an alarm for a time of day.",
			`{"type":"object","properties":{`+
				`"time":{"type":"string","description":"Time of day as HH:MM, 24-hour clock"},`+
				`"label":{"type":"string","description":"Optional short name, like wake up"}},`+
				`"required":["time"]}`,
			t.setAlarm),
		newTool("list_timers", "List the timers and alarms and the seconds left.",
			`{"type":"object","properties":{}}`,
			t.list),
		newTool("cancel_timer", "Cancel a timer or alarm by id or label, or all of them.",
			`{"type":"object","properties":{`+
				`"id":{"type":"integer","description":"The id from list_timers"},`+
				`"label":{"type":"string","description":"The timer's name"},`+
				`"all":{"type":"boolean","description":"true to cancel every timer and alarm"}}}`,
			t.cancelTimers),
	}
}

type setTimerArgs struct {
	Seconds *int   `json:"seconds"`
	Label   string `json:"label"`
}

func (t *Timers) setTimer(_ context.Context, a setTimerArgs) (any, error) {
	if a.Seconds == nil {
		return nil, errors.New("seconds is required")
	}
	if s := *a.Seconds; s < 1 || s > maxTimerSeconds {
		return nil, fmt.Errorf("seconds must be 1 to %d (a day), not %d; for a time of day use set_alarm", maxTimerSeconds, s)
	}
	label, err := timerLabel(a.Label)
	if err != nil {
		return nil, err
	}
	d := time.Duration(*a.Seconds) * time.Second
	tm, err := t.start(&timer{kind: "timer", label: label}, d, t.timerText(label))
	if err != nil {
		return nil, err
	}
	return struct {
		ID      int    `json:"id"`
		Label   string `json:"label,omitempty"`
		Seconds int    `json:"seconds"`
	}{tm.id, label, *a.Seconds}, nil
}

type setAlarmArgs struct {
	Time  string `json:"time"`
	Label string `json:"label"`
}

func (t *Timers) setAlarm(_ context.Context, a setAlarmArgs) (any, error) {
	if a.Time == "" {
		return nil, errors.New("time is required, as HH:MM")
	}
	hm, err := time.Parse("15:04", a.Time)
	if err != nil {
		return nil, fmt.Errorf("time must be HH:MM on the 24-hour clock, 00:00 to 23:59, not %q", a.Time)
	}
	label, err := timerLabel(a.Label)
	if err != nil {
		return nil, err
	}
	now := t.now()
	y, m, d := now.Date()
	at := time.Date(y, m, d, hm.Hour(), hm.Minute(), 0, 0, now.Location())
	day := "today"
	if !at.After(now) {
		// Dated by the calendar, not by adding 24 hours, so an alarm set
		// across a change to or from summer time still rings at that time.
		at, day = time.Date(y, m, d+1, hm.Hour(), hm.Minute(), 0, 0, now.Location()), "tomorrow"
	}
	hhmm := hm.Format("15:04")
	tm, err := t.start(&timer{kind: "alarm", label: label, clock: hhmm}, at.Sub(now), t.alarmText(label, hhmm))
	if err != nil {
		return nil, err
	}
	return struct {
		ID    int    `json:"id"`
		Label string `json:"label,omitempty"`
		Time  string `json:"time"`
		Day   string `json:"day"`
	}{tm.id, label, hhmm, day}, nil
}

// timerLabel is a label as the model gave it, trimmed and checked.
func timerLabel(s string) (string, error) {
	s = strings.TrimSpace(s)
	if n := utf8.RuneCountInString(s); n > maxLabel {
		return "", fmt.Errorf("label must be at most %d characters, not %d", maxLabel, n)
	}
	return s, nil
}

// start runs tm, to go off after d with text.
func (t *Timers) start(tm *timer, d time.Duration, text string) (*timer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, errors.New("timers are shut down")
	}
	if len(t.active) >= maxTimers {
		return nil, fmt.Errorf("%d timers and alarms are set, the most there can be; cancel one first", maxTimers)
	}
	t.lastID++
	tm.id = t.lastID
	tm.at = t.clk.Now() + d
	ctx, stop := context.WithCancel(t.ctx)
	tm.stop = stop
	t.active[tm.id] = tm
	t.wg.Add(1)
	// The goroutine starts with a hold, which its Sleep gives back while
	// it waits: a virtual clock cannot move between the call and the
	// timer's sleep, so the timer counts from the time it was set.
	t.clk.Hold()
	go t.run(ctx, tm, d, text)
	return tm, nil
}

func (t *Timers) run(ctx context.Context, tm *timer, d time.Duration, text string) {
	defer t.wg.Done()
	defer tm.stop()
	err := t.clk.Sleep(ctx, d)
	// Sleep returns with the hold taken back, woken or cancelled. Woken,
	// that hold is the one that goes with the text: the clock stays put
	// until the receiver has acted on it.
	t.mu.Lock()
	_, live := t.active[tm.id]
	delete(t.active, tm.id)
	t.mu.Unlock()
	if err != nil || !live {
		t.clk.Release()
		return
	}
	select {
	case t.fired <- text:
	case <-ctx.Done():
		t.clk.Release()
	}
}

// timerInfo is a timer as the model is told of it.
type timerInfo struct {
	ID    int    `json:"id"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
	Time  string `json:"time,omitempty"`
}

func (tm *timer) info() timerInfo { return timerInfo{tm.id, tm.kind, tm.label, tm.clock} }

type listed struct {
	timerInfo
	Seconds int64 `json:"remaining_seconds"`
}

// list is soonest first.
func (t *Timers) list(context.Context, struct{}) (any, error) {
	now := t.clk.Now()
	t.mu.Lock()
	out := make([]listed, 0, len(t.active))
	for _, tm := range t.active {
		// Rounded up: a timer with half a second left has not gone off.
		left := max(0, (tm.at-now+time.Second-1)/time.Second)
		out = append(out, listed{tm.info(), int64(left)})
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b listed) int {
		return cmp.Or(cmp.Compare(a.Seconds, b.Seconds), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

type cancelArgs struct {
	ID    *int    `json:"id"`
	Label *string `json:"label"`
	All   bool    `json:"all"`
}

func (t *Timers) cancelTimers(_ context.Context, a cancelArgs) (any, error) {
	if given(a.ID != nil, a.Label != nil, a.All) != 1 {
		return nil, errors.New("give exactly one of id, label or all")
	}
	var match func(*timer) bool
	switch {
	case a.All:
		match = func(*timer) bool { return true }
	case a.ID != nil:
		match = func(tm *timer) bool { return tm.id == *a.ID }
	default:
		label := strings.TrimSpace(*a.Label)
		if label == "" {
			return nil, errors.New("label is empty")
		}
		match = func(tm *timer) bool { return strings.EqualFold(tm.label, label) }
	}
	t.mu.Lock()
	cancelled := make([]timerInfo, 0, len(t.active))
	for id, tm := range t.active {
		if match(tm) {
			delete(t.active, id)
			tm.stop()
			cancelled = append(cancelled, tm.info())
		}
	}
	t.mu.Unlock()
	switch {
	case len(cancelled) > 0 || a.All:
	case a.ID != nil:
		return nil, fmt.Errorf("no timer or alarm has id %d", *a.ID)
	default:
		return nil, fmt.Errorf("no timer or alarm is labelled %q", *a.Label)
	}
	slices.SortFunc(cancelled, func(a, b timerInfo) int { return cmp.Compare(a.ID, b.ID) })
	return struct {
		Cancelled []timerInfo `json:"cancelled"`
	}{cancelled}, nil
}

// chinese says whether a timer with label speaks Chinese: as its label
// is written, else as the conversation goes.
func (t *Timers) chinese(label string) bool {
	if l := normalize.Detect(label); l != normalize.LangUnknown {
		return l == normalize.LangChinese
	}
	return t.Lang != nil && t.Lang() == normalize.LangChinese
}

func (t *Timers) timerText(label string) string {
	switch {
	case t.chinese(label) && label != "":
		return label + "的计时结束了。"
	case t.chinese(label):
		return "计时结束。"
	case label != "":
		return "Your " + withoutWord(label, "timer") + " timer is done."
	}
	return "Your timer is done."
}

func (t *Timers) alarmText(label, hhmm string) string {
	switch {
	case t.chinese(label) && label != "":
		return label + "的闹钟：" + hhmm + "。"
	case t.chinese(label):
		return "闹钟：" + hhmm + "。"
	case label != "":
		return "It's " + hhmm + ", your " + withoutWord(label, "alarm") + " alarm."
	}
	return "It's " + hhmm + ", your alarm."
}

// withoutWord drops a trailing word from label, which models often put
// in ("tea timer"), so the text does not say it twice.
func withoutWord(label, word string) string {
	if n := len(label) - len(word); n > 0 && label[n-1] == ' ' && strings.EqualFold(label[n:], word) {
		return strings.TrimSpace(label[:n])
	}
	return label
}
