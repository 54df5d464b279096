// Package xasr is the streaming X-ASR zh-en recognizer: a zipformer2
// transducer (icefall's streaming ONNX export: encoder, decoder, joiner) on
// ONNX Runtime, fed with 80-bin Kaldi fbank features (package asr/fbank),
// decoded with greedy search, one utterance at a time. *Recognizer
// implements pipeline.ASR.
//
// Model directory (shared/MODELS.md, X-ASR section):
//
//	encoder.int8.onnx  (or encoder.onnx, encoder-160ms.onnx)  streaming encoder, 160 ms chunks
//	decoder.onnx       (or decoder-160ms.onnx)                stateless decoder, context 2
//	joiner.int8.onnx   (or joiner.onnx, joiner-160ms.onnx)
//	tokens.txt                                                5000 `<piece> <id>` lines, <blk> = 0
//
// The "-160ms" names are those X-ASR publishes (fp32, see
// assets/manifest.json); the int8 ones are the smaller quantized export.
//
// Nothing about the encoder's size is hard-coded: the window (metadata T,
// 29 frames), its advance (decode_chunk_len, 16 frames = 160 ms), the number
// of layers and the shape of every cache come from the model file (see
// discoverEncoder).
package xasr

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
)

// Hint tells the user how to get the model; DIR stands for the model
// directory.
const Hint = "run `voice-agent models pull xasr-zh-en-streaming-160ms`, or download the X-ASR zh-en streaming 160 ms export " +
	"(encoder-160ms.onnx, decoder-160ms.onnx, joiner-160ms.onnx, tokens.txt from deployment/models/chunk-160ms-model " +
	"of huggingface.co/GilgameshWind/X-ASR-zh-en, or the int8 encoder.int8.onnx, decoder.onnx, joiner.int8.onnx) into DIR"

func hint(dir string) string { return strings.ReplaceAll(Hint, "DIR", dir) }

// TailPadding is the silence Finalize appends before draining: the encoder
// looks T - decode_chunk_len = 13 frames (130 ms) ahead and its attention
// and convolution caches hold the last words until later chunks push them
// through, so the end of the utterance is only decoded once ~1 s more
// audio has gone in. 1.2 s is within the 1.0-1.5 s that MODELS.md gives.
const TailPadding = 1200 * time.Millisecond

// logFloor is the fbank value of a frame with no energy, log(FLT_EPSILON):
// what digital silence gives. The last, partial window of an utterance is
// padded with it (see Finalize).
var logFloor = float32(math.Log(1.1920928955078125e-07))

// Model files in a directory, preferred name first.
var (
	encoderFiles = []string{"encoder.int8.onnx", "encoder.onnx", "encoder-160ms.onnx"}
	decoderFiles = []string{"decoder.onnx", "decoder.int8.onnx", "decoder-160ms.onnx"}
	joinerFiles  = []string{"joiner.int8.onnx", "joiner.onnx", "joiner-160ms.onnx"}
	tokensFile   = "tokens.txt"
)

// Result is a recognized utterance.
type Result struct {
	Text   string
	Tokens []int // token ids, without blanks
}

// Info describes the loaded model, as discovered from its files.
type Info struct {
	Dir                      string
	Encoder, Decoder, Joiner string // file paths
	Window, Shift            int    // feature frames per encoder call (T) and advance (decode_chunk_len)
	FramesPerChunk           int    // encoder output frames per call
	Layers                   int    // encoder layers (6 caches each)
	Caches                   int    // all state tensors, embed_states and processed_lens included
	ContextSize, Vocab, Dim  int
	ProcessedLensFromModel   bool // new_processed_lens is declared (icefall exports it)
	EncoderMeta, DecoderMeta map[string]string
}

// frameSource is where windows come from: an *fbank.Online, or a slice of
// frames in tests.
type frameSource interface {
	Ready() int
	Frame(i int) []float32
	Discard(before int)
}

// state is one encoder cache: in is fed to the next call, out receives
// new_<name>; they are swapped after each call.
type state struct {
	spec    cacheSpec
	in, out ort.Value
}

