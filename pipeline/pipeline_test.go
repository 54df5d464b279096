package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/tts/chunk"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scenario is a replay with the stand-ins.
type scenario struct {
	length  time.Duration
	user    []standin.Utterance
	replies []string
	// interrupt is the barge-in mode (default: the pipeline's, pause).
	interrupt pipeline.InterruptMode
	// tune adjusts the configuration further.
	tune func(*pipeline.Config)
	echo *audio.Echo
	// noTTS makes replies text only.
	noTTS bool
	// input is the capture audio, made from user if nil.
	input []float32
	// tokensPerSecond paces the scripted LLM (default 50, negative for no
	// delay at all).
	tokensPerSecond float64
	// stopKeyAt are the audio times the stop key is pressed at
	// (Config.Interrupt).
	stopKeyAt []time.Duration
	// commands are the host's, sent at their times (Config.Commands).
	commands []timed[pipeline.Command]
}

type outcome struct {
	events []pipeline.Event
	result *pipeline.ReplayResult
	llm    *standin.ScriptedLLM
}

func (s scenario) config(clk clock.Clock) (pipeline.Config, *standin.ScriptedLLM) {
	cfg := pipeline.DefaultConfig()
	if s.interrupt != "" {
		cfg.BargeIn.Mode = s.interrupt
	}
	rate := s.tokensPerSecond
	if rate == 0 {
		rate = 50
	}
	first := 100 * time.Millisecond
	if rate < 0 {
		first = 0
	}
	gen := &standin.ScriptedLLM{Clock: clk, Replies: s.replies, FirstToken: first, TokensPerSecond: rate}
	cfg.VAD = standin.NewEnergyVAD()
	cfg.ASR = &standin.ScriptedASR{Script: s.user}
	cfg.LLM = gen
	cfg.NewChunker = func() pipeline.Chunker { return chunk.New(chunk.DefaultConfig()) }
	if !s.noTTS {
		cfg.TTS = standin.NewToneTTS()
	}
	cfg.History = llm.NewHistory("You are a helpful assistant.", 0)
	cfg.Clock = clk // as Replay sets it, for tune's doubles
	if s.tune != nil {
		s.tune(&cfg)
	}
	return cfg, gen
}

func (s scenario) run(t testing.TB) outcome {
	t.Helper()
	var out outcome
	clk := clock.NewVirtual()
	cfg, gen := s.config(clk)
	out.llm = gen
	if s.input == nil {
		s.input = standin.Voice(s.length, s.user...)
	}
	dev := audio.VirtualConfig{Input: s.input, Echo: s.echo, Stall: 5 * time.Second}
	if len(s.stopKeyAt) > 0 {
		keys := make(chan struct{})
		cfg.Interrupt = keys
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clk.Hold()
		go pressAt(ctx, clk, keys, s.stopKeyAt)
	}
	if len(s.commands) > 0 {
		commands := make(chan pipeline.Command)
		cfg.Commands = commands
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clk.Hold()
		go sendAt(ctx, clk, commands, s.commands)
	}
	res, err := replay(t, clk, cfg, dev, func(e pipeline.Event) {
		out.events = append(out.events, e)
	})
	require.NoError(t, err)
	out.result = res
	// Every scenario's events come in time order.
	for i := 1; i < len(out.events); i++ {
		prev, e := out.events[i-1], out.events[i]
		if !assert.GreaterOrEqual(t, e.At, prev.At, "event %d (%s at %v) comes after %s at %v", i, e.Type, e.At, prev.Type, prev.At) {
			break
		}
	}
	return out
}

// replay is pipeline.Replay that fails t on a move no state machine's
// table allows: the pipeline reports one as an error event and goes on, as
// a user's session must, so nothing else would fail the test.
func replay(t testing.TB, clk *clock.Virtual, cfg pipeline.Config, dev audio.VirtualConfig, onEvent func(pipeline.Event)) (*pipeline.ReplayResult, error) {
	t.Helper()
	return pipeline.Replay(context.Background(), clk, cfg, dev, func(e pipeline.Event) {
		if e.Type == pipeline.EvError && strings.Contains(e.Err, "no transition from") {
			t.Errorf("an illegal move at %v: %s", e.At, e.Err)
		}
		if onEvent != nil {
			onEvent(e)
		}
	})
}

