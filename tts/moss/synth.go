package moss

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
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

// prefillRows runs the prefill graph over rows, returning the last row's
// hidden state and the KV cache in decode step input order, written into
// kv's buffers (in the decode step's output order, as globalState.buffers
// gives them) when kv is set, else into ONNX Runtime's. A run takes no
// KV cache to continue from and so cannot be split: a cancellation stops
// it between two of its nodes instead.
func (s *Synthesizer) prefillRows(ctx context.Context, rows []int32, kv [][]float32) (hidden []float32, past []ort.Value, err error) {
	start := time.Now()
	hidden, past, err = s.runPrefill(ctx, s.prefill, rows, kv)
	if err != nil {
		return nil, nil, err
	}
	s.rowCost.add(time.Since(start) / time.Duration(len(rows)/s.cfg.rowWidth))
	return hidden[len(hidden)-s.cfg.hidden:], past, nil
}

// runPrefill is prefillRows on the prefill session sess, returning every
// row's hidden state.
func (s *Synthesizer) runPrefill(ctx context.Context, sess *onnx.Session, rows []int32, kv [][]float32) (hidden []float32, past []ort.Value, err error) {
	n := len(rows) / s.cfg.rowWidth
	inIDs, err := ort.NewTensor(ort.NewShape(1, int64(n), int64(s.cfg.rowWidth)), rows)
	if err != nil {
		return nil, nil, fmt.Errorf("moss: %w", err)
	}
	mask := make([]int32, n)
	for i := range mask {
		mask[i] = 1
	}
	inMask, err := ort.NewTensor(ort.NewShape(1, int64(n)), mask)
	if err != nil {
		destroy(inIDs)
		return nil, nil, fmt.Errorf("moss: %w", err)
	}
	outs := make([]ort.Value, len(s.prefillOut))
	if kv != nil {
		if err := s.kvTensors(outs[1:], s.prefillOut[1:], kv, n); err != nil {
			destroy(inIDs, inMask)
			return nil, nil, err
		}
	}
	err = sess.RunContext(ctx, []ort.Value{inIDs, inMask}, outs)
	destroy(inIDs, inMask)
	if err == nil {
		hidden, err = allHidden(outs[0], s.cfg.hidden)
	} else if ctx.Err() == nil {
		err = fmt.Errorf("moss: prefill: %w", err)
	}
	destroy(outs[0])
	if err != nil {
		destroyAll(outs[1:])
		return nil, nil, err
	}
	return hidden, s.decodeOrder(s.prefillOut[1:], outs[1:]), nil
}

// warmPrompt prefills promptRows and keeps the KV cache: a chunk can
// continue from it over its own rows instead of prefilling the voice's
// reference frames again. The decode step's shared form feeds them into
// its cache; otherwise the prefill graph runs, and both graphs are timed,
// so that the first chunk can choose between them (see start); the
// prefill only if it is kept (keepPrefill) for chunks to choose.
func (s *Synthesizer) warmPrompt(keepPrefill bool) error {
	rows := s.promptRows()
	if s.sharedDecode {
		return s.warmSharedPrompt(rows)
	}
	// A graph's first run sets up its buffers (and reads a mapped copy's
	// weights in from the disk): at full size it took twice a later one's
	// time a row, 2.8 against 1.45 ms, which made a 17-word sentence step
	// through its 80 rows (0.7 s) instead of prefilling them (0.35 s) on
	// one start in two. The second run is timed.
	runs := 1
	if keepPrefill {
		runs = 2
	}
	var past []ort.Value
	for range runs {
		destroyAll(past)
		s.rowCost = cost{}
		var err error
		if _, past, err = s.prefillRows(context.Background(), rows, nil); err != nil {
			return fmt.Errorf("moss: the voice prompt: %w", err)
		}
	}
	s.promptLen, s.promptKV = len(rows)/s.cfg.rowWidth, past
	g, err := s.newGlobalState()
	if err != nil {
		return err
	}
	defer g.close()
	return g.warmSteps()
}

// warmSharedPrompt feeds the voice prompt's rows into the shared cache,
// made for kvRowsAhead rows more, and warms the decode step.
func (s *Synthesizer) warmSharedPrompt(rows []int32) error {
	var err error
	if s.kv, err = newSharedKV(len(s.decodeIn)-2, s.cfg.heads, s.cfg.headDim, len(rows)/s.cfg.rowWidth+kvRowsAhead); err != nil {
		return err
	}
	g, err := s.newGlobalState()
	if err != nil {
		return err
	}
	defer g.close()
	if err := g.feed(context.Background(), rows); err != nil {
		return fmt.Errorf("moss: the voice prompt: %w", err)
	}
	s.promptLen = g.len
	return g.warmSteps()
}

