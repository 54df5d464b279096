package moss

import (
	"fmt"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// codecState is the codec's streaming state for one text chunk:
// transformer offsets, attention offsets, caches and cached positions, in
// the codec session's input order after audio_codes and audio_code_lengths.
type codecState struct {
	s     *Synthesizer
	state []ort.Value
	// next receives the state a call returns, in tensors of the
	// synthesizer's own (the state's shapes do not change), and then the
	// two swap: without them ONNX Runtime would allocate the returned
	// state and onnxruntime_go copy it into new Go slices, three copies of
	// the codec's caches (25 MB at full size) live at once instead of
	// two. Sliding caches cannot be written over their input; rings
	// (ring.go) are, and both sets then hold the same cache tensors.
	next    []ort.Value
	pending [][]int32 // frames not decoded yet
	calls   int       // codec calls made
	buf     []float32
	// The chunk's audio so far, per channel, and when its first came out:
	// how far it runs ahead of playback (budget).
	emitted    int
	firstAudio time.Time
}

func (s *Synthesizer) newCodecState() *codecState {
	cs := &codecState{s: s}
	cs.reset()
	return cs
}

// reset sets the state to its start: zero offsets and caches, positions
// -1. The state's two sets of tensors are the synthesizer's, made when it
// opens and reused by every chunk (calls are serialized): making them
// anew, 50 MB at full size, took tens of milliseconds of each chunk's
// first audio.
func (cs *codecState) reset() {
	s := cs.s
	cs.state, cs.next = s.codecSets[0], s.codecSets[1]
	s.startCodecState(cs.state)
}

// startCodecState sets state to the codec's start: zero offsets and
// caches, positions -1.
func (s *Synthesizer) startCodecState(state []ort.Value) {
	for i, v := range state {
		switch t := v.(type) {
		case *ort.Tensor[float32]:
			clear(t.GetData())
		case *ort.Tensor[int32]:
			d := t.GetData()
			clear(d)
			if j := i - len(s.offsets); j >= 0 && j%4 == 3 { // an attention's cached positions
				for k := range d {
					d[k] = -1
				}
			}
		}
	}
}

// codecStateSets are the two sets of tensors a codec state uses in turn,
// set to the codec's start. With rings (ring, the codec's ring form), the
// caches are one set of tensors in both: each call writes them in place,
// and only the offsets swap.
func (s *Synthesizer) codecStateSets(ring *ringForm) ([2][]ort.Value, error) {
	var sets [2][]ort.Value
	first, err := s.codecStateTensors(ring, nil)
	if err != nil {
		return sets, err
	}
	var shared []ort.Value
	if ring != nil {
		shared = first
	}
	second, err := s.codecStateTensors(ring, shared)
	if err != nil {
		destroyAll(first)
		return sets, err
	}
	sets = [2][]ort.Value{first, second}
	for _, set := range sets {
		s.startCodecState(set)
	}
	return sets, nil
}

// destroyCodecSets destroys the tensors of both sets, each once.
func destroyCodecSets(sets [2][]ort.Value) {
	for i, v := range sets[1] {
		if i < len(sets[0]) && sets[0][i] == v {
			sets[1][i] = nil
		}
	}
	destroyAll(sets[0])
	destroyAll(sets[1])
}

// codecStateTensors are tensors for a codec state, in the codec session's
// input order: per transformer an offset, per attention layer its offset,
// cached keys and values and cached positions, the caches as ring
// declares them where given, and shared's where shared is given.
func (s *Synthesizer) codecStateTensors(ring *ringForm, shared []ort.Value) ([]ort.Value, error) {
	var state []ort.Value
	add := func(v ort.Value, err error) error {
		if err != nil {
			return fmt.Errorf("moss: codec state: %w", err)
		}
		state = append(state, v)
		return nil
	}
	for _, o := range s.offsets {
		if err := add(ort.NewEmptyTensor[int32](ort.NewShape(o.Shape...))); err != nil {
			destroyAll(state)
			return nil, err
		}
	}
	for _, a := range s.attns {
		keys, values, positions := a.CacheShape, a.CacheShape, a.PositionsShape
		if ring != nil {
			keys, values, positions = ring.shapes[a.KeysIn], ring.shapes[a.ValuesIn], ring.shapes[a.PositionsIn]
		}
		tensors := []func() (ort.Value, error){
			func() (ort.Value, error) { return ort.NewEmptyTensor[int32](ort.NewShape(a.OffsetShape...)) },
			func() (ort.Value, error) { return ort.NewEmptyTensor[float32](ort.NewShape(keys...)) },
			func() (ort.Value, error) { return ort.NewEmptyTensor[float32](ort.NewShape(values...)) },
			func() (ort.Value, error) { return ort.NewEmptyTensor[int32](ort.NewShape(positions...)) },
		}
		for k, make := range tensors {
			if k > 0 && shared != nil {
				state = append(state, shared[len(state)])
				continue
			}
			if err := add(make()); err != nil {
				destroyAll(state) // never shared: a failure comes before any
				return nil, err
			}
		}
	}
	return state, nil
}

// budget is how many frames the next codec call decodes, as upstream's
// streaming decode chooses it (OpenMOSS/MOSS-TTS-Nano
// ort_cpu_runtime.py:237-257, asked at every frame by
// onnx_tts_runtime.py:552-567): one frame until the chunk's audio runs
// 0.2 s ahead of the time since its first audio, then 2, 4 (0.55 s) and
// 8 (1.1 s). Synthesis slower than playback keeps it at one frame, so
// each frame is heard as soon as it is made; faster, the calls grow and
// cost less per frame.
func (cs *codecState) budget() int {
	if cs.s.codecBatch > 0 {
		return cs.s.codecBatch
	}
	if cs.firstAudio.IsZero() {
		return 1
	}
	played := cs.s.now().Sub(cs.firstAudio)
	lead := time.Duration(cs.emitted)*time.Second/time.Duration(cs.s.format.Rate) - max(played, 0)
	switch {
	case lead < 200*time.Millisecond:
		return 1
	case lead < 550*time.Millisecond:
		return 2
	case lead < 1100*time.Millisecond:
		return 4
	}
	return maxCodecBatch
}

// push queues a frame and decodes once a batch is ready.
func (cs *codecState) push(frame []int32, emit func([]float32) error) error {
	cs.pending = append(cs.pending, frame)
	n := cs.budget()
	if len(cs.pending) < n {
		return nil
	}
	return cs.run(emit, n)
}

// flush decodes every pending frame (fewer than a budget's), in one call
// as upstream's last decode does.
func (cs *codecState) flush(emit func([]float32) error) error {
	for len(cs.pending) > 0 {
		if err := cs.run(emit, len(cs.pending)); err != nil {
			return err
		}
	}
	return nil
}

// run decodes up to n pending frames and emits the audio.
func (cs *codecState) run(emit func([]float32) error, n int) error {
	s := cs.s
	n = min(len(cs.pending), n, maxCodecBatch)
	frames := cs.pending[:n]
	codes := make([]int32, 0, n*s.cfg.nVQ)
	for _, f := range frames {
		codes = append(codes, f...)
	}
	cs.pending = append(cs.pending[:0], cs.pending[n:]...)
	if s.resetCodec {
		cs.reset()
	}
	codesT, err := ort.NewTensor(ort.NewShape(1, int64(n), int64(s.cfg.nVQ)), codes)
	if err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	lenT, err := ort.NewTensor(ort.NewShape(1), []int32{int32(n)})
	if err != nil {
		destroy(codesT)
		return fmt.Errorf("moss: %w", err)
	}
	outs := append(make([]ort.Value, 2, 2+len(cs.next)), cs.next...)
	err = s.codec.Run(append([]ort.Value{codesT, lenT}, cs.state...), outs)
	destroy(codesT, lenT)
	if err != nil {
		destroy(outs[0], outs[1])
		return fmt.Errorf("moss: codec decode step: %w", err)
	}
	cs.calls++
	cs.state, cs.next = cs.next, cs.state
	samples, err := cs.interleave(outs[0], outs[1])
	destroy(outs[0], outs[1])
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return nil
	}
	if cs.firstAudio.IsZero() {
		cs.firstAudio = s.now()
	}
	cs.emitted += len(samples) / s.format.Channels
	return emit(samples)
}

// interleave turns channel-major audio [1, ch, m] with audio_lengths new
// samples per channel into interleaved samples.
func (cs *codecState) interleave(audioV, lengthsV ort.Value) ([]float32, error) {
	a, ok1 := audioV.(*ort.Tensor[float32])
	l, ok2 := lengthsV.(*ort.Tensor[int32])
	if !ok1 || !ok2 || len(l.GetData()) < 1 {
		return nil, fmt.Errorf("%w: moss: codec outputs audio/audio_lengths are not float32/int32", ErrModelMismatch)
	}
	shape := a.GetShape()
	ch := cs.s.format.Channels
	if len(shape) != 3 || int(shape[1]) != ch {
		return nil, fmt.Errorf("%w: moss: codec audio has shape %v, expected [1,%d,n]", ErrModelMismatch, shape, ch)
	}
	m := int(shape[2])
	n := min(int(l.GetData()[0]), m)
	if n <= 0 {
		return nil, nil
	}
	d := a.GetData()
	out := make([]float32, n*ch)
	for c := range ch {
		src := d[c*m : c*m+n]
		for i, v := range src {
			out[i*ch+c] = v
		}
	}
	return out, nil
}
