package moss

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/internal/derived"
	"github.com/voiceassistant/voice/internal/graphedit"
	"github.com/voiceassistant/voice/internal/onnx"
)

// The codec's attention caches slide: each call concatenates the cached
// keys, values and positions with the new ones, attends over them, and
// slices off the last context's worth for the next call, so every call
// copies its whole state twice (25 MB at full size: 4-5 of a call's
// 11 ms). The published graph's cache outputs are Slices too (browser
// runtimes name their symbolic dims Sliceattn_cached_keys_out_<i>_dim_2);
// upstream's PyTorch codec keeps them as rings written in place instead
// (OpenMOSS/MOSS-TTS, moss_tts_delay/core/audio_tokenzier/
// modeling_moss_audio_tokenizer.py, RingKVCache.complete). So at its first
// load the synthesizer derives from the codec a graph whose caches are
// rings (graphedit.RingCaches), long enough for a call's new entries and
// the window its queries see, checks it against the original over a run
// long enough for every ring to wrap, and keeps it only if the audio
// agrees; the caches are then one set of tensors that each call writes in
// place, not two that swap.
const (
	ringKept = "ring"
	// ringVersion names the rewrite: a change to it makes the rings
	// anew.
	ringVersion = "ring-caches 2"
	// ringTolerance bounds how far the ring's audio may stray from the
	// original's, relative to the original's peak, both in their exact
	// form: only the order of the attention's sums differs (2-4e-7 of a
	// 0.41 peak over 480 frames at full size). A ring one call short
	// (as long as its window, so a call's first queries lose entries the
	// original shows them) strays 6.4e-5 at full size, random weights
	// spreading each query over all 1,600 entries.
	ringTolerance = 1e-5
)

// ringForm is what a codec's ring form declares of its caches.
type ringForm struct {
	lengths []int64            // each attention cache's ring length
	shapes  map[string][]int64 // each cache tensor, in and out, by name
}

// useRingCodec replaces the codec session, opened on codec, with its
// ring form when that is made, checked and kept; otherwise the codec
// stays as it is. Its error is a stop's: a start stopped ends here.
func (s *Synthesizer) useRingCodec(codec graphFile, opts onnx.Options) error {
	ring, form, err := s.ringCodec(codec, opts)
	if endsTheLoad(err) {
		return fmt.Errorf("moss: %s: %w", codec.path, err)
	}
	if err != nil {
		slog.Warn("moss: the codec runs with its sliding caches: no ring form", "model", codec.path, "err", err)
		return nil
	}
	if ring != nil {
		_ = s.codec.Destroy()
		s.codec, s.ring = ring, form
	}
	return nil
}

// ringCodec opens the codec's ring form, deriving it at the first load;
// nil where it is not kept (the verdict says why, and was logged once).
func (s *Synthesizer) ringCodec(codec graphFile, opts onnx.Options) (*onnx.Session, *ringForm, error) {
	model, err := ringRewrite.load(codec.path, func(model string) (string, error) {
		return s.deriveApart(ringRewrite, codec.path, model, opts, func() (string, error) { return s.ringOf(codec, model, opts) })
	})
	if err != nil || model == "" {
		return nil, nil, err
	}
	form, err := s.ringFormOf(model)
	if err != nil {
		return nil, nil, err
	}
	ins, outs := form.tensors(codec.ins, codec.outs)
	sess, err := onnx.Open(model, ins, outs, opts, Hint)
	if err != nil {
		return nil, nil, err
	}
	return sess, form, nil
}

// ringRewrite is the codec's ring form. Its check holds the codec's
// graph, inline, four times in Go and twice in ONNX Runtime, and two sets
// of the codec's state: the full-size stand-ins' child peaked at 207 MiB
// (int4, 7 MiB of files) and 375 MiB (fp32, 42 MiB).
var ringRewrite = graphRewrite{engine: "moss-ring", version: ringVersion, kept: ringKept,
	keeping: "the codec's caches are rings written in place", leaving: "the codec runs with its sliding caches",
	memory: rewriteMemory{base: 175 << 20, perByte: 4.8}}

// ringOf writes the ring form of the codec, whose session s.codec is, to
// model and checks it: the verdict. Each ring is its window and what the
// largest call adds.
func (s *Synthesizer) ringOf(codec graphFile, model string, opts onnx.Options) (string, error) {
	steps, err := s.ringSteps()
	if err != nil {
		return "", err
	}
	lengths := make([]int64, len(steps))
	for i, step := range steps {
		lengths[i] = s.attns[i].CacheShape[2] + maxCodecBatch*step
	}
	return s.deriveRing(codec.path, model, lengths, steps, codec.ins, codec.outs, opts)
}