// Recognizer decodes one utterance at a time from 16 kHz mono audio. Its
// methods are serialized by a mutex; consecutive Accepts must be
// consecutive audio of the same utterance.
type Recognizer struct {
	mu     sync.Mutex
	info   Info
	tokens *Tokens
	// unk is <unk>'s id (-1 if the table has none). Like sherpa-onnx and
	// icefall's decoding, it is treated as blank: never emitted, and it
	// does not enter the decoder context.
	unk  int
	spec *encoderSpec

	enc, dec, join  *onnx.Session
	x               *ort.Tensor[float32] // [1, T, 80]
	encOut          *ort.Tensor[float32] // [1, T', D]
	states          []*state
	lens            *state // processed_lens
	encIns          []ort.Value
	encOuts         []ort.Value
	y               *ort.Tensor[int64]   // [1, context]
	decOut          *ort.Tensor[float32] // [1, D]; also the joiner's decoder_out input
	joinEnc         *ort.Tensor[float32] // [1, D]
	logit           *ort.Tensor[float32] // [1, vocab]
	decIns, decOuts []ort.Value
	joinIns         []ort.Value
	joinOuts        []ort.Value

	fb       *fbank.Online
	tail     []float32 // TailPadding of zeros
	samples  int64     // samples accepted since Reset
	next     int       // first feature frame of the next window
	hyp      []int     // emitted tokens
	decReady bool      // decOut is the decoder output for the current context
	partial  string    // text of hyp[:partialN]
	partialN int
	chunks   int // encoder calls since Reset

	// Test hooks.
	zeroStatesEachChunk bool   // forget the caches before every call
	afterEncoder        func() // called after each encoder run, before the swap
}

// New loads the model in dir. Missing files are named with how to get
// them; a model whose inputs, outputs or metadata are not those of X-ASR's
// streaming export fails with onnx.ErrModelMismatch.
func New(dir string, opts onnx.Options) (*Recognizer, error) {
	paths, err := findFiles(dir)
	if err != nil {
		return nil, err
	}
	tokens, err := LoadTokens(paths[3])
	if err != nil {
		return nil, err
	}
	if err := onnx.Init(opts.Library); err != nil {
		return nil, fmt.Errorf("xasr: %w", err)
	}
	r := &Recognizer{tokens: tokens, fb: fbank.NewOnline(), unk: -1}
	if id, ok := tokens.ID("<unk>"); ok {
		r.unk = id
	}
	r.info = Info{Dir: dir, Encoder: paths[0], Decoder: paths[1], Joiner: paths[2], Vocab: tokens.Len()}
	if err := r.open(opts); err != nil {
		_ = r.Close()
		return nil, err
	}
	r.tail = make([]float32, audio.Mono16k.Samples(TailPadding))
	r.reset()
	return r, nil
}

// findFiles returns the encoder, decoder, joiner and token table paths,
// or an error naming every missing one.
func findFiles(dir string) ([4]string, error) {
	var paths [4]string
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return paths, fmt.Errorf("xasr: model directory %s: %v; %s", dir, err, hint(dir))
	}
	var missing []string
	for i, names := range [][]string{encoderFiles, decoderFiles, joinerFiles, {tokensFile}} {
		for _, n := range names {
			p := filepath.Join(dir, n)
			if _, err := os.Stat(p); err == nil {
				paths[i] = p
				break
			}
		}
		if paths[i] == "" {
			m := filepath.Join(dir, names[0])
			if len(names) > 1 {
				m += " (or " + strings.Join(names[1:], ", ") + ")"
			}
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return paths, fmt.Errorf("xasr: missing %s; %s", strings.Join(missing, ", "), hint(dir))
	}
	return paths, nil
}

