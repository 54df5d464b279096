package reply_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/pipeline/reply"
	"github.com/voiceassistant/voice/tts/chunk"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pieces is a generator that says its words, one piece each.
type pieces []string

func (p pieces) Generate(ctx context.Context, _ []llm.Message, emit func(string) error) (llm.Stats, error) {
	for _, w := range p {
		if err := emit(w); err != nil {
			return llm.Stats{}, err
		}
	}
	return llm.Stats{GeneratedTokens: len(p)}, ctx.Err()
}

// session is a text-only reply session on the live clock, recording what
// replies publish.
type session struct {
	reply.Session
	mu     sync.Mutex
	events []event.Event
	ended  chan *reply.Reply
}

func newSession(words ...string) *session {
	clk := clock.NewStream(16000)
	s := &session{ended: make(chan *reply.Reply, 1)}
	s.Session = reply.Session{
		Clock: clk, Player: audio.NewPlayer(audio.Format{Rate: 16000, Channels: 1}, time.Second, clk),
		LLM: pieces(words), NewChunker: func() reply.Chunker { return chunk.New(chunk.DefaultConfig()) },
		Emit:   s.emit,
		Report: func(err error) { panic(err) },
		Ended:  s.ended,
	}
	return s
}

func (s *session) emit(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *session) types() []event.EventType {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []event.EventType
	for _, e := range s.events {
		out = append(out, e.Type)
	}
	return out
}

var conv = []llm.Message{{Role: "user", Content: "how are you"}}

// A speculative reply publishes nothing until it is adopted; then what it
// held goes out after the hit, and once played out it is done and the
// history keeps all of it.
func TestSpeculativeReplyHoldsItsEventsUntilAdopted(t *testing.T) {
	s := newSession("Fine,", " thanks.")
	r := reply.Speculate(context.Background(), &s.Session, 1, conv, "how are you", 0)
	assert.Same(t, r, <-s.ended, "its goroutines end before the commit: it has no audio to wait with")
	assert.Equal(t, reply.Speculative, r.Gone())
	assert.Empty(t, s.types(), "held while speculative")

	r.Adopt(event.TurnMetrics{Commit: time.Second, ASRFinal: time.Second})
	assert.True(t, r.Is(reply.Current))
	assert.Equal(t, []event.EventType{event.EvSpeculationHit, event.EvLLMPiece, event.EvLLMPiece, event.EvTTSChunk}, s.types())
	assert.Equal(t, reply.Current, r.Gone())
	_, _, ok := r.PlayedOut()
	require.True(t, ok, "a reply without audio is over once its goroutines are")
	assert.True(t, r.Is(reply.Done))
	text, interrupted := r.Said()
	assert.Equal(t, "Fine, thanks.", text)
	assert.False(t, interrupted)
	m := r.Metrics()
	assert.True(t, m.Speculated)
	assert.Equal(t, []string{"Fine, thanks."}, chunkTexts(m.Chunks))
}

// A dropped speculative reply publishes its miss and nothing else, in
// English and in Chinese.
func TestDroppedReplyPublishesOnlyItsMiss(t *testing.T) {
	for _, words := range [][]string{{"Fine,", " thanks."}, {"我很好，", "谢谢。"}} {
		s := newSession(words...)
		r := reply.Speculate(context.Background(), &s.Session, 1, conv, strings.Join(words, ""), 0)
		<-s.ended
		r.Drop(reply.MissSpeechResumed)
		assert.Equal(t, reply.Dropped, r.Gone())
		assert.Equal(t, []event.EventType{event.EvSpeculationMiss}, s.types(), "%q", words)
	}
}

// A move its table does not allow is a bug: in a test it panics where it
// happens (fsm.Machine), so a reply cannot be interrupted before it is
// the current one, nor adopted twice.
func TestIllegalMovesPanic(t *testing.T) {
	s := newSession("Fine.")
	r := reply.Speculate(context.Background(), &s.Session, 1, conv, "how are you", 0)
	<-s.ended
	assert.Panics(t, func() { r.Interrupt() })
	r.Adopt(event.TurnMetrics{})
	assert.Panics(t, func() { r.Adopt(event.TurnMetrics{}) })
}

func chunkTexts(spans []event.ChunkSpan) []string {
	var out []string
	for _, c := range spans {
		out = append(out, c.Text)
	}
	return out
}