// pressAt sends a key press at each audio time, holding the clock from
// the moment it wakes until the pipeline has taken the press.
func pressAt(ctx context.Context, clk *clock.Virtual, keys chan<- struct{}, times []time.Duration) {
	var presses []timed[struct{}]
	for _, at := range times {
		presses = append(presses, timed[struct{}]{at: at})
	}
	sendAt(ctx, clk, keys, presses)
}

// timed is a value sent at an audio time.
type timed[T any] struct {
	at time.Duration
	v  T
}

// sendAt sends each value on ch at its time, holding the clock for each
// send as a sender to the session must (the session releases it once it
// has acted). The caller takes the first hold before it starts sendAt,
// lest the replay run past the first time before sendAt runs; the hold
// for each next value is taken before the value before it is sent, lest
// the replay run past its time while this goroutine waits to be
// scheduled (sleeping gives it back).
func sendAt[T any](ctx context.Context, clk *clock.Virtual, ch chan<- T, values []timed[T]) {
	for i, tv := range values {
		if clk.Sleep(ctx, tv.at-clk.Now()) != nil {
			clk.Release()
			return
		}
		holds := 1
		if i+1 < len(values) {
			clk.Hold()
			holds++
		}
		select {
		case ch <- tv.v:
		case <-ctx.Done():
			for range holds {
				clk.Release()
			}
			return
		}
	}
}

