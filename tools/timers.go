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

// Tools is the one tool timer, which sets, lists and cancels the timers
// and alarms: one tool and not four, since every tool's schema is in every
// prompt.
func (t *Timers) Tools() []Tool {
	return []Tool{
		newTool("timer", "Set, list or cancel timers and alarms.",
			`{"type":"object","properties":{`+
				`"action":{"type":"string","enum":["set","list","cancel"],"description":"What to do"},`+
				`"seconds":{"type":"integer","description":"A timer's length"},`+
				`"at":{"type":"string","description":"An alarm's time, HH:MM"},`+
				`"label":{"type":"string","description":"A short name"},`+
				`"id":{"type":"integer","description":"Which to cancel"}},`+
				`"required":["action"]}`,
			t.call),
	}
}

// timerArgs are the timer tool's arguments, of every action; a null is
// taken as left out.
type timerArgs struct {
	Action  string  `json:"action"`
	Seconds *int    `json:"seconds"`
	At      *string `json:"at"`
	Label   *string `json:"label"`
	ID      *int    `json:"id"`
}

// given names the arguments given besides the action.
func (a timerArgs) given() []string {
	var out []string
	for _, g := range []struct {
		name string
		set  bool
	}{{"seconds", a.Seconds != nil}, {"at", a.At != nil}, {"label", a.Label != nil}, {"id", a.ID != nil}} {
		if g.set {
			out = append(out, g.name)
		}
	}
	return out
}

func (t *Timers) call(_ context.Context, a timerArgs) (any, error) {
	action, err := parseAction(a.Action, "set", "list", "cancel")
	if err != nil {
		return nil, err
	}
	switch action {
	case "set":
		if err := extra("set", "seconds or at, and label", a.given(), "seconds", "at", "label"); err != nil {
			return nil, err
		}
		label, err := timerLabel(deref(a.Label))
		if err != nil {
			return nil, err
		}
		// An empty at is left out, as an alarm with no time was before.
		alarm := a.At != nil && *a.At != ""
		switch {
		case a.Seconds != nil && alarm:
			return nil, errors.New("set takes seconds for a timer or at (HH:MM) for an alarm, not both")
		case a.Seconds != nil:
			return t.setTimer(*a.Seconds, label)
		case alarm:
			return t.setAlarm(*a.At, label)
		}
		return nil, errors.New("set takes seconds for a timer or at (HH:MM) for an alarm, one of them")
	case "list":
		if err := extra("list", "no other argument", a.given()); err != nil {
			return nil, err
		}
		return t.list(), nil
	default:
		if err := extra("cancel", "id or label", a.given(), "id", "label"); err != nil {
			return nil, err
		}
		return t.cancelTimers(a.ID, a.Label)
	}
}

func (t *Timers) setTimer(seconds int, label string) (any, error) {
	if seconds < 1 || seconds > maxTimerSeconds {
		return nil, fmt.Errorf("seconds must be 1 to %d (a day), not %d; for a time of day use at", maxTimerSeconds, seconds)
	}
	d := time.Duration(seconds) * time.Second
	tm, err := t.start(&timer{kind: "timer", label: label}, d, t.timerText(label))
	if err != nil {
		return nil, err
	}
	return struct {
		ID      int    `json:"id"`
		Label   string `json:"label,omitempty"`
		Seconds int    `json:"seconds"`
	}{tm.id, label, seconds}, nil
}

func (t *Timers) setAlarm(when, label string) (any, error) {
	hm, err := time.Parse("15:04", when)
	if err != nil {
		return nil, fmt.Errorf("at must be HH:MM on the 24-hour clock, 00:00 to 23:59, not %q", when)
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
func (t *Timers) list() []listed {
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
	return out
}

// cancelTimers cancels the timer or alarm with id, or those labelled
// label, or with neither every one.
func (t *Timers) cancelTimers(id *int, label *string) (any, error) {
	var match func(*timer) bool
	all := false
	switch {
	case id != nil && label != nil:
		return nil, errors.New("cancel takes id or label, not both; with neither it cancels every timer and alarm")
	case id != nil:
		match = func(tm *timer) bool { return tm.id == *id }
	case label != nil:
		l := strings.TrimSpace(*label)
		if l == "" {
			// Not taken as left out: an empty label cancelling every
			// timer would be a slip the user could not undo.
			return nil, errors.New("label is empty; leave it out to cancel every timer and alarm")
		}
		match = func(tm *timer) bool { return strings.EqualFold(tm.label, l) }
	default:
		all = true
		match = func(*timer) bool { return true }
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
	case len(cancelled) > 0 || all:
	case id != nil:
		return nil, fmt.Errorf("no timer or alarm has id %d", *id)
	default:
		return nil, fmt.Errorf("no timer or alarm is labelled %q", *label)
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
