package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline"
	"github.com/voiceassistant/voice/standin"
)

const story = "Once upon a time, there was a small robot who loved to sing every single day."

// soundingFor is how long the recording is not silent between two audio
// times, in whole milliseconds.
func (o outcome) soundingFor(from, to time.Duration) time.Duration {
	var n time.Duration
	for at := from; at < to; at += time.Millisecond {
		if o.rms(at, at+time.Millisecond) > 0.01 {
			n += time.Millisecond
		}
	}
	return n
}

// spokenLen is how long the tone double speaks turn's reply.
func (o outcome) spokenLen(turn int) time.Duration {
	var chars int
	for _, c := range o.of(pipeline.EvTTSChunk) {
		if c.Turn == turn {
			chars += len([]rune(c.Text))
		}
	}
	return time.Duration(chars) * 66 * time.Millisecond
}

func texts(events []pipeline.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Text
	}
	return out
}

// A cough, a door or a backchannel over the reply pauses it, and the reply
// then plays on from where it paused: nothing of it is lost, it is
// remembered once and whole, and the sound is no turn.
func TestSoundsOverAReplyDoNotInterrupt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sound standin.Utterance
		mode  pipeline.InterruptMode
	}{
		{"short noise", standin.Utterance{Start: 3 * time.Second, End: 3150 * time.Millisecond}, ""},
		{"800 ms cough", standin.Utterance{Start: 3 * time.Second, End: 3800 * time.Millisecond}, ""},
		{"yeah", standin.Utterance{Start: 3 * time.Second, End: 3400 * time.Millisecond, Text: "yeah"}, ""},
		{"uh-huh", standin.Utterance{Start: 3 * time.Second, End: 3500 * time.Millisecond, Text: "uh-huh"}, ""},
		{"嗯", standin.Utterance{Start: 3 * time.Second, End: 3400 * time.Millisecond, Text: "嗯"}, ""},
		{"好的", standin.Utterance{Start: 3 * time.Second, End: 3400 * time.Millisecond, Text: "好的"}, ""},
		{"哦", standin.Utterance{Start: 3 * time.Second, End: 3300 * time.Millisecond, Text: "哦"}, ""},
		{"对", standin.Utterance{Start: 3 * time.Second, End: 3300 * time.Millisecond, Text: "对"}, ""},
		{"嗯嗯 对对", standin.Utterance{Start: 3 * time.Second, End: 4 * time.Second, Text: "嗯嗯 对对"}, ""},
		// Longer than min_speech, but only backchannels.
		{"yeah yeah right okay", standin.Utterance{Start: 3 * time.Second, End: 5 * time.Second, Text: "yeah yeah right okay"}, ""},
		{"ducked yeah", standin.Utterance{Start: 3 * time.Second, End: 3400 * time.Millisecond, Text: "yeah"}, pipeline.InterruptDuck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scenario{
				length: 17 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"},
					tc.sound,
					{Start: 13 * time.Second, End: 13600 * time.Millisecond, Text: "thanks"},
				},
				replies:   []string{story, "You are welcome."},
				interrupt: tc.mode,
			}
			o := s.run(t)
			assert.Empty(t, o.of(pipeline.EvBargeIn))
			assert.Empty(t, o.of(pipeline.EvSpeechIgnored))
			require.Len(t, o.of(pipeline.EvBargeInPending), 1)
			resumed := o.of(pipeline.EvBargeInResumed)
			require.Len(t, resumed, 1)
			assert.GreaterOrEqual(t, resumed[0].At, tc.sound.End+time.Second, "resumed once resume_after had passed in silence")
			assert.Equal(t, []string{"tell me a story", "thanks"}, texts(o.of(pipeline.EvTurnCommit)))
			assert.Len(t, o.of(pipeline.EvFinal), 2, "no empty turn")

			// All of the reply was played: paused, it lost nothing;
			// ducked, it played on at a quarter of the level.
			starts, stops := o.of(pipeline.EvPlaybackStart), o.of(pipeline.EvPlaybackStop)
			require.Len(t, stops, 2)
			replyLen := o.spokenLen(1)
			if tc.mode == pipeline.InterruptDuck {
				assert.InDelta(t, replyLen.Seconds(), (stops[0].At - starts[0].At).Seconds(), 0.02)
				full := o.rms(starts[0].At, tc.sound.Start)
				ducked := o.rms(o.of(pipeline.EvBargeInPending)[0].At+20*time.Millisecond, resumed[0].At)
				assert.InDelta(t, 0.25, ducked/full, 0.01)
			} else {
				assert.InDelta(t, replyLen.Seconds(), o.soundingFor(starts[0].At, stops[0].At).Seconds(), 0.03)
				assert.Greater(t, stops[0].At-starts[0].At, replyLen+time.Second, "it was paused meanwhile")
			}

			// The reply is remembered once, whole.
			convs := o.llm.Conversations()
			require.Len(t, convs, 2)
			assert.Equal(t, []llm.Message{
				{Role: llm.System, Content: "You are a helpful assistant."},
				{Role: llm.User, Content: "tell me a story"},
				{Role: llm.Assistant, Content: story},
				{Role: llm.User, Content: "thanks"},
			}, convs[1])
		})
	}
}

