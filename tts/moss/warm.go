package moss

// Warming up at Open: the voice prompt's KV cache, and a first run of
// each graph, timed where chunks choose between graphs by their cost.

import (
	"context"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
)

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
