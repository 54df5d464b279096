package moss

// The prefill graph: a whole request's rows in one run, and the hidden
// states and KV cache it gives.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/onnx"
)

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
