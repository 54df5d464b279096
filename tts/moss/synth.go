package moss

// Synthesize: a reply's text into chunks, each chunk's request rows, and
// the frames generated for it decoded into audio.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/tts/normalize"
)

// Silence between text chunks (see chunkGap).
const (
	ChunkGap      = 240 * time.Millisecond
	ShortChunkGap = 400 * time.Millisecond // after a chunk of ShortChunkWords words or fewer
	// ShortChunkWords is the word count at or under which a chunk is followed by ShortChunkGap.
	ShortChunkWords = 4
)

// maxCodecBatch is the most frames one codec call decodes.
const maxCodecBatch = 8

func destroy(vs ...ort.Value) {
	for _, v := range vs {
		if v != nil {
			_ = v.Destroy()
		}
	}
}

func destroyAll(vs []ort.Value) {
	destroy(vs...)
	clear(vs)
}

// Synthesize speaks text, calling emit with interleaved stereo samples as
// soon as they are decoded. It checks ctx between frames and returns
// ctx.Err() when cancelled.
//
// The text is prepared as the reference runtime prepares every request:
// tts/normalize reads numbers and symbols (upstream uses WeTextProcessing
// for that; lang, the reply's language, reads those with no words near
// them), cleanText applies upstream's robust normalizer, and splitText
// cuts the result into chunks of about MaxChunkTokens tokens at most.
func (s *Synthesizer) Synthesize(ctx context.Context, text string, lang normalize.Language, emit func(samples []float32) error) error {
	return s.speak(ctx, s.prepare(text, lang), emit)
}

// prepare turns a reply's text into the chunks Synthesize speaks.
func (s *Synthesizer) prepare(text string, lang normalize.Language) []string {
	count := func(t string) int { return len(s.tok.Encode(t)) }
	return splitText(cleanText(normalize.Reply(text, lang)), MaxChunkTokens, count)
}

// speak synthesizes chunks one after another, each from its own prefill
// and a fresh codec state, as upstream's synthesize_single_chunk
// (onnx_tts_runtime.py:527) does, with chunkGap's silence between them.
func (s *Synthesizer) speak(ctx context.Context, chunks []string, emit func(samples []float32) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rng := rand.New(rand.NewPCG(s.seed, s.seed))
	for i, chunk := range chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 {
			n := int(math.Round(chunkGap(chunks[i-1]).Seconds()*float64(s.format.Rate))) * s.format.Channels
			if err := emit(make([]float32, n)); err != nil {
				return err
			}
		}
		if err := s.chunk(ctx, rng, s.tok.Encode(chunk), emit); err != nil {
			return err
		}
	}
	return nil
}

// row appends one input row: a text-channel id and audio codes, padded.
func (c config) row(rows []int32, id int, codes []int) []int32 {
	r := make([]int32, c.rowWidth)
	for i := range r {
		r[i] = int32(c.pad)
	}
	r[0] = int32(id)
	for i, code := range codes {
		r[i+1] = int32(code)
	}
	return append(rows, r...)
}

// promptRows is what every chunk's request starts with: the user prompt,
// the voice's reference frames and what follows them. It does not depend
// on the text, so its KV cache is computed once (see warmPrompt).
func (s *Synthesizer) promptRows() []int32 {
	c := s.cfg
	var rows []int32
	for _, id := range s.prefix {
		rows = c.row(rows, id, nil)
	}
	rows = c.row(rows, c.audioStart, nil)
	for _, f := range s.voice {
		rows = c.row(rows, c.userSlot, f)
	}
	rows = c.row(rows, c.audioEnd, nil)
	for _, id := range s.after {
		rows = c.row(rows, id, nil)
	}
	return rows
}

// textRows is the rest of a chunk's request: its text token ids, the
// assistant prefix and the start of the audio to generate.
func (s *Synthesizer) textRows(text []int) []int32 {
	c := s.cfg
	var rows []int32
	for _, group := range [][]int{text, s.assist} {
		for _, id := range group {
			rows = c.row(rows, id, nil)
		}
	}
	return c.row(rows, c.audioStart, nil)
}

// chunk generates and decodes one text chunk.
func (s *Synthesizer) chunk(ctx context.Context, rng *rand.Rand, text []int, emit func([]float32) error) error {
	c := s.cfg
	g, err := s.newGlobalState()
	if err != nil {
		return err
	}
	defer g.close()
	cs := s.newCodecState()
	if err := g.start(ctx, text); err != nil {
		return err
	}
	seen := make([]int32, c.nVQ*c.codebook)
	seenT, err := ort.NewTensor(ort.NewShape(1, int64(c.nVQ), int64(c.codebook)), seen)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(seenT)
	au, _ := ort.NewEmptyTensor[float32](ort.NewShape(1))
	uu, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(c.nVQ)))
	defer destroy(au, uu)
	if au == nil || uu == nil {
		return fmt.Errorf("moss: cannot allocate tensors")
	}
	frameRow := make([]int32, c.rowWidth)
	for range s.frames {
		if err := ctx.Err(); err != nil {
			return err
		}
		u := s.draw(rng)
		if len(u) != 1+c.nVQ {
			return fmt.Errorf("moss: the uniforms hook returned %d values, expected %d", len(u), 1+c.nVQ)
		}
		au.GetData()[0] = u[0]
		copy(uu.GetData(), u[1:])
		lOuts := []ort.Value{nil, nil}
		if err := s.local.Run([]ort.Value{g.hiddenT, seenT, au, uu}, lOuts); err != nil {
			destroyAll(lOuts)
			return fmt.Errorf("moss: local frame: %w", err)
		}
		cont, ok1 := lOuts[0].(*ort.Tensor[int32])
		frameT, ok2 := lOuts[1].(*ort.Tensor[int32])
		if !ok1 || !ok2 || len(cont.GetData()) < 1 || len(frameT.GetData()) != c.nVQ {
			destroyAll(lOuts)
			return fmt.Errorf("%w: moss: the local frame graph's outputs are not int32 [1,1] and [1,%d]", ErrModelMismatch, c.nVQ)
		}
		stop := cont.GetData()[0] == 0
		frame := append([]int32(nil), frameT.GetData()...)
		destroyAll(lOuts)
		if stop {
			break
		}
		if s.onFrame != nil {
			s.onFrame(frame)
		}
		sd := seenT.GetData()
		for ch, code := range frame {
			if code >= 0 && int(code) < c.codebook {
				sd[ch*c.codebook+int(code)] = 1
			}
		}
		// Decode the frame's row to get the next hidden state.
		frameRow[0] = int32(c.assistantSlot)
		copy(frameRow[1:], frame)
		if err := g.step(frameRow, !s.resetKV); err != nil {
			return err
		}
		if err := cs.push(frame, emit); err != nil {
			return err
		}
	}
	return cs.flush(emit)
}