// warmSteps runs the decode step twice after g's rows, keeping nothing:
// its first run sets up its buffers, the second is timed.
func (g *globalState) warmSteps() error {
	for range 2 {
		g.s.stepCost = cost{}
		if err := g.step(g.s.cfg.row(nil, g.s.cfg.pad, nil), false); err != nil {
			return fmt.Errorf("moss: the voice prompt: %w", err)
		}
	}
	return nil
}

// warmFrame runs the local frame graph and the codec once, on a frame
// that is no chunk's, and sets the codec's state back to its start: a
// graph's first run sets up its buffers (and pages a mapped copy's
// weights in), which belongs in Open, not in the first chunk's time to
// its first audio.
func (s *Synthesizer) warmFrame() error {
	c := s.cfg
	hidden, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(c.hidden)))
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	seen, err := ort.NewEmptyTensor[int32](ort.NewShape(1, int64(c.nVQ), int64(c.codebook)))
	if err != nil {
		destroy(hidden)
		return fmt.Errorf("moss: %w", err)
	}
	au, err := ort.NewTensor(ort.NewShape(1), []float32{0.5})
	if err != nil {
		destroy(hidden, seen)
		return fmt.Errorf("moss: %w", err)
	}
	uu, err := ort.NewTensor(ort.NewShape(1, int64(c.nVQ)), make([]float32, c.nVQ))
	if err != nil {
		destroy(hidden, seen, au)
		return fmt.Errorf("moss: %w", err)
	}
	outs := []ort.Value{nil, nil}
	err = s.local.Run([]ort.Value{hidden, seen, au, uu}, outs)
	destroy(hidden, seen, au, uu)
	destroyAll(outs)
	if err != nil {
		return fmt.Errorf("moss: local frame: %w", err)
	}
	cs := s.newCodecState()
	cs.pending = append(cs.pending, make([]int32, c.nVQ))
	err = cs.run(func([]float32) error { return nil }, 1)
	for _, set := range s.codecSets {
		s.startCodecState(set)
	}
	return err
}

// decodeOrder arranges present_* values, named by names, in the order the
// decode step takes them as past_*.
func (s *Synthesizer) decodeOrder(names []string, present []ort.Value) []ort.Value {
	byName := make(map[string]ort.Value, len(names))
	for i, name := range names {
		byName[strings.Replace(name, "present_", "past_", 1)] = present[i]
	}
	past := make([]ort.Value, len(s.decodeIn)-2)
	for i, name := range s.decodeIn[2:] {
		past[i] = byName[name]
	}
	return past
}

// cost is a running estimate of how long one row takes through a graph.
type cost struct{ d time.Duration }

func (c *cost) add(d time.Duration) {
	if c.d == 0 {
		c.d = d
		return
	}
	c.d = (3*c.d + d) / 4
}

// globalState is one chunk's place in the global transformer: its KV
// cache (the voice prompt's, shared and never destroyed here, until the
// first decode step or a full prefill gives it its own) and the hidden
// state the next frame is sampled from.
type globalState struct {
	s       *Synthesizer
	past    []ort.Value
	len     int
	owned   bool
	rowT    *ort.Tensor[int32]
	lenT    *ort.Tensor[int32]
	hiddenT *ort.Tensor[float32]
	// A decode step writes its KV cache into buffers of g's own, in the
	// decode step's output order: ONNX Runtime would otherwise allocate
	// each cache and onnxruntime_go copy it into a new Go slice, the whole
	// cache (megabytes) turned over every frame. pastBufs hold the cache
	// g.past is, when it is one of these (else nil), and the next step
	// writes its cache into the same buffers: the present cache is the
	// past one with a row appended (the graph's Concat along the sequence
	// axis of [1, len, heads, head_dim]), so its first rows are copied
	// onto themselves and one set of buffers serves, not two. spareBufs
	// serve steps whose cache is not kept, from a past g does not own.
	pastBufs, spareBufs [][]float32
}

func (s *Synthesizer) newGlobalState() (*globalState, error) {
	g := &globalState{s: s, past: s.promptKV, len: s.promptLen, spareBufs: s.kvBufs}
	var err error
	if g.rowT, err = ort.NewEmptyTensor[int32](ort.NewShape(1, 1, int64(s.cfg.rowWidth))); err != nil {
		return nil, fmt.Errorf("moss: %w", err)
	}
	if g.lenT, err = ort.NewEmptyTensor[int32](ort.NewShape(1)); err != nil {
		destroy(g.rowT)
		return nil, fmt.Errorf("moss: %w", err)
	}
	if g.hiddenT, err = ort.NewEmptyTensor[float32](ort.NewShape(1, int64(s.cfg.hidden))); err != nil {
		destroy(g.rowT, g.lenT)
		return nil, fmt.Errorf("moss: %w", err)
	}
	return g, nil
}