// replyEnd is when the first reply of s, played without anything said over
// it, stops.
func replyEnd(t *testing.T, s scenario) time.Duration {
	s.user = s.user[:1]
	stops := s.run(t).of(pipeline.EvPlaybackStop)
	require.NotEmpty(t, stops)
	return stops[0].At
}

// Whenever the user starts speaking around the end of a reply, in every
// mode, the speech is the next turn, with all its words (bug: a barge-in
// confirmed after the reply had ended dereferenced the gone response).
func TestSpeechAroundTheEndOfTheReplyIsTheNextTurn(t *testing.T) {
	base := scenario{
		length:  9 * time.Second,
		user:    []standin.Utterance{{Start: 300 * time.Millisecond, End: time.Second, Text: "what is the weather"}},
		replies: []string{"It is sunny and warm today.", "Rain."},
	}
	end := replyEnd(t, base)
	for _, mode := range []struct {
		name string
		tune func(*pipeline.Config)
	}{
		{"pause", nil},
		{"duck", func(c *pipeline.Config) { c.BargeIn.Mode = pipeline.InterruptDuck }},
		{"off", func(c *pipeline.Config) { c.BargeIn.Mode = pipeline.InterruptOff }},
		{"immediate", func(c *pipeline.Config) { c.BargeIn.MinSpeech = 0 }},
		{"half duplex tail", func(c *pipeline.Config) { c.HalfDuplex.Enabled = true }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			from := -500 * time.Millisecond
			if mode.name == "half duplex tail" {
				// Half duplex hears nothing while the assistant speaks;
				// speech begun in the echo tail must still be whole.
				from = 0
			}
			for offset := from; offset <= 300*time.Millisecond; offset += 10 * time.Millisecond {
				s := base
				s.tune = mode.tune
				start := end + offset
				s.user = append(s.user[:1:1], standin.Utterance{Start: start, End: start + 1200*time.Millisecond, Text: "what about tomorrow"})
				o := s.run(t)
				require.Empty(t, o.of(pipeline.EvError), "offset %v", offset)
				commits := texts(o.of(pipeline.EvTurnCommit))
				require.Equal(t, []string{"what is the weather", "what about tomorrow"}, commits, "speech starting %v after the reply's end", offset)
				// The next reply plays at full level, whatever state the
				// first one left the player in.
				starts, stops := o.of(pipeline.EvPlaybackStart), o.of(pipeline.EvPlaybackStop)
				require.Len(t, starts, 2, "offset %v", offset)
				next := stops[len(stops)-1]
				require.Equal(t, 2, next.Turn, "offset %v: the next reply played out", offset)
				require.InDelta(t, 0.3/math.Sqrt2, o.rms(starts[1].At+20*time.Millisecond, next.At), 0.01, "offset %v: the next reply's level", offset)
				convs := o.llm.Conversations()
				require.Len(t, convs, 2)
				last := convs[1][len(convs[1])-2:]
				require.Equal(t, llm.Assistant, last[0].Role, "offset %v: %v", offset, convs[1])
				require.Equal(t, llm.Message{Role: llm.User, Content: "what about tomorrow"}, last[1])
			}
		})
	}
}

