package pipeline_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/vad"
)

// command is a host command at an audio time, with room for its answer.
func command(at time.Duration, op pipeline.Op) (timed[pipeline.Command], chan error) {
	done := make(chan error, 1)
	return timed[pipeline.Command]{at: at, v: pipeline.Command{Op: op, Done: done}}, done
}

// The host's cancel cuts the reply as the stop key does, and is answered;
// with no reply going on it does nothing, and is answered too.
func TestHostCancelsTheReply(t *testing.T) {
	early, earlyDone := command(200*time.Millisecond, pipeline.OpCancel)
	cancel, cancelDone := command(2600*time.Millisecond, pipeline.OpCancel)
	s := scenario{
		length:   6 * time.Second,
		user:     []standin.Utterance{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a long story"}},
		replies:  []string{"Once upon a time there was a small robot who lived in a lighthouse by the sea."},
		commands: []timed[pipeline.Command]{early, cancel},
	}
	o := s.run(t)
	require.NoError(t, <-earlyDone)
	require.NoError(t, <-cancelDone)
	cuts := o.of(pipeline.EvBargeIn)
	require.Len(t, cuts, 1)
	assert.Equal(t, pipeline.ReasonStopKey, cuts[0].Reason)
	assert.Equal(t, 2600*time.Millisecond, cuts[0].At)
	var states []event.ReplyState
	for _, e := range o.of(pipeline.EvReplyState) {
		states = append(states, e.Reply)
	}
	assert.Contains(t, states, event.ReplyCancelled)
}

// Muted by the host, the assistant hears nothing: speech then opens no
// turn; unmuted, it hears the next. In English and Chinese.
func TestHostMutesTheMicrophone(t *testing.T) {
	for _, words := range [][2]string{{"are you listening", "now you can hear me"}, {"你在听吗", "现在能听到我吗"}} {
		mute, muteDone := command(200*time.Millisecond, pipeline.OpMute)
		unmute, unmuteDone := command(2*time.Second, pipeline.OpUnmute)
		s := scenario{
			length: 7 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: words[0]},
				{Start: 3 * time.Second, End: 4 * time.Second, Text: words[1]},
			},
			replies:  []string{"Yes."},
			commands: []timed[pipeline.Command]{mute, unmute},
		}
		o := s.run(t)
		require.NoError(t, <-muteDone)
		require.NoError(t, <-unmuteDone)
		assert.Equal(t, []string{words[1]}, texts(o.of(pipeline.EvTurnCommit)), "only what was said unmuted")
		for _, e := range o.of(pipeline.EvSpeechStart) {
			assert.GreaterOrEqual(t, e.At, 2*time.Second, "no speech heard while muted")
		}
	}
}

// A command the session cannot act on is answered with why.
func TestHostCommandErrors(t *testing.T) {
	bogus, bogusDone := command(100*time.Millisecond, "tlak")
	s := scenario{length: time.Second, commands: []timed[pipeline.Command]{bogus}}
	s.run(t)
	assert.ErrorContains(t, <-bogusDone, `"tlak" is not a command`)
}

// countingVAD counts the frames the VAD is given, and when the first
// was.
type countingVAD struct {
	pipeline.VAD
	frames int
	first  time.Duration
}

func (v *countingVAD) Process(f audio.Frame) (vad.Result, error) {
	if v.frames == 0 {
		v.first = f.Start()
	}
	v.frames++
	return v.VAD.Process(f)
}

