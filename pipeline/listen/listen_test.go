package listen_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/listen"
	"github.com/voiceassistant/voice/standin"
	"github.com/voiceassistant/voice/turn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session drives a listening side as the pipeline does, frame by frame,
// over stand-in speech (an energy VAD, a scripted recognizer), and keeps
// what it answered and published. A turn is committed as soon as it is
// final, as with no speculative reply.
type session struct {
	l       *listen.Listener
	clk     *clock.Stream
	history *llm.History
	events  []event.Event
	changes []listen.Change
	turns   []listen.Turn
	// onOpen is called when speech opens a turn, as the pipeline weighs
	// speech over a reply.
	onOpen func(l *listen.Listener)
}

func newSession(said []standin.Utterance, tune func(*listen.Config)) *session {
	s := &session{clk: clock.NewStream(16000), history: llm.NewHistory("", 0)}
	cfg := listen.Config{
		Clock: s.clk, History: s.history, Report: func(err error) { panic(err) },
		Stages:   listen.Stages{VAD: standin.NewEnergyVAD(), ASR: &standin.ScriptedASR{Script: said}},
		Emit:     func(e event.Event) { s.events = append(s.events, e) },
		Endpoint: turn.DefaultConfig(), PreRoll: 700 * time.Millisecond, TurnWindow: 8 * time.Second,
		Continue: listen.Continuation{Window: 1500 * time.Millisecond, MaxHeard: 300 * time.Millisecond},
	}
	if tune != nil {
		tune(&cfg)
	}
	s.l = listen.New(cfg)
	return s
}

// run feeds pcm from stream position from on.
func (s *session) run(t *testing.T, pcm []float32, from time.Duration) {
	t.Helper()
	const n = 160 // 10 ms frames
	for pos := int(audio.Mono16k.Samples(from)); pos+n <= len(pcm); pos += n {
		s.clk.Advance(n)
		f := audio.Frame{Format: audio.Mono16k, Pos: int64(pos), Samples: pcm[pos : pos+n]}
		heard, err := s.l.Hear(f, false)
		require.NoError(t, err)
		for _, ev := range heard.Events {
			change, err := s.l.Boundary(ev, f.Pos)
			require.NoError(t, err)
			s.changes = append(s.changes, change)
			if change == listen.TurnOpened && s.onOpen != nil {
				s.onOpen(s.l)
			}
		}
		if !s.l.Open() {
			continue
		}
		heeded, err := s.l.Listen(f, heard)
		require.NoError(t, err)
		if heeded != listen.TurnHeard && heeded != listen.TurnWoken {
			continue
		}
		fin, err := s.l.Decide(context.Background(), f.Stop())
		require.NoError(t, err)
		if fin != nil {
			if turn, ok := s.l.Commit(fin, fin.Sentence); ok {
				s.turns = append(s.turns, turn)
			}
		}
	}
}

func (s *session) texts(typ event.EventType) []string {
	var out []string
	for _, e := range s.events {
		if e.Type == typ {
			out = append(out, e.Text)
		}
	}
	return out
}

var languages = []struct{ first, second, whole string }{
	{"can you tell me", "about the weather", "can you tell me about the weather"},
	{"请告诉我", "明天的天气", "请告诉我明天的天气"},
}

// A turn heard through the listening side's API alone: speech opens it,
// its end pauses it, the endpointing policy ends it with its final
// transcript, and the commit publishes it and writes it to the history;
// in English and Chinese.
func TestListenerCommitsATurn(t *testing.T) {
	for _, lang := range languages {
		said := []standin.Utterance{{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: lang.first}}
		s := newSession(said, nil)
		s.run(t, standin.Voice(3*time.Second, said...), 0)
		assert.Equal(t, []listen.Change{listen.TurnOpened, listen.SpeechPaused}, s.changes)
		require.Len(t, s.turns, 1)
		assert.Equal(t, 1, s.turns[0].Number)
		assert.Equal(t, []string{lang.first}, s.texts(event.EvTurnCommit))
		assert.Equal(t, []llm.Message{{Role: llm.User, Content: lang.first}}, s.history.Messages())
		assert.False(t, s.l.Open())
	}
}