// In half duplex the microphone is closed while the assistant speaks, so
// words said over its voice cannot be told from it; everything said from
// the moment it went quiet is kept, even while the echo tail keeps the
// microphone closed.
func TestHalfDuplexKeepsSpeechThatOutlastsTheReply(t *testing.T) {
	base := scenario{
		length:  9 * time.Second,
		user:    []standin.Utterance{{Start: 300 * time.Millisecond, End: time.Second, Text: "what is the weather"}},
		replies: []string{"It is sunny and warm today.", "Rain."},
		tune:    func(c *pipeline.Config) { c.HalfDuplex.Enabled = true },
	}
	end := replyEnd(t, base)
	for _, tc := range []struct {
		offset time.Duration
		want   string
	}{
		{-500 * time.Millisecond, "tomorrow"},
		{-300 * time.Millisecond, "about tomorrow"},
		{0, "what about tomorrow"},
		{250 * time.Millisecond, "what about tomorrow"},
	} {
		s := base
		start := end + tc.offset
		s.user = append(s.user[:1:1], standin.Utterance{Start: start, End: start + 1200*time.Millisecond, Text: "what about tomorrow"})
		o := s.run(t)
		assert.Empty(t, o.of(pipeline.EvBargeInPending))
		assert.Equal(t, []string{"what is the weather", tc.want}, texts(o.of(pipeline.EvTurnCommit)), "speech from %v after the reply's end", tc.offset)
	}
}

// With barge-in off, a question asked over the end of a reply is answered
// after it (bug: it was never answered), and one asked in the middle too;
// a backchannel is not a question.
func TestBargeInOffAnswersWhatWasSaidOverTheReply(t *testing.T) {
	base := scenario{
		length:    16 * time.Second,
		user:      []standin.Utterance{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"}},
		replies:   []string{story, "Yes, every day."},
		interrupt: pipeline.InterruptOff,
	}
	end := replyEnd(t, base)
	for _, tc := range []struct {
		name   string
		speech standin.Utterance
		want   []string
	}{
		{"2 s over the end", standin.Utterance{Start: end - 500*time.Millisecond, End: end + 1500*time.Millisecond, Text: "did it sing every day"},
			[]string{"tell me a story", "did it sing every day"}},
		{"in the middle", standin.Utterance{Start: 3 * time.Second, End: 4 * time.Second, Text: "did it sing"},
			[]string{"tell me a story", "did it sing"}},
		{"backchannel", standin.Utterance{Start: 3 * time.Second, End: 3400 * time.Millisecond, Text: "uh-huh"},
			[]string{"tell me a story"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.user = append(s.user[:1:1], tc.speech)
			o := s.run(t)
			assert.Empty(t, o.of(pipeline.EvBargeIn))
			assert.Equal(t, tc.want, texts(o.of(pipeline.EvTurnCommit)))
			stops := o.of(pipeline.EvPlaybackStop)
			require.Len(t, stops, len(tc.want), "every question answered")
			assert.Equal(t, end, stops[0].At, "the reply played to its end undisturbed")
			if len(tc.want) == 1 {
				assert.Len(t, o.of(pipeline.EvSpeechIgnored), 1)
			}
		})
	}
}

// min_speech decides for speech without words: the barge-in lands
// min_speech after the speech began (bug: any partial interrupted at once,
// so the setting had no effect).
func TestMinSpeechConfirmsWordlessSpeech(t *testing.T) {
	for _, min := range []time.Duration{250 * time.Millisecond, 2 * time.Second, 10 * time.Second} {
		s := scenario{
			length: 30 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a long story"},
				{Start: 3 * time.Second, End: 15 * time.Second}, // a voice the recognizer makes nothing of
			},
			replies: []string{strings.Repeat(story+" ", 4)},
			tune:    func(c *pipeline.Config) { c.BargeIn.MinSpeech = min },
		}
		o := s.run(t)
		barge := o.of(pipeline.EvBargeIn)
		require.Len(t, barge, 1, "min_speech %v", min)
		assert.Equal(t, s.user[1].Start+min, barge[0].At, "min_speech %v", min)
	}
}

