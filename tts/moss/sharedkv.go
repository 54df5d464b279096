package moss

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/internal/quantize"
)

// The decode step's KV cache grows: each step concatenates the cached
// keys and values, [1, rows, heads, head_dim], with the step's new row,
// returns the Concat as the next step's cache and transposes it for the
// attention, so every frame copies the whole cache three times (at full
// size 37 of a step's 90 MB of memory traffic at 250 rows). So at its
// first load the synthesizer derives from the decode step a graph whose
// attention is ONNX Runtime's GroupQueryAttention on cache buffers laid
// [1, heads, capacity, head_dim] that it writes in place, one row a step
// (quantize.SharedKVAttention), checks it against the original, and keeps
// it only if their hidden states and caches agree. The cache is then one
// set of buffers, the voice prompt's rows first, which every chunk steps
// on from: a chunk writes its rows after the prompt's and the next one
// writes over them.
const (
	sharedKVKept    = "shared"
	sharedKVVersion = "shared-kv 1"
	// sharedKVTolerance bounds how far the shared form's hidden states and
	// caches may stray from the original's, relative to their peak, both in
	// their exact form: only the order of the attention's sums differs
	// (5e-7 of the peak at full size). One entry too few or too many
	// attended, or a wrong scale, moves them by a tenth.
	sharedKVTolerance = 1e-5
	// sharedKVCheck are the rows cached before the check's steps, and its
	// steps: enough for the attention to weigh many entries, and for
	// every position's rotation to differ.
	sharedKVCheckRows, sharedKVCheckSteps = 12, 20
)

// sharedKV is the decode step's KV cache in the shared form: one buffer
// per cache tensor, laid [1, heads, rows, head_dim], in the decode step's
// input order, and a tensor over each that the step reads and writes.
type sharedKV struct {
	heads, width, rows int
	bufs               [][]float32
	tensors            []ort.Value
}

func newSharedKV(n, heads, width, rows int) (*sharedKV, error) {
	kv := &sharedKV{heads: heads, width: width}
	return kv, kv.resize(make([][]float32, n), rows)
}

// resize lays the caches out for rows rows each, keeping what each head's
// first rows held, and pages the buffers in: their pages, fresh from the
// system, would otherwise be faulted in by the steps that write them.
func (kv *sharedKV) resize(old [][]float32, rows int) error {
	destroyAll(kv.tensors)
	kv.bufs, kv.tensors = make([][]float32, len(old)), make([]ort.Value, len(old))
	keep := min(kv.rows, rows) * kv.width
	for i := range old {
		b := make([]float32, kv.heads*rows*kv.width)
		for j := range b {
			b[j] = 0 // make's pages are the system's until written
		}
		for h := 0; old[i] != nil && h < kv.heads; h++ {
			copy(b[h*rows*kv.width:h*rows*kv.width+keep], old[i][h*kv.rows*kv.width:])
		}
		t, err := ort.NewTensor(ort.NewShape(1, int64(kv.heads), int64(rows), int64(kv.width)), b)
		if err != nil {
			destroyAll(kv.tensors)
			return fmt.Errorf("moss: %w", err)
		}
		kv.bufs[i], kv.tensors[i] = b, t
	}
	kv.rows = rows
	return nil
}

// fit makes room for rows rows, growing the caches by a quarter (at least
// 32 rows) when they are too short.
func (kv *sharedKV) fit(rows int) error {
	if rows <= kv.rows {
		return nil
	}
	return kv.resize(kv.bufs, max(rows, kv.rows+max(kv.rows/4, 32)))
}

// write copies rows [from, to) of caches laid [1, rows, heads, head_dim]
// (a prefill's, in the decode step's input order) into the buffers.
func (kv *sharedKV) write(caches []ort.Value, from, to int) error {
	if err := kv.fit(to); err != nil {
		return err
	}
	for i, c := range caches {
		t, ok := c.(*ort.Tensor[float32])
		if !ok || len(t.GetData()) < to*kv.heads*kv.width {
			return fmt.Errorf("%w: moss: a KV cache of the prefill holds fewer than %d rows", ErrModelMismatch, to)
		}
		src, dst := t.GetData(), kv.bufs[i]
		for r := from; r < to; r++ {
			for h := range kv.heads {
				copy(dst[(h*kv.rows+r)*kv.width:(h*kv.rows+r+1)*kv.width], src[(r*kv.heads+h)*kv.width:])
			}
		}
	}
	return nil
}

