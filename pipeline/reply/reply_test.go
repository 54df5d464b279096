package reply_test

import (
	"context"
	"encoding/json"
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
	reply.Config
	mu     sync.Mutex
	events []event.Event
	ended  chan *reply.Reply
}

func newSession(words ...string) *session {
	clk := clock.NewStream(16000)
	s := &session{ended: make(chan *reply.Reply, 1)}
	s.Config = reply.Config{
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

// states are the reply states published, in order.
func (s *session) states() []reply.State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []reply.State
	for _, e := range s.events {
		if e.Type == event.EvReplyState {
			out = append(out, e.Reply)
		}
	}
	return out
}

var conv = []llm.Message{{Role: "user", Content: "how are you"}}

// A speculative reply publishes nothing but its state until it is
// adopted; then what it held goes out after the hit, and once played out
// it is done and the history keeps all of it.
func TestSpeculativeReplyHoldsItsEventsUntilAdopted(t *testing.T) {
	s := newSession("Fine,", " thanks.")
	r := reply.Speculate(context.Background(), &s.Config, 1, conv, "how are you", 0)
	assert.Same(t, r, <-s.ended, "its goroutines end before the commit: it has no audio to wait with")
	assert.Equal(t, []event.EventType{event.EvReplyState}, s.types(), "held while speculative")

	r.Adopt(event.TurnMetrics{Commit: time.Second, ASRFinal: time.Second})
	assert.Equal(t, []event.EventType{event.EvReplyState, event.EvReplyState, event.EvSpeculationHit,
		event.EvLLMPiece, event.EvLLMPiece, event.EvTTSChunk, event.EvLLMDone}, s.types())
	_, _, ok := r.PlayedOut()
	require.True(t, ok, "a reply without audio is over once its goroutines are")
	assert.Equal(t, []reply.State{reply.Speculative, reply.Current, reply.Done}, s.states())
	text, interrupted := r.Said()
	assert.Equal(t, "Fine, thanks.", text)
	assert.False(t, interrupted)
	m := r.Metrics()
	assert.True(t, m.Speculated)
	assert.Equal(t, []string{"Fine, thanks."}, chunkTexts(m.Chunks))
}

// A dropped speculative reply publishes its miss and its states, nothing
// of what it said, in English and in Chinese.
func TestDroppedReplyPublishesOnlyItsMiss(t *testing.T) {
	for _, words := range [][]string{{"Fine,", " thanks."}, {"我很好，", "谢谢。"}} {
		s := newSession(words...)
		r := reply.Speculate(context.Background(), &s.Config, 1, conv, strings.Join(words, ""), 0)
		<-s.ended
		r.Drop(reply.MissSpeechResumed)
		assert.Equal(t, []event.EventType{event.EvReplyState, event.EvReplyState, event.EvSpeculationMiss}, s.types(), "%q", words)
		assert.Equal(t, []reply.State{reply.Speculative, reply.Dropped}, s.states())
	}
}

// waiting is a generator that says its words, then waits to be cancelled:
// a reply still being generated.
type waiting []string

func (w waiting) Generate(ctx context.Context, _ []llm.Message, emit func(string) error) (llm.Stats, error) {
	for _, p := range w {
		if err := emit(p); err != nil {
			return llm.Stats{}, err
		}
	}
	<-ctx.Done()
	return llm.Stats{}, ctx.Err()
}

// A current reply the user went on from (a continuation) is dropped:
// after its dropped state nothing of it is published, not even its end,
// and the session is not handed it to play out; in English and Chinese.
func TestCurrentReplyDroppedPublishesNothingAfter(t *testing.T) {
	for _, words := range [][]string{{"The weather", " is"}, {"天气", "是"}} {
		s := newSession()
		s.LLM = waiting(words)
		r := reply.Start(context.Background(), &s.Config, 1, conv, event.TurnMetrics{})
		require.Eventually(t, func() bool { return len(s.types()) >= 1+len(words) }, 5*time.Second, time.Millisecond)
		r.Drop(reply.DropContinued)
		<-r.Done()
		types := s.types()
		assert.Equal(t, event.EvReplyState, types[len(types)-1], "%q: the drop is the last it publishes: %v", words, types)
		assert.Equal(t, []reply.State{reply.Current, reply.Dropped}, s.states())
		assert.NotContains(t, types, event.EvLLMDone)
		assert.Empty(t, s.ended, "a dropped reply is nobody's to play out")
		s.Wait()
	}
}

// Cutting a reply is idempotent: a second Interrupt, or a Drop after it,
// leaves it cancelled and publishes nothing more; a speculative reply is
// not cut at all (the stop key leaves an unheard reply alone).
func TestInterruptIsIdempotent(t *testing.T) {
	s := newSession()
	s.LLM = waiting{"Fine,"}
	r := reply.Start(context.Background(), &s.Config, 1, conv, event.TurnMetrics{})
	r.Interrupt(reply.CutBargeIn)
	r.Interrupt(reply.CutStopKey)
	r.Drop(reply.DropContinued)
	<-r.Done()
	s.Wait()
	assert.Equal(t, []reply.State{reply.Current, reply.Cancelled}, s.states())
	assert.Contains(t, s.types(), event.EvLLMDone, "a cancelled reply's end is published")

	spec := newSession("Fine.")
	sr := reply.Speculate(context.Background(), &spec.Config, 1, conv, "how are you", 0)
	<-spec.ended
	spoken, written := sr.Interrupt(reply.CutStopKey)
	assert.Empty(t, spoken+written)
	assert.Equal(t, []reply.State{reply.Speculative}, spec.states())
	sr.Drop(reply.MissSessionEnd)
}

// A move its table does not allow is a bug, reported where it happens
// (fsm.Machine): a reply is not adopted twice.
func TestIllegalMovesAreReported(t *testing.T) {
	s := newSession("Fine.")
	var reported []error
	s.Report = func(err error) { reported = append(reported, err) }
	r := reply.Speculate(context.Background(), &s.Config, 1, conv, "how are you", 0)
	<-s.ended
	r.Adopt(event.TurnMetrics{})
	require.Empty(t, reported)
	r.Adopt(event.TurnMetrics{})
	require.Len(t, reported, 1)
	assert.ErrorContains(t, reported[0], "no transition from current to current")
	assert.Equal(t, []reply.State{reply.Speculative, reply.Current}, s.states())
}

func chunkTexts(spans []event.ChunkSpan) []string {
	var out []string
	for _, c := range spans {
		out = append(out, c.Text)
	}
	return out
}

// toolFunc is a function as a reply.Toolbox.
type toolFunc func(ctx context.Context, name string, args json.RawMessage) (string, error)

func (f toolFunc) Call(ctx context.Context, name string, args json.RawMessage) (string, error) {
	return f(ctx, name, args)
}

// A tool that does not stop when its reply is cut is left to end on its
// own, after a grace: the reply ends, and the session's end (Wait) does
// not wait on the tool.
func TestCutReplyLeavesAToolThatDoesNotStop(t *testing.T) {
	s := newSession(`<tool_call>{"name": "take_photo", "arguments": {}}</tool_call>`)
	called, stuck := make(chan struct{}), make(chan struct{})
	defer close(stuck)
	s.Tools = toolFunc(func(context.Context, string, json.RawMessage) (string, error) {
		close(called)
		<-stuck // deaf to its context
		return "photo.jpg", nil
	})
	r := reply.Start(context.Background(), &s.Config, 1, conv, event.TurnMetrics{})
	<-called
	r.Interrupt(reply.CutBargeIn)
	ended := make(chan struct{})
	go func() {
		s.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the reply waits on a tool that does not stop")
	}
	assert.Equal(t, []reply.State{reply.Current, reply.Cancelled}, s.states())
	text, _ := r.Said()
	assert.Empty(t, text, "nothing of the tool's result")
}