// Words confirm as soon as min_words of them are not backchannels; 0
// min_speech confirms at once; the whole utterance is the next turn.
func TestMinWordsConfirmWithWordsThatAreNotBackchannels(t *testing.T) {
	// Five words of 500 ms each.
	speech := standin.Utterance{Start: 3 * time.Second, End: 5500 * time.Millisecond, Text: "yeah okay stop talking please"}
	for _, tc := range []struct {
		minWords  int
		minSpeech time.Duration
		at        time.Duration
	}{
		{1, time.Hour, 1500 * time.Millisecond}, // "stop", after two backchannels
		{2, time.Hour, 2 * time.Second},         // "stop talking"
		{3, time.Hour, 2500 * time.Millisecond}, // "stop talking please"
		{0, 0, 100 * time.Millisecond},          // at once: when the VAD reports the speech
	} {
		s := scenario{
			length: 14 * time.Second,
			user: []standin.Utterance{
				{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a story"},
				speech,
			},
			replies: []string{story, "Sorry."},
			tune: func(c *pipeline.Config) {
				c.BargeIn.MinWords, c.BargeIn.MinSpeech = tc.minWords, tc.minSpeech
			},
		}
		o := s.run(t)
		barge := o.of(pipeline.EvBargeIn)
		require.Len(t, barge, 1, "min_words %d", tc.minWords)
		assert.Equal(t, speech.Start+tc.at, barge[0].At, "min_words %d", tc.minWords)
		assert.Equal(t, []string{"tell me a story", speech.Text}, texts(o.of(pipeline.EvTurnCommit)))
	}
}

// Chinese over a reply, heard a character at a time as X-ASR emits it
// (one per 200 ms here): the first character that is not a backchannel
// confirms (不对, 停一下), where 对 alone would not.
func TestChineseInterruptionsConfirm(t *testing.T) {
	for _, tc := range []struct {
		text string
		at   time.Duration // after the speech starts: the confirming character heard
	}{
		{"不对", 200 * time.Millisecond},
		{"停一下", 200 * time.Millisecond},
		{"对不对", 400 * time.Millisecond}, // 对 is a backchannel; 不 is not
	} {
		t.Run(tc.text, func(t *testing.T) {
			n := utf8.RuneCountInString(tc.text)
			speech := standin.Utterance{Start: 3 * time.Second, End: 3*time.Second + time.Duration(n)*200*time.Millisecond, Text: tc.text}
			s := scenario{
				length: 14 * time.Second,
				user: []standin.Utterance{
					{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "给我讲个故事"},
					speech,
				},
				replies: []string{story, "好的。"},
			}
			o := s.run(t)
			barge := o.of(pipeline.EvBargeIn)
			require.Len(t, barge, 1)
			assert.Equal(t, speech.Start+tc.at, barge[0].At)
			assert.Empty(t, o.of(pipeline.EvBargeInResumed))
			assert.Equal(t, []string{"给我讲个故事", tc.text}, texts(o.of(pipeline.EvTurnCommit)))
		})
	}
}

// failingLLM passes the first pieces of a scripted reply on, then fails
// as an engine might (out of memory, a corrupt weight page).
type failingLLM struct {
	*standin.ScriptedLLM
	failAfter map[int]int // call -> pieces before failing
	calls     int
}

func (f *failingLLM) Generate(ctx context.Context, conv []llm.Message, emit func(string) error) (llm.Stats, error) {
	call := f.calls
	f.calls++
	after, fails := f.failAfter[call]
	if !fails {
		return f.ScriptedLLM.Generate(ctx, conv, emit)
	}
	n := 0
	errEngine := errors.New("engine failure")
	stats, err := f.ScriptedLLM.Generate(ctx, conv, func(piece string) error {
		if n == after {
			return errEngine
		}
		n++
		return emit(piece)
	})
	return stats, err
}

// A reply that fails is remembered as far as it was played, so the
// history still alternates user and assistant (bug: it was left out, and
// two user messages followed each other).
func TestFailedReplyIsRememberedAsPlayed(t *testing.T) {
	s := scenario{
		length: 16 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: time.Second, Text: "weather"},
			{Start: 6 * time.Second, End: 6500 * time.Millisecond, Text: "again"},
			{Start: 11 * time.Second, End: 11500 * time.Millisecond, Text: "thanks"},
		},
		replies: []string{"It is sunny today. And warm", "Oops", "Welcome."},
	}
	var gen *failingLLM
	s.tune = func(c *pipeline.Config) {
		gen = &failingLLM{ScriptedLLM: c.LLM.(*standin.ScriptedLLM), failAfter: map[int]int{0: 5, 1: 0}}
		c.LLM = gen
		// Failures are counted by call; speculation (whose failures are
		// retried at the commit) would add calls.
		c.Speculate = false
	}
	o := s.run(t)
	errs := o.of(pipeline.EvError)
	require.Len(t, errs, 2)
	assert.Contains(t, errs[0].Err, "engine failure")
	assert.Equal(t, []string{"weather", "again", "thanks"}, texts(o.of(pipeline.EvTurnCommit)))
	convs := gen.Conversations()
	require.Len(t, convs, 3)
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "You are a helpful assistant."},
		{Role: llm.User, Content: "weather"},
		{Role: llm.Assistant, Content: "It is sunny today.", Interrupted: true},
		// The second reply failed before a word: the two questions are
		// one user message.
		{Role: llm.User, Content: "again\nthanks"},
	}, convs[2])
}