// writeGraph writes a derived graph to path.
func writeGraph(path string, graph []byte) error {
	return derived.WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(graph)
		return err
	})
}

// openExact opens graph in its exact form (graphedit.ExactActivations),
// the form a rewrite is checked in; its external data, if any, in
// dataDir.
func openExact(graph []byte, dataDir, name string, ins, outs []onnx.Tensor, opts onnx.Options) (*onnx.Session, error) {
	exact, err := graphedit.ExactActivations(graph)
	if err != nil {
		return nil, err
	}
	return onnx.OpenData(exact, dataDir, name, ins, outs, opts)
}

// ringSteps are the entries a frame adds to each cache, which one frame
// through the original codec says (its attention offsets move by them).
// A ring is its window plus what the largest call (maxCodecBatch frames)
// adds.
func (s *Synthesizer) ringSteps() ([]int64, error) {
	sets, err := s.codecStateSets(nil)
	if err != nil {
		return nil, err
	}
	defer destroyCodecSets(sets)
	cs := s.codecRun(sets)
	if err := cs.decode([][]int32{make([]int32, s.cfg.nVQ)}, nil); err != nil {
		return nil, err
	}
	steps := make([]int64, len(s.attns))
	for i, a := range s.attns {
		step := cs.state[len(s.offsets)+4*i].(*ort.Tensor[int32]).GetData()[0]
		if step <= 0 {
			return nil, fmt.Errorf("moss: codec attention %s moved by %d entries for a frame", a.OffsetIn, step)
		}
		steps[i] = int64(step)
	}
	return steps, nil
}

// deriveRing writes the codec's ring form to model and checks it against
// the original: the verdict, ringKept or why not.
func (s *Synthesizer) deriveRing(path, model string, lengths, steps []int64, ins, outs []onnx.Tensor, opts onnx.Options) (string, error) {
	graph, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if graph, err = graphedit.Inline(graph, filepath.Dir(path)); err != nil {
		return "", err
	}
	caches := make([]graphedit.SlidingCache, len(s.attns))
	for i, a := range s.attns {
		caches[i] = graphedit.SlidingCache{
			Positions: [2]string{a.PositionsIn, a.PositionsOut},
			Tensors:   [][2]string{{a.KeysIn, a.KeysOut}, {a.ValuesIn, a.ValuesOut}},
			Ring:      lengths[i],
		}
	}
	ringGraph, err := graphedit.RingCaches(graph, caches)
	if errors.Is(err, graphedit.ErrNotSliding) {
		return "not rewritten: " + err.Error(), nil
	}
	if err != nil {
		return "", err
	}
	if err := writeGraph(model, ringGraph); err != nil {
		return "", err
	}
	form, err := s.ringFormOf(model)
	if err != nil {
		return "not loaded: " + err.Error(), nil
	}
	if err := s.sameAudio(graph, ringGraph, form, steps, ins, outs, opts); err != nil {
		return "not kept: " + err.Error(), nil
	}
	return ringKept, nil
}

// ringFormOf reads what the ring form at model declares of its caches:
// the positions' length is the ring's; the keys may lie transposed.
func (s *Synthesizer) ringFormOf(model string) (*ringForm, error) {
	ins, outs, err := onnx.Declaration(model)
	if err != nil {
		return nil, err
	}
	declared := map[string][]int64{}
	for _, d := range append(ins, outs...) {
		declared[d.Name] = d.Dimensions
	}
	form := &ringForm{lengths: make([]int64, len(s.attns)), shapes: map[string][]int64{}}
	for i, a := range s.attns {
		positions := declared[a.PositionsIn]
		if len(positions) != 2 || positions[1] < a.PositionsShape[1] {
			return nil, fmt.Errorf("%w: moss: the codec's ring form declares %s as %v", ErrModelMismatch, a.PositionsIn, positions)
		}
		form.lengths[i] = positions[1]
		for _, name := range []string{a.KeysIn, a.ValuesIn, a.KeysOut, a.ValuesOut, a.PositionsIn, a.PositionsOut} {
			want, axis := a.CacheShape, 2
			if name == a.PositionsIn || name == a.PositionsOut {
				want, axis = a.PositionsShape, 1
			}
			if !sameValues(declared[name], want, axis, form.lengths[i]) {
				return nil, fmt.Errorf("%w: moss: the codec's ring form declares %s as %v", ErrModelMismatch, name, declared[name])
			}
			form.shapes[name] = declared[name]
		}
	}
	return form, nil
}