func (o outcome) of(typ pipeline.EventType) []pipeline.Event {
	var out []pipeline.Event
	for _, e := range o.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// rms of the recording between two audio times.
func (o outcome) rms(from, to time.Duration) float64 {
	f := o.result.Format
	a := min(int(f.Samples(from))*f.Channels, len(o.result.Recording))
	b := min(int(f.Samples(to))*f.Channels, len(o.result.Recording))
	if b <= a {
		return 0
	}
	var sum float64
	for _, s := range o.result.Recording[a:b] {
		sum += float64(s) * float64(s)
	}
	return math.Sqrt(sum / float64(b-a))
}

func TestTwoTurnConversation(t *testing.T) {
	for _, speculate := range []bool{true, false} {
		t.Run(fmt.Sprintf("speculate=%v", speculate), func(t *testing.T) { testTwoTurnConversation(t, speculate) })
	}
}

// weatherQuestions are two turns of the user's, 4 s apart.
var weatherQuestions = []standin.Utterance{
	{Start: 500 * time.Millisecond, End: 2 * time.Second, Text: "what is the weather today"},
	{Start: 6 * time.Second, End: 7500 * time.Millisecond, Text: "and tomorrow"},
}

// twoTurns is the weather conversation: two questions, each answered.
func twoTurns(speculate bool) scenario {
	return scenario{
		length:  9 * time.Second,
		user:    weatherQuestions,
		replies: []string{"It is sunny today.", "Tomorrow it will rain, so take an umbrella."},
		tune:    func(c *pipeline.Config) { c.Speculate = speculate },
	}
}

func testTwoTurnConversation(t *testing.T, speculate bool) {
	s := twoTurns(speculate)
	o := s.run(t)
	hits := 0
	if speculate {
		hits = 2
	}
	assert.Len(t, o.of(pipeline.EvSpeculationHit), hits)
	assert.Len(t, o.of(pipeline.EvSpeculationStart), hits)
	assert.Empty(t, o.of(pipeline.EvSpeculationMiss))

	var order []string
	for _, e := range o.events {
		switch e.Type {
		case pipeline.EvSpeechStart, pipeline.EvSpeechEnd, pipeline.EvFinal, pipeline.EvTurnCommit,
			pipeline.EvPlaybackStart, pipeline.EvPlaybackStop, pipeline.EvTurnMetrics:
			order = append(order, string(e.Type))
		}
	}
	turn := []string{"speech_start", "speech_end", "final", "turn_commit", "playback_start", "playback_stop", "turn_metrics"}
	assert.Equal(t, append(append([]string{}, turn...), turn...), order)

	commits := o.of(pipeline.EvTurnCommit)
	require.Len(t, commits, 2)
	assert.Equal(t, "what is the weather today", commits[0].Text)
	assert.Equal(t, "and tomorrow", commits[1].Text)
	assert.Empty(t, o.of(pipeline.EvBargeIn))
	assert.Empty(t, o.of(pipeline.EvError))

	// Within a turn the stages happen in order, in audio time.
	for i, m := range o.result.Metrics {
		assert.Equal(t, []time.Duration{s.user[i].End}, []time.Duration{m.SpeechEnd}, "turn %d speech end", i+1)
		assert.Less(t, m.SpeechEnd, m.Commit)
		if speculate {
			// Generated from the pause on, played from the commit on.
			assert.Less(t, m.FirstToken, m.Commit)
			assert.LessOrEqual(t, m.Commit, m.PlaybackStart)
		} else {
			assert.LessOrEqual(t, m.Commit, m.FirstToken)
		}
		assert.LessOrEqual(t, m.FirstToken, m.FirstAudio)
		assert.LessOrEqual(t, m.FirstAudio, m.PlaybackStart)
		assert.InDelta(t, m.EndToEndMS, float64((m.PlaybackStart - m.SpeechEnd).Milliseconds()), 1)
		assert.False(t, m.Interrupted)
	}

	// The reply audio is in the recording exactly between the playback
	// events, and the assistant is silent otherwise.
	starts, stops := o.of(pipeline.EvPlaybackStart), o.of(pipeline.EvPlaybackStop)
	require.Len(t, starts, 2)
	require.Len(t, stops, 2)
	period := 10 * time.Millisecond
	assert.Zero(t, o.rms(0, starts[0].At))
	for i := range starts {
		assert.InDelta(t, 0.3/math.Sqrt2, o.rms(starts[i].At, stops[i].At), 0.01, "reply %d level", i+1)
		var spoken int
		for _, c := range o.of(pipeline.EvTTSChunk) {
			if c.Turn == i+1 {
				spoken += len(c.Text)
			}
		}
		wantLen := time.Duration(spoken) * 66 * time.Millisecond
		assert.InDelta(t, wantLen.Seconds(), (stops[i].At - starts[i].At).Seconds(), 0.05, "reply %d length", i+1)
	}
	assert.Zero(t, o.rms(stops[0].At+period, starts[1].At))
	assert.Zero(t, o.rms(stops[1].At+period, s.length))
	assert.Zero(t, o.result.Underruns)

	// The second turn saw the first exchange in full.
	convs := o.llm.Conversations()
	require.Len(t, convs, 2)
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "You are a helpful assistant."},
		{Role: llm.User, Content: "what is the weather today"},
		{Role: llm.Assistant, Content: "It is sunny today."},
		{Role: llm.User, Content: "and tomorrow"},
	}, convs[1])
}

func TestReplayIsDeterministic(t *testing.T) {
	s := scenario{
		length:  6 * time.Second,
		user:    []standin.Utterance{{Start: 300 * time.Millisecond, End: 1500 * time.Millisecond, Text: "hello there"}},
		replies: []string{"Hi, how can I help you today?"},
	}
	a, b := s.run(t), s.run(t)
	assert.Equal(t, a.events, b.events)
	assert.Equal(t, a.result.Recording, b.result.Recording)
}