// The stop key pressed while speech over the reply has not interrupted it
// (a backchannel, in the quiet after it) still keeps that speech: it is
// the next turn, not a sound dropped when the reply ends.
func TestStopKeyKeepsSpeechOverTheReply(t *testing.T) {
	s := scenario{
		length: 12 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a long story"},
			{Start: 5 * time.Second, End: 5400 * time.Millisecond, Text: "yeah"},
		},
		replies:   []string{strings.Repeat(story+" ", 4), "Okay."},
		stopKeyAt: []time.Duration{5700 * time.Millisecond},
	}
	o := s.run(t)
	require.Len(t, o.of(pipeline.EvBargeInPending), 1, "the backchannel paused the reply")
	barge := o.of(pipeline.EvBargeIn)
	require.Len(t, barge, 1)
	assert.Equal(t, pipeline.ReasonStopKey, barge[0].Reason)
	assert.Empty(t, o.of(pipeline.EvSpeechIgnored))
	assert.Equal(t, []string{"tell me a long story", "yeah"}, texts(o.of(pipeline.EvTurnCommit)))
}

// thousandBargeIns is a session with cycles interruptions of every kind
// (confirmed, resumed, at the very end of a reply), its capture made as
// it is read.
func thousandBargeIns(cycles int) (scenario, standin.VoiceSource) {
	cycle := 4 * time.Second
	var user []standin.Utterance
	var replies []string
	for i := range cycles {
		t0 := time.Duration(i) * cycle
		user = append(user, standin.Utterance{Start: t0 + 100*time.Millisecond, End: t0 + 500*time.Millisecond, Text: fmt.Sprintf("question %d", i)})
		replies = append(replies, "Sure, here is my answer.")
		// The reply plays from t0+0.81 s to t0+2.39 s.
		switch i % 3 {
		case 0: // confirmed, and answered
			user = append(user, standin.Utterance{Start: t0 + 1800*time.Millisecond, End: t0 + 2200*time.Millisecond, Text: "stop"})
			replies = append(replies, "Ok.")
		case 1: // a cough: resumed
			user = append(user, standin.Utterance{Start: t0 + 1800*time.Millisecond, End: t0 + 2000*time.Millisecond})
		case 2: // around the reply's end, heard before it or after
			start := t0 + 2100*time.Millisecond + time.Duration(i/3%15)*20*time.Millisecond
			user = append(user, standin.Utterance{Start: start, End: start + 400*time.Millisecond, Text: "why"})
			replies = append(replies, "Ok.")
		}
	}
	s := scenario{
		length:          time.Duration(cycles) * cycle,
		user:            user,
		replies:         replies,
		tokensPerSecond: -1,
		tune: func(c *pipeline.Config) {
			c.History = llm.NewHistory("sys", 200)
			c.Endpoint.SilenceWithoutModel = 300 * time.Millisecond
			c.BargeIn.ResumeAfter = 300 * time.Millisecond
		},
	}
	return s, standin.VoiceSource{Length: s.length, Utterances: user}
}