// sameValues says whether dims hold shape's values, in any order (the
// ring form may lay a cache transposed), its axis the ring's length.
func sameValues(dims, shape []int64, axis int, ring int64) bool {
	want, have := ringDims(shape, axis, ring), slices.Clone(dims)
	slices.Sort(want)
	slices.Sort(have)
	return slices.Equal(want, have)
}

// tensors are the codec's tensors with its caches as the ring form
// declares them.
func (f *ringForm) tensors(ins, outs []onnx.Tensor) ([]onnx.Tensor, []onnx.Tensor) {
	ins, outs = slices.Clone(ins), slices.Clone(outs)
	for _, ts := range [][]onnx.Tensor{ins, outs} {
		for j, t := range ts {
			if dims, ok := f.shapes[t.Name]; ok {
				ts[j].Dims = dims
			}
		}
	}
	return ins, outs
}

func ringDims(dims []int64, axis int, length int64) []int64 {
	d := slices.Clone(dims)
	d[axis] = length
	return d
}

// sameAudio runs the original codec graph and its ring form over the same
// frames, in calls of every size the synthesizer makes, until every ring
// has wrapped (a frame adds steps entries to each), and returns an error
// if their audio differs by more than ringTolerance of the original's
// peak. Both run in their exact form (graphedit.ExactActivations), in
// which only rounding tells them apart.
func (s *Synthesizer) sameAudio(graph, ringGraph []byte, form *ringForm, steps []int64, ins, outs []onnx.Tensor, opts onnx.Options) error {
	original, err := openExact(graph, "", "the codec's exact form", ins, outs, opts)
	if err != nil {
		return err
	}
	defer original.Destroy()
	ringIns, ringOuts := form.tensors(ins, outs)
	ring, err := openExact(ringGraph, "", "the codec's ring form", ringIns, ringOuts, opts)
	if err != nil {
		return err
	}
	defer ring.Destroy()
	frames := 0
	for i := range s.attns {
		frames = max(frames, int(form.lengths[i]/steps[i])+2*maxCodecBatch)
	}
	rng := rand.New(rand.NewPCG(uint64(frames), 0x7269_6e67))
	codes := make([][]int32, frames)
	for i := range codes {
		codes[i] = make([]int32, s.cfg.nVQ)
		for k := range codes[i] {
			codes[i][k] = int32(rng.IntN(s.cfg.codebook))
		}
	}
	var calls []int
	for n, i := 0, 0; n < frames; i++ {
		size := min([]int{maxCodecBatch, 1, maxCodecBatch, 3, maxCodecBatch, 2, maxCodecBatch, 4}[i%8], frames-n)
		calls = append(calls, size)
		n += size
	}
	audioOf := func(sess *onnx.Session, form *ringForm) ([]float32, error) {
		saved := s.codec
		s.codec = sess
		defer func() { s.codec = saved }()
		sets, err := s.codecStateSets(form)
		if err != nil {
			return nil, err
		}
		defer destroyCodecSets(sets)
		cs := s.codecRun(sets)
		var out []float32
		next := 0
		for _, n := range calls {
			if err := cs.decode(codes[next:next+n], func(a []float32) { out = append(out, a...) }); err != nil {
				return nil, err
			}
			next += n
		}
		return out, nil
	}
	want, err := audioOf(original, nil)
	if err != nil {
		return err
	}
	got, err := audioOf(ring, form)
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d samples from the ring form, %d from the original", len(got), len(want))
	}
	var d difference
	d.add(want, got)
	if d.diff > ringTolerance*max(d.peak, 1e-3) {
		return fmt.Errorf("its audio differs by %.3g at sample %d of %d (peak %.3g; %d frames in %d calls)", d.diff, d.at, len(want), d.peak, frames, len(calls))
	}
	slog.Debug("moss: the codec's ring form agrees with the original", "max_diff", d.diff, "peak", d.peak, "frames", frames, "calls", len(calls))
	return nil
}

// codecRun is a codec state over sets, for runs outside a chunk.
func (s *Synthesizer) codecRun(sets [2][]ort.Value) *codecState {
	return &codecState{s: s, state: sets[0], next: sets[1]}
}

// decode runs the codec once over frames, handing their audio to emit
// (when not nil).
func (cs *codecState) decode(frames [][]int32, emit func([]float32)) error {
	cs.pending = append(cs.pending, frames...)
	return cs.run(func(a []float32) error {
		if emit != nil {
			emit(a)
		}
		return nil
	}, len(frames))
}