func TestBargeIn(t *testing.T) {
	story := "Once upon a **time**, there was a *small* robot who loved to sing. " +
		"Every morning it climbed the hill behind the village and sang to the sun. " +
		"The villagers did not mind, because the songs were short and quite beautiful."
	s := scenario{
		length: 12 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"},
			{Start: 5 * time.Second, End: 6 * time.Second, Text: "stop please"},
		},
		replies: []string{story, "Okay."},
		// Slower than speech, so generation is still running at barge-in.
		tokensPerSecond: 10,
	}
	o := s.run(t)

	// The voice pauses the reply as soon as the VAD hears it (the energy
	// VAD double confirms speech after 100 ms) ...
	pending := o.of(pipeline.EvBargeInPending)
	require.Len(t, pending, 1)
	paused := pending[0].At
	assert.Equal(t, s.user[1].Start+100*time.Millisecond, paused)
	// ... and the first word ("stop", the first half of the utterance)
	// confirms the interruption.
	barge := o.of(pipeline.EvBargeIn)
	require.Len(t, barge, 1)
	at := barge[0].At
	assert.Equal(t, 1, barge[0].Turn)
	assert.Equal(t, s.user[1].Start+500*time.Millisecond, at)
	assert.Empty(t, o.of(pipeline.EvBargeInResumed))

	// Playback fades out in the device period after the pause (the one
	// playing meanwhile was rendered already), and stays silent until the
	// next reply.
	starts := o.of(pipeline.EvPlaybackStart)
	require.Len(t, starts, 2)
	assert.Greater(t, o.rms(paused-100*time.Millisecond, paused), 0.1, "the reply was playing")
	assert.Zero(t, o.rms(paused+13*time.Millisecond, starts[1].At))

	// Generation and synthesis of the interrupted reply ended at once: its
	// done event carries the barge-in instant, with the reply unfinished.
	var done1 pipeline.Event
	for _, e := range o.of(pipeline.EvLLMDone) {
		if e.Turn == 1 {
			done1 = e
		}
	}
	assert.Equal(t, at, done1.At)
	assert.Less(t, done1.Stats.GeneratedTokens, len(strings.Fields(story)))

	// The interrupting speech is the next user turn, and the history holds
	// only the part of the story that was played, as the model wrote it,
	// markup included: an engine that keeps its KV cache across replies
	// (llm/mnn) then finds the cut reply's tokens in it, where the spoken
	// words would part from them at the first mark and be prefilled again.
	// The barge-in event says what was spoken.
	commits := o.of(pipeline.EvTurnCommit)
	require.Len(t, commits, 2)
	assert.Equal(t, "stop please", commits[1].Text)
	convs := o.llm.Conversations()
	require.Len(t, convs, 2)
	hist := convs[1]
	require.Len(t, hist, 4)
	heard := hist[2]
	assert.Equal(t, llm.Assistant, heard.Role)
	assert.True(t, heard.Interrupted)
	assert.NotEmpty(t, heard.Content)
	assert.True(t, strings.HasPrefix(story, heard.Content), "history %q is not a prefix of the reply", heard.Content)
	assert.Less(t, len(heard.Content), len(story))
	assert.Contains(t, heard.Content, "**time**, there was a *small*", "as written")
	assert.Equal(t, chunk.Speakable(heard.Content), barge[0].Text, "the words spoken")
	assert.NotContains(t, barge[0].Text, "*")
	played := paused - starts[0].At
	spoken := time.Duration(len(barge[0].Text)) * 66 * time.Millisecond
	assert.InDelta(t, played.Seconds(), spoken.Seconds(), 0.6, "heard text %q vs %v played", barge[0].Text, played)
	assert.Equal(t, llm.Message{Role: llm.User, Content: "stop please"}, hist[3])

	require.Len(t, o.result.Metrics, 2)
	assert.True(t, o.result.Metrics[0].Interrupted)
	assert.False(t, o.result.Metrics[1].Interrupted)
}

// With barge-in off the reply plays to its end, and what the user said
// over it is the next turn.
func TestBargeInOffLetsTheReplyFinish(t *testing.T) {
	s := scenario{
		length: 14 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"},
			{Start: 3 * time.Second, End: 4 * time.Second, Text: "and a song"},
		},
		replies:   []string{"Once upon a time, there was a small robot who loved to sing every single day.", "La la la."},
		interrupt: pipeline.InterruptOff,
	}
	o := s.run(t)
	assert.Empty(t, o.of(pipeline.EvBargeIn))
	assert.Empty(t, o.of(pipeline.EvBargeInPending))
	stops, commits := o.of(pipeline.EvPlaybackStop), o.of(pipeline.EvTurnCommit)
	require.Len(t, stops, 2)
	require.Len(t, commits, 2)
	assert.Equal(t, "and a song", commits[1].Text)
	assert.Greater(t, commits[1].At, stops[0].At, "committed once the reply was over")
	assert.False(t, o.result.Metrics[0].Interrupted)
	// The whole reply was played at full level.
	starts := o.of(pipeline.EvPlaybackStart)
	assert.InDelta(t, 0.3/math.Sqrt2, o.rms(starts[0].At, stops[0].At), 0.01)
}

