package moss

// The global transformer's state for one chunk: its KV cache, the decode
// step over it, and how a chunk's request reaches the first frame.

import (
	"context"
	"fmt"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

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