// With push-to-talk, only what is said between the talk button's start
// and stop is a turn: speech before the press is not answered, the first
// word said just before the press is kept (the pre-roll), and the release
// commits the turn at once. Nothing runs while the button is up: the VAD
// is given only the frames between the presses. In English and Chinese,
// by start and stop and by toggle.
func TestPushToTalk(t *testing.T) {
	for _, words := range [][2]string{{"what is on the tv", "what time is it"}, {"电视上演什么", "现在几点了"}} {
		for _, toggle := range []bool{false, true} {
			start, stop := pipeline.OpTalkStart, pipeline.OpTalkStop
			if toggle {
				start, stop = pipeline.OpTalkToggle, pipeline.OpTalkToggle
			}
			press, pressDone := command(3100*time.Millisecond, start)
			release, releaseDone := command(4300*time.Millisecond, stop)
			counter := &countingVAD{}
			var needs []needAt
			s := scenario{
				length: 7 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: words[0]},
					{Start: 3 * time.Second, End: 4 * time.Second, Text: words[1]},
				},
				replies:  []string{"It is noon."},
				commands: []timed[pipeline.Command]{press, release},
				tune: func(c *pipeline.Config) {
					c.Activation.Mode = pipeline.ActivatePush
					counter.VAD = c.VAD
					c.VAD = counter
					c.Need = recordNeeds(c.Clock, &needs)
				},
			}
			o := s.run(t)
			require.NoError(t, <-pressDone)
			require.NoError(t, <-releaseDone)
			commits := o.of(pipeline.EvTurnCommit)
			require.Len(t, commits, 1, "only the pushed turn (toggle %v)", toggle)
			assert.Equal(t, words[1], commits[0].Text, "its first word kept")
			assert.Equal(t, string(listen.ReasonTalkStop), commits[0].Reason)
			assert.Equal(t, 4300*time.Millisecond, commits[0].At, "committed at the release")
			require.NotEmpty(t, o.of(pipeline.EvPlaybackStop), "and answered")
			assert.InDelta(t, 120, counter.frames, 2, "the VAD runs between the presses only (10 ms frames)")
			played := o.of(pipeline.EvPlaybackStop)
			require.Len(t, needs, 3, "%v", needs)
			assert.Equal(t, needAt{pipeline.NeedPreRoll, 10 * time.Millisecond}, needs[0], "a pre-roll from the first frame")
			assert.Equal(t, needAt{pipeline.NeedPrompt, 3100 * time.Millisecond}, needs[1], "every frame at once from the press")
			assert.Equal(t, pipeline.NeedPreRoll, needs[2].need)
			// The reply's end is when its last sample will have played,
			// at most a period ahead of the clock.
			assert.GreaterOrEqual(t, needs[2].at+10*time.Millisecond, played[len(played)-1].At, "and a pre-roll again once the reply has played")
		}
	}
	// Listening to every word, a session needs every frame, at once from
	// the turn's start to its reply's end.
	var needs []needAt
	o := scenario{
		length:  3 * time.Second,
		user:    []standin.Utterance{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "hello"}},
		replies: []string{"Hi."},
		tune:    func(c *pipeline.Config) { c.Need = recordNeeds(c.Clock, &needs) },
	}.run(t)
	require.Len(t, needs, 3, "%v", needs)
	assert.Equal(t, needAt{pipeline.NeedListen, 10 * time.Millisecond}, needs[0])
	assert.Equal(t, needAt{pipeline.NeedPrompt, o.of(pipeline.EvSpeechStart)[0].At}, needs[1])
	assert.Equal(t, pipeline.NeedListen, needs[2].need)
	played := o.of(pipeline.EvPlaybackStop)
	assert.GreaterOrEqual(t, needs[2].at+10*time.Millisecond, played[len(played)-1].At)
}

// needAt is a call of pipeline.Config.Need, and when it came.
type needAt struct {
	need pipeline.Need
	at   time.Duration
}

func recordNeeds(clk clock.Clock, into *[]needAt) func(pipeline.Need) {
	return func(n pipeline.Need) { *into = append(*into, needAt{n, clk.Now()}) }
}

