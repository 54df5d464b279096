package pipeline_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tools"
)

// The built-in tools in a whole session, with the scripted LLM calling
// them: tools.Registry as the session's toolbox, the timers on the
// session's clock and speaking through its notices.

// builtins runs s with a registry of the given tools, made on the
// session's clock; timers, if made, speak through the notices.
func builtins(s scenario, make func(c *pipeline.Config) []tools.Tool, timers **tools.Timers) scenario {
	tune := s.tune
	s.tune = func(c *pipeline.Config) {
		reg := &tools.Registry{}
		if timers != nil {
			*timers = tools.NewTimers(c.Clock, fixedNow)
			reg.Add((*timers).Tools()...)
			c.Notices = (*timers).Fired()
		}
		if make != nil {
			reg.Add(make(c)...)
		}
		c.Tools = reg
		if tune != nil {
			tune(c)
		}
	}
	return s
}

// fixedNow is the device's wall clock in these tests: 14:05 on a Monday.
func fixedNow() time.Time { return time.Date(2026, 12, 7, 14, 5, 0, 0, time.UTC) }

// A time question is answered from get_time, in either language.
func TestTimeQuestionAnsweredFromTheTool(t *testing.T) {
	for _, tc := range []struct{ lang, ask, answer, want string }{
		{"English", "what time is it", "It is {tool_response.time} on {tool_response.weekday}.", "It is 14:05 on Monday."},
		{"Chinese", "现在几点了", "现在是{tool_response.time}。", "现在是14:05。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			s := builtins(scenario{
				length:  6 * time.Second,
				user:    []standin.Utterance{{Start: 500 * ms, End: 1800 * ms, Text: tc.ask}},
				replies: []string{call("get_time", "{}"), tc.answer},
			}, func(*pipeline.Config) []tools.Tool { return []tools.Tool{tools.NewTime(fixedNow)} }, nil)
			o := s.run(t)
			shown, _ := said(o)
			assert.Equal(t, tc.want, shown)
			results := o.of(pipeline.EvToolResult)
			require.Len(t, results, 1)
			assert.Contains(t, results[0].Tool.Result, `"time":"14:05"`)
		})
	}
}

// utterance is a user's words at a time.
func utterance(from, to time.Duration, text string) standin.Utterance {
	return standin.Utterance{Start: from, End: to, Text: text}
}

// A timer is set, listed, and goes off in silence (said as a turn of the
// assistant's own); a second goes off while the user speaks, and is said
// after that turn's reply: never over the user, never lost.
func TestTimersSetListedAndFired(t *testing.T) {
	for _, tc := range []struct {
		lang                         string
		setTea, list, setEgg, story  string
		teaDone, eggDone, listAnswer string
		teaLabel, eggLabel           string
	}{
		{lang: "English", setTea: "set a tea timer for six seconds", list: "which timers are running",
			setEgg: "and an egg timer for two seconds", story: "tell me a very short story please",
			teaLabel: "tea", eggLabel: "egg", teaDone: "Your tea timer is done.", eggDone: "Your egg timer is done.",
			listAnswer: "Just the one."},
		{lang: "Chinese", setTea: "设一个六秒的泡茶计时", list: "现在有哪些计时",
			setEgg: "再设一个两秒的煮蛋计时", story: "给我讲一个很短的故事吧",
			teaLabel: "泡茶", eggLabel: "煮蛋", teaDone: "泡茶的计时结束了。", eggDone: "煮蛋的计时结束了。",
			listAnswer: "只有一个。"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			var timers *tools.Timers
			s := builtins(scenario{
				length: 24 * time.Second,
				user: []standin.Utterance{
					utterance(500*ms, 1800*ms, tc.setTea),
					utterance(3500*ms, 4800*ms, tc.list),
					utterance(11*time.Second, 12300*ms, tc.setEgg),
					// Speaking when the egg timer goes off, two seconds after
					// it was set at the commit of the turn before.
					utterance(14*time.Second, 16500*ms, tc.story),
				},
				replies: []string{
					call("timer", `{"action": "set", "seconds": 6, "label": "`+tc.teaLabel+`"}`), "OK.",
					call("timer", `{"action": "list"}`), tc.listAnswer,
					call("timer", `{"action": "set", "seconds": 2, "label": "`+tc.eggLabel+`"}`), "OK.",
					"Once upon a time there was a tiny kettle.",
				},
			}, nil, &timers)
			o := s.run(t)
			timers.Close()

			// Listed: the tea timer, with the seconds it had left.
			results := o.of(pipeline.EvToolResult)
			require.Len(t, results, 3)
			assert.Contains(t, results[1].Tool.Result, tc.teaLabel)
			assert.Contains(t, results[1].Tool.Result, `"remaining_seconds":3`)

			commits := o.of(pipeline.EvTurnCommit)
			require.Len(t, commits, 4)
			tea, egg := spokenAt(o, tc.teaDone), spokenAt(o, tc.eggDone)
			require.NotZero(t, tea, "the tea timer was said")
			require.NotZero(t, egg, "the egg timer was said")

			// The tea timer went off in silence, six seconds after it was
			// set at the first commit, and was said at once.
			assert.Equal(t, commits[0].At+6*time.Second, tea)

			// The egg timer went off during the story request, and was
			// said only after that turn's reply had played out.
			eggSet := commits[2].At
			assert.Greater(t, commits[3].At, eggSet+2*time.Second, "the user still spoke when it went off")
			var storyStop time.Duration
			for _, e := range o.of(pipeline.EvPlaybackStop) {
				if e.Turn == commits[3].Turn {
					storyStop = e.At
				}
			}
			require.NotZero(t, storyStop)
			assert.GreaterOrEqual(t, egg, storyStop, "said after the user's turn and its reply")
		})
	}
}

// spokenAt is when the reply saying text (an announcement: one piece)
// started playing, 0 if none did.
func spokenAt(o outcome, text string) time.Duration {
	turn := 0
	for _, e := range o.events {
		if e.Type == pipeline.EvLLMPiece && e.Text == text {
			turn = e.Turn
		}
		if e.Type == pipeline.EvPlaybackStart && turn != 0 && e.Turn == turn {
			return e.At
		}
	}
	return 0
}

// A note remembered in one session is recalled in the next, in either
// language: the notes live in their file, not in the session.
func TestNoteRememberedAcrossARestart(t *testing.T) {
	for _, tc := range []struct{ lang, remember, note, ask, answer, want string }{
		{"English", "remember that I parked on level three", "I parked on level 3", "where did I park",
			"You said: {tool_response}", "level 3"},
		{"Chinese", "记住我的车停在三层", "车停在三层", "我的车停在哪里", "你说过：{tool_response}", "车停在三层"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "notes.json")
			session := func(ask, toolCall, answer string) outcome {
				s := builtins(scenario{
					length:  6 * time.Second,
					user:    []standin.Utterance{utterance(500*ms, 1800*ms, ask)},
					replies: []string{toolCall, answer},
				}, func(*pipeline.Config) []tools.Tool {
					notes, err := tools.NewNotes(path)
					require.NoError(t, err)
					return notes.Tools()
				}, nil)
				return s.run(t)
			}
			first := session(tc.remember, call("note", `{"action": "remember", "text": "`+tc.note+`"}`), "OK.")
			require.Len(t, first.of(pipeline.EvToolResult), 1)

			second := session(tc.ask, call("note", `{"action": "recall"}`), tc.answer)
			shown, _ := said(second)
			assert.Contains(t, shown, tc.want)
		})
	}
}
