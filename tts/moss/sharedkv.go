package moss

import (
	"context"
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
	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
)

// The decode step's KV cache grows: each step concatenates the cached
// keys and values, [1, rows, heads, head_dim], with the step's new row,
// returns the Concat as the next step's cache and transposes it for the
// attention, so every frame copies the whole cache three times (at full
// size 37 of a step's 90 MB of memory traffic at 250 rows). And the
// prefill graph takes no cache to continue from: a chunk's text either
// steps row by row from the voice prompt's cache or is prefilled with
// the prompt again (151 of a 17-word sentence's 229 rows). So at its
// first load the synthesizer derives from the decode step a graph whose
// attention is ONNX Runtime's GroupQueryAttention on cache buffers laid
// [1, heads, capacity, head_dim] that it writes in place, and which takes
// any number of rows at once after the cached ones
// (graphedit.SharedKVAttention); checks it against the original graphs;
// and keeps it only if their hidden states and caches agree. The cache
// is then one set of buffers: the voice prompt's rows, fed at Open, then
// a chunk's text rows fed in one call and its frames one a step, which
// the next chunk writes over. The prefill graph is not opened at all.
const (
	sharedKVKept    = "shared"
	sharedKVVersion = "shared-kv 2"
	// sharedKVTolerance bounds how far the shared form's hidden states and
	// caches may stray from the original's, relative to their peak, both in
	// their exact form: only the order of the sums differs (at full size
	// 5e-7 of the peak over steps). One entry too few or too many attended,
	// a row's position off by one, or a wrong scale, moves them by a tenth.
	sharedKVTolerance = 1e-5
	// The check's rows after the voice prompt: the first sharedKVCheckBatch
	// of them fed at once, the rest one a step; enough for every
	// position's rotation to differ.
	sharedKVCheckSteps, sharedKVCheckBatch = 20, 8
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

func (kv *sharedKV) destroy() {
	if kv != nil {
		destroyAll(kv.tensors)
	}
}

// graphFile is a graph's file and the tensors it is opened with.
type graphFile struct {
	path      string
	ins, outs []onnx.Tensor
}

// useSharedKV replaces the decode step's session, opened on decode, with
// its shared form when that is made, checked (against decode and
// prefill) and kept; otherwise the decode step stays as it is. The
// verdict is kept by the decode step's files, which at full size hold
// the prefill's weights too (moss_tts_global_shared.data). Its error is a
// stop's: a start stopped ends here.
func (s *Synthesizer) useSharedKV(decode, prefill graphFile, opts onnx.Options) error {
	model, err := sharedKVRewrite.load(decode.path, func(model string) (string, error) {
		return s.deriveApart(sharedKVRewrite, decode.path, model, opts, func() (string, error) { return s.deriveSharedKV(decode, prefill, model, opts) })
	})
	if endsTheLoad(err) {
		return fmt.Errorf("moss: %s: %w", decode.path, err)
	}
	if err == nil && model != "" {
		var sess *onnx.Session
		sharedIns, sharedOuts := s.sharedTensors(decode.ins, decode.outs)
		if sess, err = onnx.Open(model, sharedIns, sharedOuts, opts, Hint); err == nil {
			_ = s.decode.Destroy()
			sess.Moved = s.sharedMoved
			s.decode, s.sharedDecode = sess, true
			return nil
		}
	}
	if err != nil {
		slog.Warn("moss: "+sharedKVRewrite.leaving+": no shared form", "model", decode.path, "err", err)
	}
	return nil
}

// sharedKVRewrite is the decode step's shared form. Its check opens the
// prefill, the decode step and the shared form one after another, each
// with its prepacked weights on the heap: the full-size stand-ins' child
// peaked at 153 MiB (int4, 67 MiB of files) and 403 MiB (fp32, 421 MiB).
var sharedKVRewrite = graphRewrite{engine: "moss-shared-kv", version: sharedKVVersion, kept: sharedKVKept,
	keeping: "the decode step's KV cache is written in place and a chunk's text fed at once",
	leaving: "the decode step's KV cache grows by copies",
	memory:  rewriteMemory{base: 110 << 20, perByte: 0.75}}

// sharedMoved is what a call of the shared form reads and writes: its
// rows and length, the cached rows and its own (which the attention
// reads), and its hidden states and its rows of each cache; not the
// buffers' whole capacity, which it neither reads nor writes.
func (s *Synthesizer) sharedMoved(inputs, outputs []ort.Value) (in, out int64) {
	caches := int64(len(inputs) - 2)
	row := int64(4 * s.cfg.heads * s.cfg.headDim)
	var fed, cached int64
	if r, ok := inputs[0].(*ort.Tensor[int32]); ok {
		fed = int64(len(r.GetData()) / s.cfg.rowWidth)
	}
	if n, ok := inputs[1].(*ort.Tensor[int32]); ok && len(n.GetData()) == 1 {
		cached = int64(n.GetData()[0])
	}
	in = 4*fed*int64(s.cfg.rowWidth) + 4 + caches*(cached+fed)*row
	out = 4*fed*int64(s.cfg.hidden) + caches*fed*row
	return in, out
}

// sharedTensors are the decode step's tensors with its caches laid as the
// shared form takes them, and any number of rows in and hidden states out.
func (s *Synthesizer) sharedTensors(ins, outs []onnx.Tensor) ([]onnx.Tensor, []onnx.Tensor) {
	ins, outs = slices.Clone(ins), slices.Clone(outs)
	ins[0].Dims = []int64{-1, -1, int64(s.cfg.rowWidth)}
	for _, ts := range [][]onnx.Tensor{ins[2:], outs[1:]} {
		for i := range ts {
			ts[i].Dims = []int64{-1, int64(s.cfg.heads), -1, int64(s.cfg.headDim)}
		}
	}
	return ins, outs
}

// kvCaches pairs the decode step's cache inputs and outputs by layer.
func (s *Synthesizer) kvCaches() ([]graphedit.KVCache, error) {
	var caches []graphedit.KVCache
	present := func(past string) string { return strings.Replace(past, "past_", "present_", 1) }
	for _, key := range s.decodeIn[2:] {
		if !strings.Contains(key, "key") {
			continue
		}
		value := strings.Replace(key, "key", "value", 1)
		if !slices.Contains(s.decodeIn[2:], value) {
			return nil, fmt.Errorf("no %s beside %s", value, key)
		}
		caches = append(caches, graphedit.KVCache{Key: [2]string{key, present(key)}, Value: [2]string{value, present(value)}})
	}
	if 2*len(caches) != len(s.decodeIn[2:]) {
		return nil, fmt.Errorf("the caches %v are not keys and values", s.decodeIn[2:])
	}
	return caches, nil
}

// deriveSharedKV writes the decode step's shared form to model, with
// links to the weights it reads beside it, and checks it against the
// original graphs: the verdict, sharedKVKept or why not. Its weights stay
// in their files: inline, at full size they would be the graph's 70 MB
// (int4) or 440 MB (fp32) held in memory three times over.
func (s *Synthesizer) deriveSharedKV(decode, prefill graphFile, model string, opts onnx.Options) (string, error) {
	graph, err := os.ReadFile(decode.path)
	if err != nil {
		return "", err
	}
	caches, err := s.kvCaches()
	if err != nil {
		return "not rewritten: " + err.Error(), nil
	}
	shared, err := graphedit.SharedKVAttention(graph, graphedit.DecodeStep{
		Rows: s.decodeIn[0], Lengths: s.decodeIn[1], Hidden: s.decodeOut[:1], Caches: caches})
	if errors.Is(err, graphedit.ErrNotAttention) {
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
	if err := linkData(decode.path, filepath.Dir(model)); err != nil {
		return "", err
	}
	prefillGraph, err := os.ReadFile(prefill.path)
	if err != nil {
		return "", err
	}
	if err := s.sameRows(graph, shared, prefillGraph, decode, prefill, opts); err != nil {
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

// sameRows runs the original graphs and the shared form over the same
// rows and returns an error if their hidden states or caches differ by
// more than sharedKVTolerance of the original's peak: the voice prompt,
// prefilled by the original and fed at once from no cache to the shared
// form; then sharedKVCheckSteps rows of random codes, each a step of the
// original decode step, and to the shared form the first
// sharedKVCheckBatch at once and the rest one a step. All run in their
// exact form (graphedit.ExactActivations), in which only rounding tells
// them apart, one after another, so that one is in memory at a time.
func (s *Synthesizer) sameRows(graph, shared, prefillGraph []byte, decode, prefill graphFile, opts onnx.Options) error {
	c := s.cfg
	rng := rand.New(rand.NewPCG(sharedKVCheckSteps, 0x6b76))
	var rows []int32
	for range sharedKVCheckSteps {
		rows = c.row(rows, c.assistantSlot, nil)
		for k := 1; k < c.rowWidth; k++ {
			rows[len(rows)-c.rowWidth+k] = int32(rng.IntN(c.codebook))
		}
	}
	dataDir := filepath.Dir(decode.path)
	want, err := s.originalRows(graph, prefillGraph, dataDir, decode, prefill, opts, rows)
	if err != nil {
		return err
	}
	got, err := s.sharedRows(shared, dataDir, decode, opts, rows)
	if err != nil {
		return err
	}
	var d difference
	for i := range want {
		d.add(want[i], got[i])
	}
	if d.diff > sharedKVTolerance*max(d.peak, 1e-3) {
		return fmt.Errorf("its hidden states or caches differ by %.3g (peak %.3g; the voice prompt and %d rows)", d.diff, d.peak, sharedKVCheckSteps)
	}
	slog.Debug("moss: the decode step's shared form agrees with the original", "max_diff", d.diff, "peak", d.peak)
	return nil
}

// originalRows runs the original graphs (exact form): the prefill over
// the voice prompt, then the decode step over each of rows. It returns
// every row's hidden state, then the caches at the end laid [1, rows,
// heads, head_dim].
func (s *Synthesizer) originalRows(graph, prefillGraph []byte, dataDir string, decode, prefill graphFile, opts onnx.Options, rows []int32) ([][]float32, error) {
	sess, err := openExact(prefillGraph, dataDir, "the prefill's exact form", prefill.ins, prefill.outs, opts)
	if err != nil {
		return nil, err
	}
	hidden, past, err := s.runPrefill(context.Background(), sess, s.promptRows(), nil)
	sess.Destroy()
	if err != nil {
		return nil, err
	}
	defer func() { destroyAll(past) }()
	if sess, err = openExact(graph, dataDir, "the decode step's exact form", decode.ins, decode.outs, opts); err != nil {
		return nil, err
	}
	defer sess.Destroy()
	n := len(hidden) / s.cfg.hidden
	for i := 0; i < len(rows); i += s.cfg.rowWidth {
		h, next, err := s.decodeRows(sess, rows[i:i+s.cfg.rowWidth], n, past, nil)
		if err != nil {
			return nil, err
		}
		destroyAll(past)
		past = next
		hidden = append(hidden, h...)
		n++
	}
	out := [][]float32{hidden}
	for _, p := range past {
		out = append(out, slices.Clone(p.(*ort.Tensor[float32]).GetData()))
	}
	return out, nil
}

// sharedRows runs the shared form (exact form) as sameRows says, and
// returns what originalRows does.
func (s *Synthesizer) sharedRows(shared []byte, dataDir string, decode graphFile, opts onnx.Options, rows []int32) ([][]float32, error) {
	c := s.cfg
	sharedIns, sharedOuts := s.sharedTensors(decode.ins, decode.outs)
	sess, err := openExact(shared, dataDir, "the decode step's shared form", sharedIns, sharedOuts, opts)
	if err != nil {
		return nil, err
	}
	defer sess.Destroy()
	prompt := s.promptRows()
	feeds := [][]int32{prompt, rows[:sharedKVCheckBatch*c.rowWidth]}
	for i := sharedKVCheckBatch * c.rowWidth; i < len(rows); i += c.rowWidth {
		feeds = append(feeds, rows[i:i+c.rowWidth])
	}
	kv, err := newSharedKV(len(s.decodeIn)-2, c.heads, c.headDim, (len(prompt)+len(rows))/c.rowWidth)
	if err != nil {
		return nil, err
	}
	defer kv.destroy()
	var hidden []float32
	n := 0
	for _, feed := range feeds {
		h, _, err := s.decodeRows(sess, feed, n, kv.tensors, s.presentOrder(kv.tensors))
		if err != nil {
			return nil, err
		}
		hidden = append(hidden, h...)
		n += len(feed) / c.rowWidth
	}
	out := [][]float32{hidden}
	for i := range kv.bufs {
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

// decodeRows runs the decode step sess once over rows, after n cached
// rows: the rows' hidden states, and the caches it returns where present
// leaves them to ONNX Runtime (in the input order).
func (s *Synthesizer) decodeRows(sess *onnx.Session, rows []int32, n int, past, present []ort.Value) ([]float32, []ort.Value, error) {
	rowT, err := ort.NewTensor(ort.NewShape(1, int64(len(rows)/s.cfg.rowWidth), int64(s.cfg.rowWidth)), rows)
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
	hidden, err := allHidden(outs[0], s.cfg.hidden)
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