// One session with a thousand interruptions of every kind (confirmed,
// resumed, at the very end of a reply) ends with no goroutine left and a
// heap no bigger than after the first hundred.
func TestThousandBargeIns(t *testing.T) {
	const cycles = 1000
	s, src := thousandBargeIns(cycles)
	replies := s.replies
	counts := map[pipeline.EventType]int{}
	var heap [2]uint64
	var goroutines [2]int
	measure := func(i int) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap[i], goroutines[i] = m.HeapAlloc, runtime.NumGoroutine()
	}
	clk := clock.NewVirtual()
	cfg, _ := s.config(clk)
	var last time.Duration
	disorder := 0
	_, err := replay(t, clk, cfg, audio.VirtualConfig{Source: src, NoRecording: true, Stall: 10 * time.Second},
		func(e pipeline.Event) {
			if e.At < last {
				disorder++
			}
			last = e.At
			counts[e.Type]++
			if e.Type == pipeline.EvTurnCommit {
				switch counts[e.Type] {
				case 150:
					measure(0)
				case 1650:
					measure(1)
				}
			}
		})
	require.NoError(t, err)
	t.Logf("events: %v; heap %d KiB -> %d KiB; goroutines %d -> %d", counts, heap[0]>>10, heap[1]>>10, goroutines[0], goroutines[1])
	assert.Equal(t, len(replies), counts[pipeline.EvTurnCommit], "every question and every interruption answered")
	assert.Zero(t, disorder, "events out of time order")
	assert.Equal(t, (cycles+1)/3, counts[pipeline.EvBargeInResumed])
	assert.GreaterOrEqual(t, counts[pipeline.EvBargeIn], (cycles+2)/3)
	assert.Zero(t, counts[pipeline.EvError])
	// Give or take the two goroutines of a response winding down.
	assert.LessOrEqual(t, goroutines[1], goroutines[0]+2, "goroutines")
	assert.Less(t, int64(heap[1])-int64(heap[0]), int64(8<<20), "heap growth")
}

// The stop key (Config.Interrupt) cuts the reply at once, as a barge-in
// that needs no speech: what was heard is remembered as interrupted, the
// speaker goes quiet, and the next question is answered with that history.
// A stop with no reply under way does nothing.
func TestStopKeyCutsTheReply(t *testing.T) {
	const pressed = 4 * time.Second
	s := scenario{
		length: 30 * time.Second,
		user: []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: "tell me a long story"},
			{Start: 20 * time.Second, End: 21 * time.Second, Text: "thanks"},
		},
		replies:   []string{strings.Repeat(story+" ", 4), "You are welcome."},
		stopKeyAt: []time.Duration{200 * time.Millisecond, pressed, 10 * time.Second},
	}
	var gen *standin.ScriptedLLM
	s.tune = func(c *pipeline.Config) { gen = c.LLM.(*standin.ScriptedLLM) }
	o := s.run(t)

	barge := o.of(pipeline.EvBargeIn)
	require.Len(t, barge, 1, "only the press during the reply stops anything")
	assert.Equal(t, pipeline.ReasonStopKey, barge[0].Reason)
	assert.Equal(t, 1, barge[0].Turn)
	assert.Equal(t, pressed, barge[0].At, "at the press, on the replay clock")
	heard := barge[0].Text
	assert.NotEmpty(t, heard)
	assert.True(t, strings.HasPrefix(story, heard), "heard %q", heard)
	assert.Less(t, len(heard), len(story), "the reply was cut early")
	assert.Less(t, o.soundingFor(pressed+50*time.Millisecond, 20*time.Second), time.Millisecond, "quiet after the stop")

	assert.Equal(t, []string{"tell me a long story", "thanks"}, texts(o.of(pipeline.EvTurnCommit)))
	convs := gen.Conversations()
	assert.Equal(t, []llm.Message{
		{Role: llm.System, Content: "You are a helpful assistant."},
		{Role: llm.User, Content: "tell me a long story"},
		{Role: llm.Assistant, Content: heard, Interrupted: true},
		{Role: llm.User, Content: "thanks"},
	}, convs[len(convs)-1])
	assert.Greater(t, o.soundingFor(21*time.Second, 30*time.Second), 500*time.Millisecond, "the second reply is heard")
}