// The talk button pressed over a reply cuts it, and the turn it opens is
// the next one; without push activation the button is refused.
func TestPushToTalkOverAReply(t *testing.T) {
	first, firstDone := command(300*time.Millisecond, pipeline.OpTalkStart)
	firstUp, firstUpDone := command(1700*time.Millisecond, pipeline.OpTalkStop)
	again, againDone := command(2500*time.Millisecond, pipeline.OpTalkStart)
	againUp, againUpDone := command(3800*time.Millisecond, pipeline.OpTalkStop)
	s := scenario{
		length: 7 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"},
			{Start: 2600 * time.Millisecond, End: 3600 * time.Millisecond, Text: "a shorter one"},
		},
		replies:  []string{"Once upon a time there was a small robot who lived in a lighthouse by the sea.", "A robot slept."},
		commands: []timed[pipeline.Command]{first, firstUp, again, againUp},
		tune:     func(c *pipeline.Config) { c.Activation.Mode = pipeline.ActivatePush },
	}
	o := s.run(t)
	for _, done := range []chan error{firstDone, firstUpDone, againDone, againUpDone} {
		require.NoError(t, <-done)
	}
	assert.Equal(t, []string{"tell me a story", "a shorter one"}, texts(o.of(pipeline.EvTurnCommit)))
	cuts := o.of(pipeline.EvBargeIn)
	require.Len(t, cuts, 1)
	assert.Equal(t, 2500*time.Millisecond, cuts[0].At)

	refused, refusedDone := command(300*time.Millisecond, pipeline.OpTalkStart)
	scenario{length: time.Second, commands: []timed[pipeline.Command]{refused}}.run(t)
	assert.ErrorContains(t, <-refusedDone, "needs activation push")
}

// With wake activation, a turn is what begins with a wake phrase, follows
// the host's wake, or falls in the follow-up window after a reply: the TV
// and the chatter after the window are not answered, and the LLM is not
// given the phrase. In English and Chinese.
func TestWakePhrase(t *testing.T) {
	for _, lang := range []struct{ tv, woken, asked, followUp, chatter string }{
		{"what is on the tv", "hey assistant, what time is it", "what time is it", "and in tokyo", "pass the salt please"},
		{"电视上演什么", "你好助手现在几点了", "现在几点了", "那东京呢", "把盐递给我"},
	} {
		s := scenario{
			length: 24 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: lang.tv},
				{Start: 3 * time.Second, End: 4500 * time.Millisecond, Text: lang.woken},
				{Start: 8 * time.Second, End: 9 * time.Second, Text: lang.followUp},
				{Start: 20 * time.Second, End: 21 * time.Second, Text: lang.chatter},
			},
			replies: []string{"It is noon.", "It is night there."},
			tune: func(c *pipeline.Config) {
				c.Activation = pipeline.Activation{Mode: pipeline.ActivateWake, FollowUp: 8 * time.Second,
					Phrases: listen.DefaultWakePhrases()}
			},
		}
		o := s.run(t)
		assert.Equal(t, []string{lang.asked, lang.followUp}, texts(o.of(pipeline.EvTurnCommit)), "the woken turn and the follow-up only")
		for _, conv := range o.llm.Conversations() {
			for _, m := range conv {
				assert.NotContains(t, m.Content, lang.woken[:6], "the phrase is not in the prompt")
			}
		}
		var users []string
		for _, m := range o.llm.Conversations()[0] {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		assert.Equal(t, []string{lang.asked}, users)
	}
}

// With wake activation and no phrases, only the host's wake opens a turn,
// and until it comes nothing runs: the VAD is not given a frame.
func TestHostWake(t *testing.T) {
	for _, words := range [][2]string{{"what is on the tv", "what time is it"}, {"电视上演什么", "现在几点了"}} {
		wake, wakeDone := command(2900*time.Millisecond, pipeline.OpWake)
		counter := &countingVAD{}
		s := scenario{
			length: 7 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: words[0]},
				{Start: 3 * time.Second, End: 4 * time.Second, Text: words[1]},
			},
			replies:  []string{"It is noon."},
			commands: []timed[pipeline.Command]{wake},
			tune: func(c *pipeline.Config) {
				c.Activation = pipeline.Activation{Mode: pipeline.ActivateWake, FollowUp: 8 * time.Second}
				counter.VAD = c.VAD
				c.VAD = counter
			},
		}
		o := s.run(t)
		require.NoError(t, <-wakeDone)
		assert.Equal(t, []string{words[1]}, texts(o.of(pipeline.EvTurnCommit)))
		assert.Equal(t, 2890*time.Millisecond, counter.first, "no VAD before the wake (the frame it came in)")
	}
}