// Speech soon after a commit, once the session has confirmed it over the
// reply and dropped that reply, continues the turn: committed again as
// the same turn, with the whole sentence, once in the history. Begun
// after the reply was heard for longer than MaxHeard, it is a turn of its
// own. In English and Chinese.
func TestListenerContinuesATurn(t *testing.T) {
	for _, lang := range languages {
		for _, tc := range []struct {
			name      string
			heardAt   time.Duration // when the reply to the first commit started playing
			continues bool
		}{
			{"unheard", 0, true},
			{"heard long", 2300 * time.Millisecond, false},
		} {
			t.Run(lang.whole+" "+tc.name, func(t *testing.T) {
				said := []standin.Utterance{
					{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: lang.first},
					{Start: 2800 * time.Millisecond, End: 3800 * time.Millisecond, Text: lang.second},
				}
				s := newSession(said, nil)
				s.onOpen = func(l *listen.Listener) {
					if l.NextTurn() == 2 && tc.heardAt == 0 && l.Continues() {
						l.Continue()
					}
				}
				pcm := standin.Voice(6*time.Second, said...)
				s.run(t, pcm[:audio.Mono16k.Samples(2700*time.Millisecond)], 0)
				require.Len(t, s.turns, 1, "the first piece committed on its own")
				if tc.heardAt > 0 {
					s.l.ReplyStarted(tc.heardAt)
				}
				s.run(t, pcm, 2700*time.Millisecond)
				require.Len(t, s.turns, 2)
				if !tc.continues {
					assert.Equal(t, 2, s.turns[1].Number)
					assert.Empty(t, s.texts(event.EvTurnContinued))
					assert.Equal(t, []string{lang.first, lang.second}, s.texts(event.EvTurnCommit))
					return
				}
				assert.Equal(t, 1, s.turns[1].Number, "the same turn, committed again")
				assert.Equal(t, []string{lang.first}, s.texts(event.EvTurnContinued))
				assert.Equal(t, []string{lang.first, lang.whole}, s.texts(event.EvTurnCommit))
				assert.Equal(t, []llm.Message{{Role: llm.User, Content: lang.whole}}, s.history.Messages())
			})
		}
	}
}

// Speech without words (a cough) is no turn: the commit says so, and the
// listening side is idle again.
func TestListenerSpeechWithoutWords(t *testing.T) {
	said := []standin.Utterance{{Start: 500 * time.Millisecond, End: 1000 * time.Millisecond}}
	s := newSession(said, nil)
	s.run(t, standin.Voice(3*time.Second, said...), 0)
	assert.Empty(t, s.turns)
	assert.Empty(t, s.texts(event.EvTurnCommit))
	assert.Equal(t, []string{""}, s.texts(event.EvFinal))
	assert.Equal(t, 1, s.l.NextTurn())
	assert.Empty(t, s.history.Messages())
}

// In a push session speech opens no turn, whoever feeds the VAD: only the
// talk button does, with the audio from before the press as pre-roll, and
// its release ends the turn with what was said; in English and Chinese.
func TestListenerPushToTalk(t *testing.T) {
	for _, lang := range languages {
		said := []standin.Utterance{
			{Start: 500 * time.Millisecond, End: 1500 * time.Millisecond, Text: lang.first},
			{Start: 2 * time.Second, End: 3 * time.Second, Text: lang.second},
		}
		s := newSession(said, func(c *listen.Config) { c.Activation.Mode = listen.ActivatePush })
		pcm := standin.Voice(4*time.Second, said...)
		s.run(t, pcm[:audio.Mono16k.Samples(2100*time.Millisecond)], 0)
		assert.NotContains(t, s.changes, listen.TurnOpened, "speech alone opens no turn")
		assert.False(t, s.l.Open())
		opened, err := s.l.TalkStart()
		require.NoError(t, err)
		require.True(t, opened)
		s.run(t, pcm[:audio.Mono16k.Samples(3200*time.Millisecond)], 2100*time.Millisecond)
		assert.Empty(t, s.turns, "the turn goes on while the button is down")
		fin, err := s.l.TalkStop()
		require.NoError(t, err)
		require.NotNil(t, fin)
		assert.Equal(t, listen.ReasonTalkStop, fin.Reason)
		assert.Equal(t, lang.second, fin.Words, "the first word, said before the press, kept")
	}
}