func (r *Recognizer) open(opts onnx.Options) error {
	h := hint(r.info.Dir)
	// Encoder: every input but x is state, fed back from new_<name>. Open
	// with those, then discover and check the details from the
	// declaration and the metadata.
	ins, outs, err := onnx.Declaration(r.info.Encoder)
	if err != nil {
		return fmt.Errorf("xasr: %w; %s", err, h)
	}
	encIn := []onnx.Tensor{{Name: inX, Type: onnx.Float, Dims: []int64{-1, -1, fbank.NumBins}}}
	encOut := []onnx.Tensor{{Name: outEncoder, Type: onnx.Float, Dims: []int64{-1, -1, -1}}}
	declaredOut := map[string]ort.InputOutputInfo{}
	for _, o := range outs {
		declaredOut[o.Name] = o
	}
	for _, in := range ins {
		if in.Name == inX {
			continue
		}
		encIn = append(encIn, onnx.Tensor{Name: in.Name, Type: in.DataType})
		if o, ok := declaredOut[newPrefix+in.Name]; ok {
			encOut = append(encOut, onnx.Tensor{Name: o.Name, Type: o.DataType})
		}
	}
	if r.enc, err = onnx.Open(r.info.Encoder, encIn, encOut, opts, h); err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	meta, err := metadata(r.enc)
	if err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	spec, err := discoverEncoder(r.info.Encoder, ins, outs, meta)
	if err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	r.spec = spec

	// Decoder: context size from metadata, else from y's declared shape.
	if ins, outs, err = onnx.Declaration(r.info.Decoder); err != nil {
		return fmt.Errorf("xasr: %w; %s", err, h)
	}
	if r.dec, err = onnx.Open(r.info.Decoder,
		[]onnx.Tensor{{Name: inDecoderY, Type: onnx.Int64, Dims: []int64{-1, -1}}},
		[]onnx.Tensor{{Name: outDecoder, Type: onnx.Float, Dims: []int64{-1, -1}}}, opts, h); err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	decMeta, err := metadata(r.dec)
	if err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	ctx, err := contextSize(r.info.Decoder, ins, decMeta)
	if err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	if v, ok, err := metaInt(r.info.Decoder, decMeta, "vocab_size"); err != nil {
		return fmt.Errorf("xasr: %w", err)
	} else if ok && v != r.tokens.Len() {
		return fmt.Errorf("xasr: %w", mismatch(r.info.Decoder, "metadata vocab_size=%d but %s has %d tokens", v, tokensFile, r.tokens.Len()))
	}
	decDim := dimOf(outs, outDecoder, 1)

	// Joiner.
	if ins, outs, err = onnx.Declaration(r.info.Joiner); err != nil {
		return fmt.Errorf("xasr: %w; %s", err, h)
	}
	if r.join, err = onnx.Open(r.info.Joiner,
		[]onnx.Tensor{{Name: inJoinerEnc, Type: onnx.Float, Dims: []int64{-1, -1}}, {Name: inJoinerDec, Type: onnx.Float, Dims: []int64{-1, -1}}},
		[]onnx.Tensor{{Name: outJoiner, Type: onnx.Float, Dims: []int64{-1, -1}}}, opts, h); err != nil {
		return fmt.Errorf("xasr: %w", err)
	}
	if v := dimOf(outs, outJoiner, 1); v >= 0 && int(v) != r.tokens.Len() {
		return fmt.Errorf("xasr: %w", mismatch(r.info.Joiner, "output logit has %d classes but %s has %d tokens", v, tokensFile, r.tokens.Len()))
	}

	// The joiner dimension: every declaration that states it must agree.
	dim := int64(-1)
	for _, d := range []struct {
		what string
		v    int64
	}{
		{r.info.Encoder + " encoder_out", spec.outDim},
		{r.info.Decoder + " decoder_out", decDim},
		{r.info.Joiner + " encoder_out", dimOf(ins, inJoinerEnc, 1)},
		{r.info.Joiner + " decoder_out", dimOf(ins, inJoinerDec, 1)},
	} {
		switch {
		case d.v < 0:
		case dim < 0:
			dim = d.v
		case d.v != dim:
			return fmt.Errorf("xasr: %w: %s has dimension %d, other parts of the model %d", onnx.ErrModelMismatch, d.what, d.v, dim)
		}
	}
	if dim <= 0 {
		return fmt.Errorf("xasr: %w: %s: no model file states the joiner dimension (encoder_out, decoder_out are symbolic)", onnx.ErrModelMismatch, r.info.Dir)
	}

	r.info.Window, r.info.Shift, r.info.Layers = spec.window, spec.shift, spec.layers
	r.info.Caches, r.info.ContextSize, r.info.Dim = len(spec.caches), ctx, int(dim)
	r.info.EncoderMeta, r.info.DecoderMeta = meta, decMeta
	if err := r.alloc(); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Dir, err)
	}
	return r.probe()
}