// close releases g's tensors and hands its cache buffers on to the next
// chunk's globalState: made anew for every chunk, they cost an
// allocation of megabytes, and more each time they grow.
func (g *globalState) close() {
	bufs := g.pastBufs
	if bufs == nil {
		bufs = g.spareBufs
	}
	g.setPast(nil, 0, nil)
	destroy(g.rowT, g.lenT, g.hiddenT)
	g.s.kvBufs = bufs
}

// setPast replaces the KV cache with one of n rows that g owns, held in
// bufs when it is in g's own buffers.
func (g *globalState) setPast(past []ort.Value, n int, bufs [][]float32) {
	if g.owned {
		destroyAll(g.past)
	}
	g.past, g.len, g.owned, g.pastBufs = past, n, true, bufs
}

// kvRowsAhead is how many rows past the voice prompt the decode step's
// cache buffers are made for at Open: a sentence's text rows (80 with the
// stand-ins' tokenizer for 17 words) and its frames (some 25-60). Made
// when the first chunk needs them, their pages faulted in inside its
// prefill: 50 ms of it at full size (293-305 against 322-363 ms).
const kvRowsAhead = 192

// kvBuffers are cache buffers for rows positions, written so that their
// pages are in memory.
func (s *Synthesizer) kvBuffers(rows int) [][]float32 {
	bufs := make([][]float32, len(s.decodeOut)-1)
	for i := range bufs {
		bufs[i] = make([]float32, rows*s.cfg.heads*s.cfg.headDim)
		for j := range bufs[i] {
			bufs[i][j] = 0 // make's pages are the system's until written
		}
	}
	return bufs
}

// buffers are g's cache buffers in the decode step's output order (the
// past's own, else the spare ones), each cut to rows positions and grown
// by a quarter (at least 32 rows) where it is too short.
func (g *globalState) buffers(rows int) [][]float32 {
	c := g.s.cfg
	row := c.heads * c.headDim
	n := rows * row
	bufs := make([][]float32, len(g.s.decodeOut)-1)
	for i := range bufs {
		var b []float32
		switch {
		case i < len(g.pastBufs):
			b = g.pastBufs[i]
		case i < len(g.spareBufs):
			b = g.spareBufs[i]
		}
		if cap(b) < n {
			b = make([]float32, n, n+max(n/4, 32*row))
		}
		bufs[i] = b[:n]
	}
	return bufs
}

// kvTensors fills outs with cache tensors of rows positions over bufs:
// outs[i] is the output names[i], bufs in the decode step's output order.
func (s *Synthesizer) kvTensors(outs []ort.Value, names []string, bufs [][]float32, rows int) error {
	c := s.cfg
	for i, name := range names {
		j, ok := s.kvSlot[name]
		if !ok {
			continue // ONNX Runtime allocates it
		}
		t, err := ort.NewTensor(ort.NewShape(1, int64(rows), int64(c.heads), int64(c.headDim)), bufs[j])
		if err != nil {
			destroyAll(outs)
			return fmt.Errorf("moss: %w", err)
		}
		outs[i] = t
	}
	return nil
}

// step feeds one row to the decode step, leaving its hidden state in
// hiddenT and, when keep is set, its KV cache in g (the resetKV test
// switch drops it).
func (g *globalState) step(row []int32, keep bool) error {
	s := g.s
	copy(g.rowT.GetData(), row)
	g.lenT.GetData()[0] = int32(g.len)
	if s.kv != nil {
		return g.stepShared(keep)
	}
	outs := make([]ort.Value, len(s.decodeOut))
	bufs := g.buffers(g.len + 1)
	if err := s.kvTensors(outs[1:], s.decodeOut[1:], bufs, g.len+1); err != nil {
		return err
	}
	err := g.run(g.past, outs)
	if !keep || err != nil {
		destroyAll(outs)
		if g.pastBufs == nil {
			g.spareBufs = bufs
		}
		return err
	}
	g.setPast(s.decodeOrder(s.decodeOut[1:], outs[1:]), g.len+1, bufs)
	return nil
}

// stepShared is step on the shared form's cache, which the step writes
// in place: its row lands after g's rows, where the next step writes over
// it unless it is kept.
func (g *globalState) stepShared(keep bool) error {
	s := g.s
	if err := s.kv.fit(g.len + 1); err != nil {
		return err
	}
	outs := append([]ort.Value{nil}, s.presentOrder(s.kv.tensors)...)
	if err := g.run(s.kv.tensors, outs); err != nil {
		destroy(outs[0])
		return err
	}
	if keep {
		g.len++
	}
	return nil
}