// Without echo cancellation, a loud echo path makes the assistant pause
// for its own voice; a faint one does not. This is what the
// echo-cancellation tests build on.
func TestEchoPathReachesTheMicrophone(t *testing.T) {
	for _, tc := range []struct {
		gain       float64
		selfPauses bool
	}{{0.5, true}, {0.01, false}} {
		s := scenario{
			length:  6 * time.Second,
			user:    []standin.Utterance{{Start: 300 * time.Millisecond, End: 1200 * time.Millisecond, Text: "tell me a story"}},
			replies: []string{"Once upon a time, there was a small robot who loved to sing every single day."},
			echo:    &audio.Echo{Delay: 60 * time.Millisecond, Gain: tc.gain},
		}
		o := s.run(t)
		assert.Equal(t, tc.selfPauses, len(o.of(pipeline.EvBargeInPending)) > 0, "echo gain %v", tc.gain)
	}
}

// The conversation given to the LLM stays within the history budget by
// dropping the oldest exchanges whole.
func TestHistoryBudgetDropsOldestExchanges(t *testing.T) {
	s := scenario{
		length: 10 * time.Second,
		user: []standin.Utterance{
			{Start: 300 * time.Millisecond, End: 1 * time.Second, Text: "first question"},
			{Start: 3500 * time.Millisecond, End: 4200 * time.Millisecond, Text: "second question"},
			{Start: 7 * time.Second, End: 7700 * time.Millisecond, Text: "third question"},
		},
		replies: []string{"First answer.", "Second answer.", "Third answer."},
	}
	clk := clock.NewVirtual()
	cfg, gen := s.config(clk)
	// Room for about two exchanges ("first question" + "First answer." is
	// 27): the second answer takes the history past three quarters of the
	// budget, and the oldest exchanges go until it fits in half of it,
	// after that reply rather than at the third question.
	cfg.History = llm.NewHistory("sys", 60)
	_, err := pipeline.Replay(context.Background(), clk, cfg, audio.VirtualConfig{Input: standin.Voice(s.length, s.user...)}, nil)
	require.NoError(t, err)
	convs := gen.Conversations()
	require.Len(t, convs, 3)
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "sys"},
		{Role: llm.User, Content: "first question"},
		{Role: llm.Assistant, Content: "First answer."},
		{Role: llm.User, Content: "second question"},
	}, convs[1])
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "sys"},
		{Role: llm.User, Content: "second question"},
		{Role: llm.Assistant, Content: "Second answer."},
		{Role: llm.User, Content: "third question"},
	}, convs[2])
}

// A reply generated much faster than it can be played fills the player;
// synthesis then waits for it to drain as time passes, while generation
// goes on queueing text, and the replay must not stall on that.
func TestReplyLongerThanThePlayerBuffer(t *testing.T) {
	reply := strings.Repeat("This sentence is here to make the reply long. ", 12) // ~37 s of tone
	s := scenario{
		length:          3 * time.Second,
		user:            []standin.Utterance{{Start: 300 * time.Millisecond, End: 1 * time.Second, Text: "talk to me"}},
		replies:         []string{reply},
		tokensPerSecond: -1,
	}
	o := s.run(t)
	require.Len(t, o.of(pipeline.EvPlaybackStop), 1)
	starts, stops := o.of(pipeline.EvPlaybackStart), o.of(pipeline.EvPlaybackStop)
	assert.Greater(t, stops[0].At-starts[0].At, 30*time.Second)
	assert.Zero(t, o.result.Underruns)
}