func contextSize(path string, ins []ort.InputOutputInfo, meta map[string]string) (int, error) {
	declaredCtx := dimOf(ins, inDecoderY, 1)
	ctx, ok, err := metaInt(path, meta, "context_size")
	switch {
	case err != nil:
		return 0, err
	case ok && declaredCtx >= 0 && int64(ctx) != declaredCtx:
		return 0, mismatch(path, "metadata context_size=%d but input y is declared with %d", ctx, declaredCtx)
	case !ok && declaredCtx < 0:
		return 0, mismatch(path, "no metadata context_size and input y has a symbolic context axis")
	case !ok:
		ctx = int(declaredCtx)
	}
	if ctx < 1 {
		return 0, mismatch(path, "context size %d", ctx)
	}
	return ctx, nil
}

// dimOf returns axis of the named tensor's declared shape, or -1 when it
// is symbolic or absent (onnx.Open reports absent tensors).
func dimOf(infos []ort.InputOutputInfo, name string, axis int) int64 {
	for _, in := range infos {
		if in.Name == name && axis < len(in.Dimensions) {
			return in.Dimensions[axis]
		}
	}
	return -1
}

func newTensor(typ ort.TensorElementDataType, shape []int64) (ort.Value, error) {
	s := ort.NewShape(shape...)
	switch typ {
	case onnx.Float:
		return ort.NewEmptyTensor[float32](s)
	case onnx.Int64:
		return ort.NewEmptyTensor[int64](s)
	case onnx.Int32:
		return ort.NewEmptyTensor[int32](s)
	}
	return nil, fmt.Errorf("unsupported tensor type %s", typ)
}

func (r *Recognizer) alloc() error {
	var err error
	d := int64(r.info.Dim)
	if r.x, err = ort.NewEmptyTensor[float32](ort.NewShape(1, int64(r.spec.window), fbank.NumBins)); err != nil {
		return err
	}
	r.encIns = []ort.Value{r.x}
	r.encOuts = []ort.Value{nil} // encoder_out: allocated once its length is known (probe)
	for _, c := range r.spec.caches {
		s := &state{spec: c}
		r.states = append(r.states, s)
		if s.in, err = newTensor(c.typ, c.shape); err != nil {
			return err
		}
		r.encIns = append(r.encIns, s.in)
		if c.fedBack {
			if s.out, err = newTensor(c.typ, c.shape); err != nil {
				return err
			}
			r.encOuts = append(r.encOuts, s.out)
		}
		if c.name == inProcessedLens {
			r.lens = s
			r.info.ProcessedLensFromModel = c.fedBack
		}
	}
	if r.y, err = ort.NewEmptyTensor[int64](ort.NewShape(1, int64(r.info.ContextSize))); err != nil {
		return err
	}
	if r.decOut, err = ort.NewEmptyTensor[float32](ort.NewShape(1, d)); err != nil {
		return err
	}
	if r.joinEnc, err = ort.NewEmptyTensor[float32](ort.NewShape(1, d)); err != nil {
		return err
	}
	if r.logit, err = ort.NewEmptyTensor[float32](ort.NewShape(1, int64(r.tokens.Len()))); err != nil {
		return err
	}
	r.decIns, r.decOuts = []ort.Value{r.y}, []ort.Value{r.decOut}
	r.joinIns, r.joinOuts = []ort.Value{r.joinEnc, r.decOut}, []ort.Value{r.logit}
	return nil
}

// probe runs each model once on silence: it learns how many frames the
// encoder returns per call, checks the shapes the models really produce,
// and warms the sessions up. The state it leaves is reset by New.
func (r *Recognizer) probe() error {
	fill(r.x.GetData(), logFloor)
	if err := r.enc.Run(r.encIns, r.encOuts); err != nil {
		return fmt.Errorf("xasr: %s: running the encoder on silence: %w", r.info.Encoder, err)
	}
	out := r.encOuts[0]
	r.encOuts[0] = nil
	shape := out.GetShape()
	if err := out.Destroy(); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Encoder, err)
	}
	if len(shape) != 3 || shape[0] != 1 || shape[1] < 1 || shape[2] != int64(r.info.Dim) {
		return fmt.Errorf("xasr: %w: %s: encoder_out came out %v for one window, expected [1, T', %d]", onnx.ErrModelMismatch, r.info.Encoder, shape, r.info.Dim)
	}
	r.info.FramesPerChunk = int(shape[1])
	var err error
	if r.encOut, err = ort.NewEmptyTensor[float32](shape); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Dir, err)
	}
	r.encOuts[0] = r.encOut
	if err := r.dec.Run(r.decIns, r.decOuts); err != nil {
		return fmt.Errorf("xasr: %s: running the decoder: %w", r.info.Decoder, err)
	}
	if err := r.join.Run(r.joinIns, r.joinOuts); err != nil {
		return fmt.Errorf("xasr: %s: running the joiner: %w", r.info.Joiner, err)
	}
	return nil
}