func (kv *sharedKV) destroy() {
	if kv != nil {
		destroyAll(kv.tensors)
	}
}

// useSharedKV replaces the decode step's session, opened on the model at
// path, with its shared form when that is made, checked and kept;
// otherwise the decode step stays as it is.
func (s *Synthesizer) useSharedKV(path string, ins, outs []onnx.Tensor, opts onnx.Options) {
	rewrite := graphRewrite{engine: "moss-shared-kv", version: sharedKVVersion, kept: sharedKVKept,
		keeping: "the decode step's KV cache is written in place", leaving: "the decode step's KV cache grows by copies"}
	model, err := rewrite.load(path, func(model string) (string, error) {
		return s.deriveSharedKV(path, model, ins, outs, opts)
	})
	if err == nil && model != "" {
		var sess *onnx.Session
		sharedIns, sharedOuts := s.sharedTensors(ins, outs)
		if sess, err = onnx.Open(model, sharedIns, sharedOuts, opts, Hint); err == nil {
			_ = s.decode.Destroy()
			sess.Moved = s.sharedMoved
			s.decode, s.sharedDecode = sess, true
			return
		}
	}
	if err != nil {
		slog.Warn("moss: "+rewrite.leaving+": no shared form", "model", path, "err", err)
	}
}

// sharedMoved is what a step of the shared form reads and writes: its
// row and length, the cached rows and its own (which the attention
// reads), and its hidden state and one row of each cache; not the
// buffers' whole capacity, which it neither reads nor writes.
func (s *Synthesizer) sharedMoved(inputs, outputs []ort.Value) (in, out int64) {
	caches := int64(len(inputs) - 2)
	row := int64(4 * s.cfg.heads * s.cfg.headDim)
	rows := int64(1)
	if n, ok := inputs[1].(*ort.Tensor[int32]); ok && len(n.GetData()) == 1 {
		rows += int64(n.GetData()[0])
	}
	in = int64(4*s.cfg.rowWidth+4) + caches*rows*row
	out = int64(4*s.cfg.hidden) + caches*row
	return in, out
}

// sharedTensors are the decode step's tensors with its caches laid as the
// shared form takes them.
func (s *Synthesizer) sharedTensors(ins, outs []onnx.Tensor) ([]onnx.Tensor, []onnx.Tensor) {
	ins, outs = slices.Clone(ins), slices.Clone(outs)
	for _, ts := range [][]onnx.Tensor{ins[2:], outs[1:]} {
		for i := range ts {
			ts[i].Dims = []int64{-1, int64(s.cfg.heads), -1, int64(s.cfg.headDim)}
		}
	}
	return ins, outs
}

// kvCaches pairs the decode step's cache inputs and outputs by layer.
func (s *Synthesizer) kvCaches() ([]quantize.KVCache, error) {
	var caches []quantize.KVCache
	present := func(past string) string { return strings.Replace(past, "past_", "present_", 1) }
	for _, key := range s.decodeIn[2:] {
		if !strings.Contains(key, "key") {
			continue
		}
		value := strings.Replace(key, "key", "value", 1)
		if !slices.Contains(s.decodeIn[2:], value) {
			return nil, fmt.Errorf("no %s beside %s", value, key)
		}
		caches = append(caches, quantize.KVCache{Key: [2]string{key, present(key)}, Value: [2]string{value, present(value)}})
	}
	if 2*len(caches) != len(s.decodeIn[2:]) {
		return nil, fmt.Errorf("the caches %v are not keys and values", s.decodeIn[2:])
	}
	return caches, nil
}

