package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/tts/normalize"
)

// role is what a response is to the pipeline.
type role int

const (
	// roleSpeculative answers a turn not yet committed: its events are
	// held and its audio waits (speculate.go).
	roleSpeculative role = iota + 1
	// roleCurrent is the response to the last committed turn, published
	// and played.
	roleCurrent
	// roleCancelled was current and was cut (a barge-in, the session's
	// end): it is winding down, and its end is still published.
	roleCancelled
	// roleDropped was speculative and missed: it is winding down, and
	// nothing of it is published.
	roleDropped
)

// response is one assistant turn: generation feeding synthesis feeding the
// player, all under one context that barge-in cancels.
type response struct {
	turn   int
	cancel context.CancelFunc

	mu      sync.Mutex
	metrics *TurnMetrics
	reply   strings.Builder
	spoken  []spokenChunk
	// words is the reply's chunker, for its Join and Source, which keep
	// no state (the chunker itself is generation's).
	words   Chunker
	stats   llm.Stats
	compute StageCompute // generation and synthesis
	err     error

	// ended is set by Run's goroutine when the response's goroutines are
	// gone.
	ended bool

	// role is under mu: the response's goroutines read it to hold or
	// publish their events.
	role role
	// A speculative response (see speculate.go) answers transcript before
	// its turn is committed: until then its events are held and its audio
	// waits for gate, which openGate ends.
	transcript string
	committed  time.Duration // when its turn was committed (under mu)
	held       []Event
	gate       context.Context
	openGate   context.CancelFunc

	// lang is the language of the reply's latest words, the
	// conversation's before it has any (the synthesis goroutine's own):
	// it reads what has no words near it.
	lang normalize.Language
}

// spokenChunk is a chunk of reply text and where its audio sits in the
// player's queue.
type spokenChunk struct {
	text       string
	start, end uint64
}

// startResponse starts the response to conv as turn number turn. With a
// transcript it is a speculative response to that transcript, which
// holds its events and audio back until adoptSpeculation.
func (p *Pipeline) startResponse(m TurnMetrics, conv []llm.Message, turn int, transcript string) *response {
	p.stopPrefillAhead(false)
	ctx, cancel := context.WithCancel(p.ctx)
	m.LLMStart = p.now()
	r := &response{turn: turn, cancel: cancel, metrics: &m, transcript: transcript, role: roleCurrent,
		lang: conversationLanguage(conv)}
	if transcript != "" {
		r.role = roleSpeculative
		r.gate, r.openGate = context.WithCancel(ctx)
	}
	chunks := newChunkQueue(p.clk)

	// Holds follow runnable work: each of the two goroutines holds one
	// while it runs and gives it back while it waits, on the clock or (for
	// synthesis) for the next chunk. The goroutine that finishes last
	// passes its hold to Run with the done message, so the response ends at
	// a definite audio time.
	var remaining atomic.Int32
	remaining.Store(2)
	var once sync.Once
	finish := func(err error) {
		if err != nil {
			once.Do(func() {
				r.mu.Lock()
				r.err = err
				r.mu.Unlock()
				cancel()
			})
		}
		if remaining.Add(-1) > 0 {
			p.clk.Release()
			return
		}
		cancel()
		p.done <- r
	}
	p.clk.Hold()
	go func() {
		// The listening path may still be catching up with its compute:
		// the decision to respond is only made then.
		err := p.catchUp(ctx, m.LLMStart)
		if err == nil {
			err = p.generate(ctx, r, conv, chunks)
		}
		chunks.close()
		finish(err)
	}()
	p.clk.Hold()
	go func() { finish(p.synthesize(ctx, r, chunks)) }()
	return r
}

func (p *Pipeline) generate(ctx context.Context, r *response, conv []llm.Message, chunks *chunkQueue) error {
	chunker := p.cfg.NewChunker()
	r.mu.Lock()
	r.words = chunker
	r.mu.Unlock()
	send := func(texts []string) error {
		for _, c := range texts {
			chunks.push(c)
		}
		return ctx.Err()
	}
	compute := p.newMeter(r, stageLLM)
	stats, err := p.cfg.LLM.Generate(ctx, conv, func(piece string) error {
		defer compute.resume()
		if err := compute.handOver(ctx); err != nil {
			return err
		}
		now := p.clk.Now()
		r.mu.Lock()
		if r.metrics.FirstToken == 0 {
			r.metrics.FirstToken = now
		}
		r.reply.WriteString(piece)
		r.mu.Unlock()
		p.respond(r, Event{Type: EvLLMPiece, At: now, Turn: r.turn, Text: piece})
		return send(chunker.Push(piece))
	})
	r.mu.Lock()
	r.stats = stats
	r.mu.Unlock()
	if err != nil {
		return err
	}
	return send(chunker.Flush())
}

func (p *Pipeline) synthesize(ctx context.Context, r *response, chunks *chunkQueue) error {
	for {
		text, ok := chunks.pop()
		if !ok {
			break
		}
		if err := p.speak(ctx, r, text); err != nil {
			return err
		}
	}
	if ctx.Err() == nil {
		// A cancelled reply was flushed already, and a newer one may be
		// queueing by now.
		p.player.EndOfReply()
	}
	return ctx.Err()
}

// chunkQueue hands text chunks from generation to synthesis. It never
// blocks the producer (generation must not wait on synthesis, which may
// itself be waiting for the player to drain as time passes), and it keeps
// the consumer's clock hold honest: released while it waits for a chunk,
// taken back on its behalf by whoever wakes it.
type chunkQueue struct {
	clk     clock.Clock
	mu      sync.Mutex
	items   []string
	closed  bool
	waiting bool
	wake    chan struct{}
}