// Info describes the loaded model.
func (r *Recognizer) Info() Info {
	info := r.info
	info.EncoderMeta, info.DecoderMeta = maps.Clone(info.EncoderMeta), maps.Clone(info.DecoderMeta)
	return info
}

// Tokens is the model's token table.
func (r *Recognizer) Tokens() *Tokens { return r.tokens }

// Accept feeds a frame of 16 kHz mono audio, decodes every complete
// window, and returns the partial transcript so far (no final
// punctuation). Other formats are refused: the pipeline resamples before
// ASR. After an error, Reset before the next utterance.
func (r *Recognizer) Accept(f audio.Frame) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		return "", errClosed
	}
	if f.Rate != audio.ProcessingRate || f.Channels != 1 {
		return "", fmt.Errorf("xasr: got %s audio; the recognizer takes %s (resample before ASR)", f.Format, audio.Mono16k)
	}
	if err := r.fb.Accept(f.Samples); err != nil {
		return "", fmt.Errorf("xasr: %w", err)
	}
	r.samples += int64(len(f.Samples))
	if err := r.decode(r.fb, false); err != nil {
		return "", err
	}
	return r.partialText(), nil
}

var errClosed = errors.New("xasr: recognizer is closed")

// Finalize ends the utterance: it appends TailPadding of silence, decodes
// everything left (the last window, if partial, is completed with the
// log-floor value silence has, so no audio goes undecoded), and returns
// the final transcript with a closing full stop (AddFinalStop). The
// recognizer is then reset, ready for the next utterance, also after an
// error. With no audio since the last reset it returns "".
func (r *Recognizer) Finalize() (string, error) {
	res, err := r.FinalizeResult()
	return res.Text, err
}

// FinalizeResult is Finalize with the token ids.
func (r *Recognizer) FinalizeResult() (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		return Result{}, errClosed
	}
	defer r.reset()
	if r.samples == 0 {
		return Result{}, nil
	}
	if err := r.fb.Accept(r.tail); err != nil {
		return Result{}, fmt.Errorf("xasr: %w", err)
	}
	r.fb.InputFinished()
	if err := r.decode(r.fb, true); err != nil {
		return Result{}, err
	}
	return Result{Text: AddFinalStop(r.tokens.Detokenize(r.hyp)), Tokens: append([]int(nil), r.hyp...)}, nil
}

// Hypothesis returns the token ids decoded so far in this utterance.
func (r *Recognizer) Hypothesis() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.hyp...)
}

// Reset drops the utterance: zero caches, no features, empty hypothesis.
func (r *Recognizer) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc != nil {
		r.reset()
	}
}

func (r *Recognizer) reset() {
	for _, s := range r.states {
		s.in.ZeroContents()
	}
	r.fb.Reset()
	r.samples, r.next, r.chunks = 0, 0, 0
	r.hyp = r.hyp[:0]
	r.decReady = false
	r.partial, r.partialN = "", 0
}

func (r *Recognizer) partialText() string {
	if r.partialN != len(r.hyp) {
		r.partial, r.partialN = r.tokens.Detokenize(r.hyp), len(r.hyp)
	}
	return r.partial
}

// decode runs the encoder on every complete window of src, advancing by
// the shift and discarding frames no later window needs. With final set
// it then also decodes the frames left over, in windows completed with
// logFloor, until every frame has been the new part of some window.
func (r *Recognizer) decode(src frameSource, final bool) error {
	T, shift := r.spec.window, r.spec.shift
	x := r.x.GetData()
	for {
		ready := src.Ready()
		switch {
		case r.next+T <= ready:
		case final && r.next < ready:
		default:
			return nil
		}
		for t := range T {
			row := x[t*fbank.NumBins : (t+1)*fbank.NumBins]
			if r.next+t < ready {
				copy(row, src.Frame(r.next+t))
			} else {
				fill(row, logFloor)
			}
		}
		if err := r.chunk(); err != nil {
			return err
		}
		r.next += shift
		src.Discard(r.next)
	}
}

