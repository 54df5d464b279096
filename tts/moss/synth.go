package moss

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/tts/normalize"
)

// Silence between text chunks.
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
func (s *Synthesizer) Synthesize(ctx context.Context, text string, emit func(samples []float32) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.tok.Encode(normalize.Text(text))
	if len(ids) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(s.seed, s.seed))
	cs, err := s.newCodecState()
	if err != nil {
		return err
	}
	defer cs.close()
	chunks := splitTokens(ids, MaxChunkTokens)
	for i, chunk := range chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		if i > 0 {
			gap := ChunkGap
			if len(strings.Fields(s.tok.Decode(chunks[i-1]))) <= ShortChunkWords {
				gap = ShortChunkGap
			}
			n := int(gap.Seconds()*float64(s.format.Rate)) * s.format.Channels
			if err := emit(make([]float32, n)); err != nil {
				return err
			}
		}
		if err := s.chunk(ctx, rng, cs, chunk, emit); err != nil {
			return err
		}
	}
	return nil
}

// splitTokens cuts ids into pieces of at most n.
func splitTokens(ids []int, n int) [][]int {
	var out [][]int
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	return append(out, ids)
}

// rows builds the prefill request for one chunk of text token ids.
func (s *Synthesizer) rows(text []int) []int32 {
	c := s.cfg
	var rows []int32
	add := func(id int, codes []int) {
		r := make([]int32, c.rowWidth)
		for i := range r {
			r[i] = int32(c.pad)
		}
		r[0] = int32(id)
		for i, code := range codes {
			r[i+1] = int32(code)
		}
		rows = append(rows, r...)
	}
	for _, id := range s.prefix {
		add(id, nil)
	}
	add(c.audioStart, nil)
	for _, f := range s.voice {
		add(c.userSlot, f)
	}
	add(c.audioEnd, nil)
	for _, group := range [][]int{s.after, text, s.assist} {
		for _, id := range group {
			add(id, nil)
		}
	}
	add(c.audioStart, nil)
	return rows
}

// chunk generates and decodes one text chunk.
func (s *Synthesizer) chunk(ctx context.Context, rng *rand.Rand, cs *codecState, text []int, emit func([]float32) error) error {
	c := s.cfg
	data := s.rows(text)
	n := len(data) / c.rowWidth
	inIDs, err := ort.NewTensor(ort.NewShape(1, int64(n), int64(c.rowWidth)), data)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	mask := make([]int32, n)
	for i := range mask {
		mask[i] = 1
	}
	inMask, err := ort.NewTensor(ort.NewShape(1, int64(n)), mask)
	if err != nil {
		destroy(inIDs)
		return fmt.Errorf("moss: %w", err)
	}
	outs := make([]ort.Value, len(s.prefillOut))
	// The prompt (the voice's reference frames and the chunk's text) is
	// one run of the prefill graph, which takes no KV cache to continue
	// from and so cannot be split: a cancellation stops it between two of
	// its nodes instead.
	err = s.prefill.RunContext(ctx, []ort.Value{inIDs, inMask}, outs)
	destroy(inIDs, inMask)
	if err != nil {
		destroyAll(outs)
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("moss: prefill: %w", err)
	}
	// past holds the KV cache in decode input order (after the two fixed inputs).
	past := make([]ort.Value, len(s.decodeIn)-2)
	byName := map[string]ort.Value{}
	for i, name := range s.prefillOut[1:] {
		byName[strings.Replace(name, "present_", "past_", 1)] = outs[i+1]
	}
	for i, name := range s.decodeIn[2:] {
		past[i] = byName[name]
	}
	hidden, err := lastHidden(outs[0], c.hidden)
	destroy(outs[0])
	defer func() { destroyAll(past) }()
	if err != nil {
		return err
	}
	pastLen := n

	seen := make([]int32, c.nVQ*c.codebook)
	seenT, err := ort.NewTensor(ort.NewShape(1, int64(c.nVQ), int64(c.codebook)), seen)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(seenT)
	hiddenT, err := ort.NewTensor(ort.NewShape(1, int64(c.hidden)), hidden)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(hiddenT)
	au, _ := ort.NewEmptyTensor[float32](ort.NewShape(1))
	uu, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(c.nVQ)))
	defer destroy(au, uu)
	if au == nil || uu == nil {
		return fmt.Errorf("moss: cannot allocate tensors")
	}
	rowData := make([]int32, c.rowWidth)
	rowT, err := ort.NewTensor(ort.NewShape(1, 1, int64(c.rowWidth)), rowData)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(rowT)
	lenT, err := ort.NewTensor(ort.NewShape(1), []int32{0})
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(lenT)

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
		if err := s.local.Run([]ort.Value{hiddenT, seenT, au, uu}, lOuts); err != nil {
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
		rowData = rowT.GetData()
		rowData[0] = int32(c.assistantSlot)
		copy(rowData[1:], frame)
		lenT.GetData()[0] = int32(pastLen)
		dOuts := make([]ort.Value, len(s.decodeOut))
		if err := s.decode.Run(append([]ort.Value{rowT, lenT}, past...), dOuts); err != nil {
			destroyAll(dOuts)
			return fmt.Errorf("moss: decode step: %w", err)
		}
		if s.resetKV {
			// Test switch: keep feeding the prefill's cache, dropping the new one.
			destroyAll(dOuts[1:])
		} else {
			destroyAll(past)
			for i, name := range s.decodeOut[1:] {
				byName[strings.Replace(name, "present_", "past_", 1)] = dOuts[i+1]
			}
			for i, name := range s.decodeIn[2:] {
				past[i] = byName[name]
			}
			pastLen++
		}
		h, err := lastHidden(dOuts[0], c.hidden)
		destroy(dOuts[0])
		if err != nil {
			return err
		}
		copy(hiddenT.GetData(), h)

		if err := cs.push(frame, emit); err != nil {
			return err
		}
	}
	return cs.flush(emit)
}

// lastHidden copies global_hidden[0, -1, :].
func lastHidden(v ort.Value, hidden int) ([]float32, error) {
	t, ok := v.(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("moss: global_hidden is not a float tensor")
	}
	d := t.GetData()
	if len(d) < hidden || len(d)%hidden != 0 {
		return nil, fmt.Errorf("%w: moss: global_hidden has %d values, not a multiple of hidden_size %d", ErrModelMismatch, len(d), hidden)
	}
	return append([]float32(nil), d[len(d)-hidden:]...), nil
}