// A single chunk longer than the player holds starts playing before it is
// fully queued, and an interruption in it still knows what was heard.
func TestBargeInDuringAChunkLongerThanThePlayerBuffer(t *testing.T) {
	words := strings.Fields(strings.Repeat("one two three four five six seven eight nine ten ", 4))
	reply := strings.Join(words, " ") // no punctuation: one chunk of ~12 s
	s := scenario{
		length: 10 * time.Second,
		user: []standin.Utterance{
			{Start: 300 * time.Millisecond, End: 1 * time.Second, Text: "count"},
			{Start: 6 * time.Second, End: 6800 * time.Millisecond, Text: "stop"},
		},
		replies:         []string{reply, "Okay."},
		tokensPerSecond: -1,
	}
	o := s.run(t)
	commits, starts := o.of(pipeline.EvTurnCommit), o.of(pipeline.EvPlaybackStart)
	require.NotEmpty(t, starts)
	assert.Less(t, starts[0].At-commits[0].At, 100*time.Millisecond, "playback starts while the chunk is still being queued")
	barge := o.of(pipeline.EvBargeIn)
	require.Len(t, barge, 1)
	assert.NotEmpty(t, barge[0].Text)
	assert.True(t, strings.HasPrefix(reply, barge[0].Text), "%q", barge[0].Text)
}

// Chinese chunks the user heard are remembered without spaces between
// them.
func TestHeardChineseHasNoSpaces(t *testing.T) {
	reply := "你好。今天天气很好，我们出去走走吧。明天会下雨，记得带伞。后天是晴天，可以去公园。"
	s := scenario{
		length: 8 * time.Second,
		user: []standin.Utterance{
			{Start: 300 * time.Millisecond, End: 1 * time.Second, Text: "天气"},
			{Start: 3800 * time.Millisecond, End: 4600 * time.Millisecond, Text: "等一下"},
		},
		replies:         []string{reply, "好。"},
		tokensPerSecond: -1,
	}
	o := s.run(t)
	barge := o.of(pipeline.EvBargeIn)
	require.Len(t, barge, 1)
	assert.True(t, strings.HasPrefix(reply, barge[0].Text), "%q", barge[0].Text)
	assert.Contains(t, barge[0].Text, "你好。今天")
	assert.NotContains(t, barge[0].Text, " ")
}

// Without echo cancellation, half duplex keeps the assistant from hearing
// itself: the mic is closed while it responds and for the echo tail, and
// the user's next turn is heard after that.
func TestHalfDuplexIgnoresTheEcho(t *testing.T) {
	s := scenario{
		length: 9 * time.Second,
		user: []standin.Utterance{
			{Start: 300 * time.Millisecond, End: 1 * time.Second, Text: "tell me a story"},
			{Start: 6500 * time.Millisecond, End: 7200 * time.Millisecond, Text: "thanks"},
		},
		replies: []string{"Once upon a time, there was a small robot who loved to sing.", "You are welcome."},
		echo:    &audio.Echo{Delay: 60 * time.Millisecond, Gain: 0.5},
	}
	run := func(halfDuplex bool) (barge, commits []pipeline.Event) {
		clk := clock.NewVirtual()
		cfg, _ := s.config(clk)
		cfg.HalfDuplex.Enabled = halfDuplex
		_, err := pipeline.Replay(context.Background(), clk, cfg, audio.VirtualConfig{Input: standin.Voice(s.length, s.user...), Echo: s.echo},
			func(e pipeline.Event) {
				switch e.Type {
				case pipeline.EvBargeInPending:
					barge = append(barge, e)
				case pipeline.EvTurnCommit:
					commits = append(commits, e)
				}
			})
		require.NoError(t, err)
		return barge, commits
	}
	barge, commits := run(true)
	assert.Empty(t, barge)
	require.Len(t, commits, 2)
	assert.Equal(t, "thanks", commits[1].Text)

	barge, _ = run(false)
	assert.NotEmpty(t, barge, "full duplex without echo cancellation hears itself")
}