// chunk runs the encoder on r.x and greedy search on its output.
func (r *Recognizer) chunk() error {
	if r.zeroStatesEachChunk {
		for _, s := range r.states {
			s.in.ZeroContents()
		}
	}
	if err := r.enc.Run(r.encIns, r.encOuts); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Encoder, err)
	}
	if r.afterEncoder != nil {
		r.afterEncoder()
	}
	// Feed new_* back by swapping tensors, never the same tensor as input
	// and output of one run.
	k := 1
	for i, s := range r.states {
		if !s.spec.fedBack {
			continue
		}
		s.in, s.out = s.out, s.in
		r.encIns[1+i], r.encOuts[k] = s.in, s.out
		k++
	}
	if r.lens != nil && !r.lens.spec.fedBack {
		switch t := r.lens.in.(type) {
		case *ort.Tensor[int64]:
			for i := range t.GetData() {
				t.GetData()[i] += r.spec.lensStep
			}
		case *ort.Tensor[int32]:
			for i := range t.GetData() {
				t.GetData()[i] += int32(r.spec.lensStep)
			}
		}
	}
	r.chunks++
	return r.search()
}

// search is greedy transducer search over the encoder frames of one
// chunk: per frame the joiner's argmax; a token other than blank and <unk>
// is appended and the decoder rerun on the new context. At most one
// symbol per frame.
func (r *Recognizer) search() error {
	if !r.decReady {
		if err := r.runDecoder(); err != nil {
			return err
		}
	}
	d := r.info.Dim
	frames := r.encOut.GetData()
	enc := r.joinEnc.GetData()
	for t := range r.info.FramesPerChunk {
		copy(enc, frames[t*d:(t+1)*d])
		if err := r.join.Run(r.joinIns, r.joinOuts); err != nil {
			return fmt.Errorf("xasr: %s: %w", r.info.Joiner, err)
		}
		if y := argmax(r.logit.GetData()); y != 0 && y != r.unk {
			r.hyp = append(r.hyp, y)
			if err := r.runDecoder(); err != nil {
				return err
			}
		}
	}
	return nil
}

// runDecoder computes decOut for the last ContextSize tokens of the
// hypothesis. Before its start the context is icefall's [-1, ..., -1,
// blank] (MODELS.md says [0, 0]; the reference decoders, icefall's and
// sherpa-onnx's greedy search, start from this, and the exported decoder
// embeds -1 as zeros).
func (r *Recognizer) runDecoder() error {
	y := r.y.GetData()
	n := len(y)
	for i := range y {
		switch j := len(r.hyp) - n + i; {
		case j >= 0:
			y[i] = int64(r.hyp[j])
		case j == -1:
			y[i] = 0
		default:
			y[i] = -1
		}
	}
	if err := r.dec.Run(r.decIns, r.decOuts); err != nil {
		r.decReady = false
		return fmt.Errorf("xasr: %s: %w", r.info.Decoder, err)
	}
	r.decReady = true
	return nil
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func fill(s []float32, v float32) {
	for i := range s {
		s[i] = v
	}
}

// Close releases the sessions and tensors; the recognizer is unusable
// afterwards. It is safe to call twice.
func (r *Recognizer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	destroy := func(v ort.Value) {
		if v != nil {
			errs = append(errs, v.Destroy())
		}
	}
	for _, s := range r.states {
		destroy(s.in)
		destroy(s.out)
	}
	r.states, r.lens = nil, nil
	for _, t := range []**ort.Tensor[float32]{&r.x, &r.encOut, &r.decOut, &r.joinEnc, &r.logit} {
		if *t != nil {
			destroy(*t)
			*t = nil
		}
	}
	if r.y != nil {
		destroy(r.y)
		r.y = nil
	}
	r.encIns, r.encOuts, r.decIns, r.decOuts, r.joinIns, r.joinOuts = nil, nil, nil, nil, nil, nil
	for _, s := range []**onnx.Session{&r.enc, &r.dec, &r.join} {
		if *s != nil {
			errs = append(errs, (*s).Destroy())
			*s = nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("xasr: closing %s: %w", r.info.Dir, err)
	}
	return nil
}