// feed runs the shared form once over rows, after g's rows, writing
// theirs into the cache in place and leaving the last one's hidden state
// in hiddenT: the voice prompt, or a chunk's text, at the cost of a
// prefill of these rows alone. A cancellation stops it between two of
// its nodes.
func (g *globalState) feed(ctx context.Context, rows []int32) error {
	s := g.s
	n := len(rows) / s.cfg.rowWidth
	if err := s.kv.fit(g.len + n); err != nil {
		return err
	}
	rowsT, err := ort.NewTensor(ort.NewShape(1, int64(n), int64(s.cfg.rowWidth)), rows)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	defer destroy(rowsT)
	g.lenT.GetData()[0] = int32(g.len)
	ins, outs := append([]ort.Value{rowsT, g.lenT}, s.kv.tensors...), append([]ort.Value{nil}, s.presentOrder(s.kv.tensors)...)
	start := time.Now()
	err = s.decode.RunContext(ctx, ins, outs)
	s.countFed(time.Since(start), ins, outs)
	if err != nil {
		destroy(outs[0])
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("moss: decode step: %w", err)
	}
	h, err := lastHidden(outs[0], s.cfg.hidden)
	destroy(outs[0])
	if err != nil {
		return err
	}
	copy(g.hiddenT.GetData(), h)
	g.len += n
	return nil
}

// countFed adds a run of several rows to s.fed.
func (s *Synthesizer) countFed(d time.Duration, ins, outs []ort.Value) {
	in, out := s.sharedMoved(ins, outs)
	s.fedMu.Lock()
	defer s.fedMu.Unlock()
	s.fed.Add(d, in, out)
}

// run runs the decode step on g's row and length over the cache past,
// leaving the hidden state in hiddenT and outs[0] destroyed.
func (g *globalState) run(past, outs []ort.Value) error {
	s := g.s
	start := time.Now()
	if err := s.decode.Run(append([]ort.Value{g.rowT, g.lenT}, past...), outs); err != nil {
		return fmt.Errorf("moss: decode step: %w", err)
	}
	s.stepCost.add(time.Since(start))
	h, err := lastHidden(outs[0], s.cfg.hidden)
	destroy(outs[0])
	outs[0] = nil
	if err == nil {
		copy(g.hiddenT.GetData(), h)
	}
	return err
}

// start brings g to the end of a chunk's request. The decode step's
// shared form feeds the chunk's rows at once after the voice prompt's.
// Otherwise by the cheaper of two equivalent ways (the global transformer
// is causal): decode steps over the chunk's own rows from the voice
// prompt's KV cache, or one prefill of the prompt and them together. A
// step costs several prefill rows (one row cannot use the batched
// kernels), so short chunks, such as a reply's first words, step and long
// ones prefill; the costs are measured as the graphs run, since their
// ratio depends on the machine and on how the model is quantized. Without
// the prefill graph (Options.LowMemory) every chunk steps.
func (g *globalState) start(ctx context.Context, text []int) error {
	s := g.s
	rows := s.textRows(text)
	if s.kv != nil {
		return g.feed(ctx, rows)
	}
	n := len(rows) / s.cfg.rowWidth
	if s.prefill != nil && time.Duration(n)*s.stepCost.d > time.Duration(s.promptLen+n)*s.rowCost.d {
		kv := g.buffers(s.promptLen + n)
		hidden, past, err := s.prefillRows(ctx, append(s.promptRows(), rows...), kv)
		if err != nil {
			return err
		}
		copy(g.hiddenT.GetData(), hidden)
		g.setPast(past, s.promptLen+n, kv)
		return nil
	}
	for i := 0; i < len(rows); i += s.cfg.rowWidth {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := g.step(rows[i:i+s.cfg.rowWidth], true); err != nil {
			return err
		}
	}
	return nil
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

// lastHidden copies global_hidden[0, -1, :].
func lastHidden(v ort.Value, hidden int) ([]float32, error) {
	d, err := hiddenStates(v, hidden)
	if err != nil {
		return nil, err
	}
	return slices.Clone(d[len(d)-hidden:]), nil
}

// allHidden copies global_hidden[0], every row's.
func allHidden(v ort.Value, hidden int) ([]float32, error) {
	d, err := hiddenStates(v, hidden)
	return slices.Clone(d), err
}

// hiddenStates is global_hidden's data, rows of hidden values.
func hiddenStates(v ort.Value, hidden int) ([]float32, error) {
	t, ok := v.(*ort.Tensor[float32])
	if !ok {
		return nil, fmt.Errorf("moss: global_hidden is not a float tensor")
	}
	d := t.GetData()
	if len(d) < hidden || len(d)%hidden != 0 {
		return nil, fmt.Errorf("%w: moss: global_hidden has %d values, not a multiple of hidden_size %d", ErrModelMismatch, len(d), hidden)
	}
	return d, nil
}