// deriveSharedKV writes the decode step's shared form to model, with
// links to the weights it reads beside it, and checks it against the
// original: the verdict, sharedKVKept or why not. Its weights stay in
// their files: inline, at full size they would be the graph's 70 MB (int4)
// or 440 MB (fp32) held in memory three times over.
func (s *Synthesizer) deriveSharedKV(path, model string, ins, outs []onnx.Tensor, opts onnx.Options) (string, error) {
	graph, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	caches, err := s.kvCaches()
	if err != nil {
		return "not rewritten: " + err.Error(), nil
	}
	shared, err := quantize.SharedKVAttention(graph, caches, s.decodeIn[1])
	if errors.Is(err, quantize.ErrNotAttention) {
		return "not rewritten: " + err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	if s.tamperKV != nil {
		shared = s.tamperKV(shared)
	}
	if err := writeGraph(model, shared); err != nil {
		return "", err
	}
	if err := linkData(path, filepath.Dir(model)); err != nil {
		return "", err
	}
	if err := s.sameSteps(graph, shared, filepath.Dir(path), ins, outs, opts); err != nil {
		return "not kept: " + err.Error(), nil
	}
	return sharedKVKept, nil
}

// linkData puts the external data files the model at path reads into dir,
// as hard links, or copies where the two are on different file systems.
func linkData(path, dir string) error {
	sources, err := onnx.ModelSources(path)
	if err != nil {
		return err
	}
	for _, src := range sources[1:] {
		dst := filepath.Join(dir, filepath.Base(src))
		_ = os.Remove(dst)
		if os.Link(src, dst) == nil {
			continue
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		err = derived.WriteFile(dst, func(w io.Writer) error {
			_, err := io.Copy(w, in)
			return err
		})
		in.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// sameSteps runs the original decode step and its shared form (their
// weights in dataDir), from the same cached rows, over the same steps,
// and returns an error if their hidden states or caches differ by more
// than sharedKVTolerance of the original's peak. Both run in their exact
// form (quantize.ExactActivations), in which only rounding tells them
// apart, one after the other, so that one is in memory at a time.
func (s *Synthesizer) sameSteps(graph, shared []byte, dataDir string, ins, outs []onnx.Tensor, opts onnx.Options) error {
	c := s.cfg
	cached := make([][]float32, len(s.decodeIn)-2)
	rng := rand.New(rand.NewPCG(sharedKVCheckRows, 0x6b76))
	for i := range cached {
		cached[i] = make([]float32, sharedKVCheckRows*c.heads*c.headDim)
		for j := range cached[i] {
			cached[i][j] = float32(rng.NormFloat64())
		}
	}
	rows := make([][]int32, sharedKVCheckSteps)
	for i := range rows {
		rows[i] = c.row(nil, c.assistantSlot, nil)
		for k := 1; k < len(rows[i]); k++ {
			rows[i][k] = int32(rng.IntN(c.codebook))
		}
	}
	want, err := s.stepsThrough(graph, dataDir, "the decode step's exact form", ins, outs, opts, cached, rows, false)
	if err != nil {
		return err
	}
	sharedIns, sharedOuts := s.sharedTensors(ins, outs)
	got, err := s.stepsThrough(shared, dataDir, "the decode step's shared form", sharedIns, sharedOuts, opts, cached, rows, true)
	if err != nil {
		return err
	}
	var d difference
	for i := range want {
		d.add(want[i], got[i])
	}
	if d.diff > sharedKVTolerance*max(d.peak, 1e-3) {
		return fmt.Errorf("its hidden states or caches differ by %.3g (peak %.3g; %d steps on %d cached rows)", d.diff, d.peak, sharedKVCheckSteps, sharedKVCheckRows)
	}
	slog.Debug("moss: the decode step's shared form agrees with the original", "max_diff", d.diff, "peak", d.peak)
	return nil
}

// stepsThrough runs graph (in its exact form), from the cached rows
// (laid [1, rows, heads, head_dim]), over rows, on a growing cache or a
// shared one: each step's hidden state, then the caches at the end laid
// [1, rows, heads, head_dim].
func (s *Synthesizer) stepsThrough(graph []byte, dataDir, name string, ins, outs []onnx.Tensor, opts onnx.Options, cached [][]float32, rows [][]int32, shared bool) ([][]float32, error) {
	c := s.cfg
	sess, err := openExact(graph, dataDir, name, ins, outs, opts)
	if err != nil {
		return nil, err
	}
	defer sess.Destroy()
	past := make([]ort.Value, len(cached))
	defer func() { destroyAll(past) }()
	for i, v := range cached {
		if past[i], err = ort.NewTensor(ort.NewShape(1, int64(len(v)/(c.heads*c.headDim)), int64(c.heads), int64(c.headDim)), slices.Clone(v)); err != nil {
			return nil, fmt.Errorf("moss: %w", err)
		}
	}
	n := sharedKVCheckRows
	var kv *sharedKV
	if shared {
		if kv, err = newSharedKV(len(past), c.heads, c.headDim, n+len(rows)); err != nil {
			return nil, err
		}
		defer kv.destroy()
		if err := kv.write(past, 0, n); err != nil {
			return nil, err
		}
	}
	var out [][]float32
	for _, row := range rows {
		var hidden []float32
		if shared {
			hidden, _, err = s.decodeOnce(sess, row, n, kv.tensors, s.presentOrder(kv.tensors))
		} else {
			var next []ort.Value
			if hidden, next, err = s.decodeOnce(sess, row, n, past, nil); err == nil {
				destroyAll(past)
				past = next
			}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, hidden)
		n++
	}
	for i := range past {
		if !shared {
			out = append(out, slices.Clone(past[i].(*ort.Tensor[float32]).GetData()))
			continue
		}
		laid := make([]float32, 0, n*c.heads*c.headDim)
		for r := range n {
			for h := range c.heads {
				laid = append(laid, kv.bufs[i][(h*kv.rows+r)*c.headDim:(h*kv.rows+r+1)*c.headDim]...)
			}
		}
		out = append(out, laid)
	}
	return out, nil
}

// decodeOnce runs the decode step sess once over row, after n cached
// rows: its hidden state, and the caches it returns where outs leaves
// them to ONNX Runtime (in the input order).
func (s *Synthesizer) decodeOnce(sess *onnx.Session, row []int32, n int, past, present []ort.Value) ([]float32, []ort.Value, error) {
	rowT, err := ort.NewTensor(ort.NewShape(1, 1, int64(len(row))), row)
	if err != nil {
		return nil, nil, fmt.Errorf("moss: %w", err)
	}
	lenT, err := ort.NewTensor(ort.NewShape(1), []int32{int32(n)})
	if err != nil {
		destroy(rowT)
		return nil, nil, fmt.Errorf("moss: %w", err)
	}
	defer destroy(rowT, lenT)
	outs := make([]ort.Value, len(s.decodeOut))
	copy(outs[1:], present)
	if err := sess.Run(append([]ort.Value{rowT, lenT}, past...), outs); err != nil {
		if present == nil {
			destroyAll(outs)
		}
		return nil, nil, fmt.Errorf("moss: decode step: %w", err)
	}
	hidden, err := lastHidden(outs[0], s.cfg.hidden)
	destroy(outs[0])
	if present != nil {
		return hidden, nil, err
	}
	if err != nil {
		destroyAll(outs[1:])
		return nil, nil, err
	}
	return hidden, s.decodeOrder(s.decodeOut[1:], outs[1:]), nil
}

// presentOrder arranges values given in the decode step's input order
// (past_*) in its output order (present_*).
func (s *Synthesizer) presentOrder(past []ort.Value) []ort.Value {
	at := make(map[string]int, len(past))
	for i, name := range s.decodeIn[2:] {
		at[name] = i
	}
	present := make([]ort.Value, len(s.decodeOut)-1)
	for i, name := range s.decodeOut[1:] {
		present[i] = past[at[strings.Replace(name, "present_", "past_", 1)]]
	}
	return present
}

// difference is the largest difference between two runs' values, where
// it is among all the values added, and the first run's peak.
type difference struct {
	diff, peak float64
	at, n      int
}

func (d *difference) add(want, got []float32) {
	if len(want) != len(got) {
		d.diff, d.at = math.Inf(1), d.n
		return
	}
	for i := range want {
		d.peak = max(d.peak, math.Abs(float64(want[i])))
		if diff := math.Abs(float64(got[i] - want[i])); diff > d.diff {
			d.diff, d.at = diff, d.n+i
		}
	}
	d.n += len(want)
}