// say is the host's say command at an audio time.
func say(at time.Duration, text string) (timed[pipeline.Command], chan error) {
	c, done := command(at, pipeline.OpSay)
	c.v.Text = text
	return c, done
}

// The host's say is spoken as an assistant turn of its own: at once when
// the assistant is free, after the reply under way otherwise; it reports
// no latency (no user turn), is remembered, and the user's next turn is
// numbered after it. In English and Chinese.
func TestHostSays(t *testing.T) {
	for _, lang := range []struct{ question, note, later string }{
		{"what time is it", "You have a new message from Anna.", "read it to me"},
		{"现在几点了", "你有一条安娜发来的新消息。", "读给我听"},
	} {
		during, duringDone := say(2500*time.Millisecond, lang.note)
		s := scenario{
			length: 10 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: lang.question},
				{Start: 7 * time.Second, End: 8 * time.Second, Text: lang.later},
			},
			replies:  []string{"It is noon and the sun is high.", "Anna says hello."},
			commands: []timed[pipeline.Command]{during},
		}
		o := s.run(t)
		require.NoError(t, <-duringDone)
		var note []string
		for _, e := range o.of(pipeline.EvLLMDone) {
			if e.Turn == 2 {
				note = append(note, e.Text)
			}
		}
		require.Equal(t, []string{lang.note}, note, "said, as turn 2")
		stops := o.of(pipeline.EvPlaybackStop)
		require.Len(t, stops, 3)
		var noteStart time.Duration
		for _, e := range o.of(pipeline.EvPlaybackStart) {
			if e.Turn == 2 {
				noteStart = e.At
			}
		}
		assert.GreaterOrEqual(t, noteStart, stops[0].At, "after the reply under way")
		commits := o.of(pipeline.EvTurnCommit)
		require.Len(t, commits, 2)
		assert.Equal(t, []int{1, 3}, []int{commits[0].Turn, commits[1].Turn}, "the say is turn 2")
		assert.Len(t, o.result.Metrics, 2, "no latency for the say")
		var said []string
		for _, m := range o.llm.Conversations()[1] {
			if m.Role == "assistant" {
				said = append(said, m.Content)
			}
		}
		assert.Contains(t, said, lang.note, "remembered")
	}
}

// Speech over the host's say cuts it as any reply; a say with no text is
// refused.
func TestHostSayIsInterrupted(t *testing.T) {
	note, noteDone := say(300*time.Millisecond, "You have three new messages, the first from Anna, the second from Bob, and the third from Carol.")
	empty, emptyDone := say(400*time.Millisecond, "  ")
	s := scenario{
		length:   6 * time.Second,
		user:     []standin.Utterance{{Start: 1500 * time.Millisecond, End: 2500 * time.Millisecond, Text: "stop reading please"}},
		replies:  []string{"Okay."},
		commands: []timed[pipeline.Command]{note, empty},
	}
	o := s.run(t)
	require.NoError(t, <-noteDone)
	assert.ErrorContains(t, <-emptyDone, "no text to say")
	cuts := o.of(pipeline.EvBargeIn)
	require.Len(t, cuts, 1)
	assert.Equal(t, 1, cuts[0].Turn)
	assert.Equal(t, []string{"stop reading please"}, texts(o.of(pipeline.EvTurnCommit)))
}
