package reply

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/clock"
	"github.com/voiceassistant/voice/llm"
	"github.com/voiceassistant/voice/pipeline/compute"
	"github.com/voiceassistant/voice/pipeline/event"
	"github.com/voiceassistant/voice/tts/normalize"
)

// spokenChunk is a chunk of reply text and where its audio sits in the
// player's queue.
type spokenChunk struct {
	text       string
	start, end uint64
	aside      bool // queued.aside
}

// run starts the reply's two goroutines under a context of its own.
func (r *Reply) run(parent context.Context, conv []llm.Message) {
	ctx, cancel := context.WithCancel(parent)
	r.cancel = cancel
	if r.state == Speculative {
		r.gate, r.openGate = context.WithCancel(ctx)
	}
	// The stages charge their compute to the reply (pipeline.New wraps
	// them with the session's charger).
	ctx = compute.WithAccount(ctx, r)
	chunks := newChunkQueue(r.s.Clock)

	// Holds follow runnable work: each of the two goroutines holds one
	// while it runs and gives it back while it waits, on the clock or (for
	// synthesis) for the next chunk. The goroutine that finishes last
	// passes its hold on with the reply (Config.Ended), so the reply ends
	// at a definite audio time.
	var remaining atomic.Int32
	remaining.Store(2)
	start := r.metrics.LLMStart
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
			r.s.Clock.Release()
			return
		}
		cancel()
		r.ended()
	}
	r.s.running.Add(1)
	r.s.Clock.Hold()
	go func() {
		// The listening path may still be catching up with its compute:
		// the decision to respond is only made then.
		err := compute.CatchUp(ctx, r.s.Clock, start)
		if err == nil {
			err = r.generate(ctx, conv, chunks)
		}
		chunks.close()
		finish(err)
	}()
	r.s.Clock.Hold()
	go func() { finish(r.synthesize(ctx, chunks)) }()
}

func (r *Reply) generate(ctx context.Context, conv []llm.Message, chunks *chunkQueue) error {
	chunker := r.s.NewChunker()
	r.mu.Lock()
	r.words = chunker
	r.mu.Unlock()
	send := func(texts []string) error {
		for _, c := range texts {
			chunks.push(queued{text: c})
		}
		return ctx.Err()
	}
	say := func(text string) error {
		now := r.s.Clock.Now()
		r.mu.Lock()
		if r.metrics.FirstToken == 0 {
			r.metrics.FirstToken = now
		}
		r.reply.WriteString(text)
		r.mu.Unlock()
		r.respond(event.Event{Type: event.EvLLMPiece, At: now, Turn: r.turn, Text: text})
		return send(chunker.Push(text))
	}
	if r.s.Tools == nil || r.announced {
		stats, err := r.gen.Generate(ctx, conv, say)
		r.mu.Lock()
		r.stats = stats
		r.mu.Unlock()
		if err != nil {
			return err
		}
		return send(chunker.Flush())
	}
	return r.converse(ctx, conv, say, func() error { return send(chunker.Flush()) }, chunks)
}

func (r *Reply) synthesize(ctx context.Context, chunks *chunkQueue) error {
	for {
		c, ok := chunks.pop()
		if !ok {
			break
		}
		if err := r.speak(ctx, c); err != nil {
			return err
		}
	}
	if ctx.Err() == nil {
		// A cancelled reply was flushed already, and a newer one may be
		// queueing by now.
		r.s.Player.EndOfReply()
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
	items   []queued
	closed  bool
	waiting bool
	wake    chan struct{}
}

func newChunkQueue(clk clock.Clock) *chunkQueue {
	return &chunkQueue{clk: clk, wake: make(chan struct{}, 1)}
}

// queued is a chunk to speak; an aside (the acknowledgement while a tool
// runs) is no words of the reply's, and the history leaves it out.
type queued struct {
	text  string
	aside bool
}

func (q *chunkQueue) push(c queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, c)
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
func (q *chunkQueue) pop() (queued, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			c := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return c, true
		}
		if q.closed {
			q.mu.Unlock()
			return queued{}, false
		}
		q.waiting = true
		q.mu.Unlock()
		q.clk.Release()
		<-q.wake
	}
}

// speak synthesizes one chunk into the player, or records it as text when
// there is no synthesizer.
func (r *Reply) speak(ctx context.Context, c queued) error {
	text := c.text
	r.respond(event.Event{Type: event.EvTTSChunk, At: r.s.Clock.Now(), Turn: r.turn, Text: text})
	tts, player := r.s.TTS, r.s.Player
	if tts == nil {
		r.mu.Lock()
		r.spoken = append(r.spoken, spokenChunk{text: text, aside: c.aside})
		r.mu.Unlock()
		return nil
	}
	conv, err := audio.NewConverter(tts.Format(), player.Format())
	if err != nil {
		return err
	}
	// The chunk is on record from its first sample, and its end moves as
	// audio is queued (in short pieces, since a long chunk can take longer
	// than the player holds), so playback start and the heard text are
	// known while it is still being synthesized.
	idx := -1
	piece := int(player.Format().Samples(100*time.Millisecond)) * player.Format().Channels
	write := func(samples []float32) error {
		if err := r.awaitCommit(ctx); err != nil {
			return err
		}
		for len(samples) > 0 {
			n := min(len(samples), piece)
			start := player.Written()
			_, end, err := player.Write(ctx, samples[:n])
			r.mu.Lock()
			if idx < 0 {
				idx = len(r.spoken)
				r.spoken = append(r.spoken, spokenChunk{text: text, start: start, aside: c.aside})
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
	err = tts.Synthesize(ctx, text, r.lang, func(samples []float32) error {
		now := r.s.Clock.Now()
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

// span is the queue range of the response's audio so far.
func (r *Reply) span() (first, end uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.spoken) == 0 || r.spoken[0].end == r.spoken[0].start {
		return 0, 0, false
	}
	return r.spoken[0].start, r.spoken[len(r.spoken)-1].end, true
}

// Heard is what the user heard of the reply up to queue position pos:
// spoken, the words played (whole chunks, and the played share of the
// words of the chunk cut off), and written, the same words as the model
// wrote them, markup and spacing included, for the history. An engine
// that keeps its KV cache across replies holds the written tokens, so
// only the written words keep that cache valid up to the cut; written is
// spoken when no start of the reply says exactly those words.
func (r *Reply) Heard(pos uint64) (spoken, written string) {
	r.mu.Lock()
	var parts []string
	for _, c := range r.spoken {
		if c.aside {
			continue // not the reply's words
		}
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