func newChunkQueue(clk clock.Clock) *chunkQueue {
	return &chunkQueue{clk: clk, wake: make(chan struct{}, 1)}
}

func (q *chunkQueue) push(text string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, text)
	q.wakeLocked()
}

func (q *chunkQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.wakeLocked()
}

func (q *chunkQueue) wakeLocked() {
	if q.waiting {
		q.waiting = false
		q.clk.Hold()
		q.wake <- struct{}{}
	}
}

// pop returns the next chunk, waiting for one; false once the queue is
// closed and empty.
func (q *chunkQueue) pop() (string, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			text := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return text, true
		}
		if q.closed {
			q.mu.Unlock()
			return "", false
		}
		q.waiting = true
		q.mu.Unlock()
		q.clk.Release()
		<-q.wake
	}
}

// speak synthesizes one chunk into the player, or records it as text when
// there is no synthesizer.
func (p *Pipeline) speak(ctx context.Context, r *response, text string) error {
	p.respond(r, Event{Type: EvTTSChunk, At: p.clk.Now(), Turn: r.turn, Text: text})
	if p.cfg.TTS == nil {
		r.mu.Lock()
		r.spoken = append(r.spoken, spokenChunk{text: text})
		r.mu.Unlock()
		return nil
	}
	conv, err := audio.NewConverter(p.cfg.TTS.Format(), p.player.Format())
	if err != nil {
		return err
	}
	// The chunk is on record from its first sample, and its end moves as
	// audio is queued (in short pieces, since a long chunk can take longer
	// than the player holds), so playback start and the heard text are
	// known while it is still being synthesized.
	idx := -1
	piece := int(p.player.Format().Samples(100*time.Millisecond)) * p.player.Format().Channels
	write := func(samples []float32) error {
		if err := p.awaitCommit(ctx, r); err != nil {
			return err
		}
		for len(samples) > 0 {
			n := min(len(samples), piece)
			start := p.player.Written()
			_, end, err := p.player.Write(ctx, samples[:n])
			r.mu.Lock()
			if idx < 0 {
				idx = len(r.spoken)
				r.spoken = append(r.spoken, spokenChunk{text: text, start: start})
			}
			r.spoken[idx].end = end
			r.mu.Unlock()
			if err != nil {
				return err
			}
			samples = samples[n:]
		}
		return nil
	}
	if lang := normalize.Detect(text); lang != normalize.LangUnknown {
		r.lang = lang
	}
	compute := p.newMeter(r, stageTTS)
	err = p.cfg.TTS.Synthesize(ctx, text, r.lang, func(samples []float32) error {
		defer compute.resume()
		if err := compute.handOver(ctx); err != nil {
			return err
		}
		now := p.clk.Now()
		r.mu.Lock()
		if r.metrics.FirstAudio == 0 {
			r.metrics.FirstAudio = now
		}
		r.mu.Unlock()
		return write(conv.Process(samples))
	})
	if err == nil {
		err = write(conv.Flush())
	}
	return err
}

// failed says whether the response ended (or is ending) on an error of
// its own, not a cancellation.
func (r *response) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err != nil && !errors.Is(r.err, context.Canceled)
}

// roleNow is the response's role.
func (r *response) roleNow() role {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.role
}

// cast changes the response's role.
func (r *response) cast(to role) {
	r.mu.Lock()
	r.role = to
	r.mu.Unlock()
}

func (r *response) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reply.String()
}

// span is the queue range of the response's audio so far.
func (r *response) span() (first, end uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.spoken) == 0 || r.spoken[0].end == r.spoken[0].start {
		return 0, 0, false
	}
	return r.spoken[0].start, r.spoken[len(r.spoken)-1].end, true
}

// heard is what the user heard of the reply up to queue position pos:
// spoken, the words played (whole chunks, and the played share of the
// words of the chunk cut off), and written, the same words as the model
// wrote them, markup and spacing included, for the history. An engine
// that keeps its KV cache across replies holds the written tokens, so
// only the written words keep that cache valid up to the cut; written is
// spoken when no start of the reply says exactly those words.
func (r *response) heard(pos uint64) (spoken, written string) {
	r.mu.Lock()
	var parts []string
	for _, c := range r.spoken {
		if c.end <= pos {
			parts = append(parts, c.text)
			continue
		}
		if c.start < pos {
			parts = append(parts, leading(c.text, float64(pos-c.start)/float64(c.end-c.start)))
		}
		break
	}
	words, reply := r.words, r.reply.String()
	r.mu.Unlock()
	if words == nil {
		return "", ""
	}
	spoken = strings.TrimSpace(words.Join(parts))
	if written, ok := words.Source(reply, spoken); ok {
		return spoken, written
	}
	return spoken, spoken
}

// leading is the first share of text's words, or of its characters for
// text written without spaces (Chinese).
func leading(text string, share float64) string {
	words := strings.FieldsFunc(text, unicode.IsSpace)
	if len(words) == 1 {
		runes := []rune(text)
		return string(runes[:int(float64(len(runes))*share)])
	}
	return strings.Join(words[:int(float64(len(words))*share)], " ")
}

// conversationLanguage is the language of conv's latest message that has
// words, LangUnknown when none has.
func conversationLanguage(conv []llm.Message) normalize.Language {
	for i := len(conv) - 1; i >= 0; i-- {
		if l := normalize.Detect(conv[i].Content); l != normalize.LangUnknown {
			return l
		}
	}
	return normalize.LangUnknown
}
