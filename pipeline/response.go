package pipeline

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/llm"
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
	stats   llm.Stats
	err     error

	// ended is set by Run's goroutine when the response's goroutines are
	// gone.
	ended bool
}

// spokenChunk is a chunk of reply text and where its audio sits in the
// player's queue.
type spokenChunk struct {
	text       string
	start, end uint64
}

func (p *Pipeline) startResponse(m TurnMetrics) {
	ctx, cancel := context.WithCancel(p.ctx)
	r := &response{turn: p.turnNo, cancel: cancel, metrics: &m}
	p.resp = r
	conv := p.cfg.History.Messages()
	// Generation must never block on synthesis while holding the clock (the
	// player drains only as time advances), so the buffer holds any reply:
	// a chunk is several characters and replies are capped in tokens.
	chunks := make(chan string, 1024)

	// Holds follow runnable work: generation holds from the start (it
	// computes until it sleeps on the clock), each chunk carries one to
	// synthesis, and closing the channel hands one over for synthesis's
	// last steps. The goroutine that finishes last passes its hold to Run
	// with the done message, so the response ends at a definite audio time.
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
		err := p.generate(ctx, r, conv, chunks)
		p.clk.Hold()
		close(chunks)
		finish(err)
	}()
	go func() { finish(p.synthesize(ctx, r, chunks)) }()
}

func (p *Pipeline) generate(ctx context.Context, r *response, conv []llm.Message, chunks chan<- string) error {
	chunker := p.cfg.NewChunker()
	send := func(texts []string) error {
		for _, c := range texts {
			p.clk.Hold()
			select {
			case chunks <- c:
			case <-ctx.Done():
				p.clk.Release()
				return ctx.Err()
			}
		}
		return nil
	}
	stats, err := p.cfg.LLM.Generate(ctx, conv, func(piece string) error {
		now := p.clk.Now()
		r.mu.Lock()
		if r.metrics.FirstToken == 0 {
			r.metrics.FirstToken = now
		}
		r.reply.WriteString(piece)
		r.mu.Unlock()
		p.emit(Event{Type: EvLLMPiece, At: now, Turn: r.turn, Text: piece})
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

func (p *Pipeline) synthesize(ctx context.Context, r *response, chunks <-chan string) error {
	var err error
	// Every chunk was sent with a hold: release each one, even those left
	// unspoken after a cancellation.
	for text := range chunks {
		if err == nil {
			err = p.speak(ctx, r, text)
		}
		p.clk.Release()
	}
	if ctx.Err() == nil {
		// A cancelled reply was flushed already, and a newer one may be
		// queueing by now.
		p.player.EndOfReply()
	}
	return err
}

// speak synthesizes one chunk into the player, or records it as text when
// there is no synthesizer.
func (p *Pipeline) speak(ctx context.Context, r *response, text string) error {
	p.emit(Event{Type: EvTTSChunk, At: p.clk.Now(), Turn: r.turn, Text: text})
	chunk := spokenChunk{text: text}
	if p.cfg.TTS == nil {
		r.mu.Lock()
		r.spoken = append(r.spoken, chunk)
		r.mu.Unlock()
		return nil
	}
	conv, err := audio.NewConverter(p.cfg.TTS.Format(), p.player.Format())
	if err != nil {
		return err
	}
	var wrote bool
	write := func(samples []float32) error {
		if len(samples) == 0 {
			return nil
		}
		start, end, err := p.player.Write(ctx, samples)
		if !wrote {
			chunk.start, wrote = start, true
		}
		chunk.end = end
		return err
	}
	err = p.cfg.TTS.Synthesize(ctx, text, func(samples []float32) error {
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
	if wrote {
		r.mu.Lock()
		r.spoken = append(r.spoken, chunk)
		r.mu.Unlock()
	}
	return err
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

// heard is the reply text the user heard up to queue position pos: whole
// chunks played, and the played share of the words of the chunk cut off.
func (r *response) heard(pos uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
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
	return strings.TrimSpace(strings.Join(parts, " "))
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
