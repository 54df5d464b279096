package xasr

// Loading the model: finding its files, opening the encoder, decoder and
// joiner sessions and checking them against each other (the encoder's own
// signature is discovered in model.go), allocating the tensors, and
// probing the encoder's output length.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/internal/onnx"
)

// Model files in a directory, preferred name first.
var (
	encoderFiles = []string{"encoder.int8.onnx", "encoder.onnx", "encoder-160ms.onnx"}
	decoderFiles = []string{"decoder.onnx", "decoder.int8.onnx", "decoder-160ms.onnx"}
	joinerFiles  = []string{"joiner.int8.onnx", "joiner.onnx", "joiner-160ms.onnx"}
	tokensFile   = "tokens.txt"
)

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
			_, err := os.Stat(p)
			if err == nil {
				paths[i] = p
				break
			}
			// A file there but out of reach is not "missing": pulling it
			// again would not help.
			if !errors.Is(err, os.ErrNotExist) {
				return paths, fmt.Errorf("xasr: %w; make the model directory readable by this user", err)
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
	meta, err := r.openEncoder(opts, h)
	if err != nil {
		return err
	}
	ctx, decMeta, decDim, err := r.openDecoder(opts, h)
	if err != nil {
		return err
	}
	joinIns, err := r.openJoiner(opts, h)
	if err != nil {
		return err
	}
	dim, err := r.joinerDim(decDim, joinIns)
	if err != nil {
		return err
	}
	spec := r.spec
	r.info.Window, r.info.Shift, r.info.Layers = spec.window, spec.shift, spec.layers
	r.info.Caches, r.info.ContextSize, r.info.Dim = len(spec.caches), ctx, int(dim)
	r.info.EncoderMeta, r.info.DecoderMeta = meta, decMeta
	if err := r.alloc(); err != nil {
		return fmt.Errorf("xasr: %s: %w", r.info.Dir, err)
	}
	return r.probe()
}

// openEncoder opens the encoder with every input but x as state, fed back
// from new_<name>, then discovers and checks the details (r.spec) from
// the declaration and the metadata, which it returns.
func (r *Recognizer) openEncoder(opts onnx.Options, h string) (map[string]string, error) {
	ins, outs, err := onnx.Declaration(r.info.Encoder)
	if err != nil {
		return nil, fmt.Errorf("xasr: %w; %s", err, h)
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
		return nil, fmt.Errorf("xasr: %w", err)
	}
	meta, err := metadata(r.enc)
	if err != nil {
		return nil, fmt.Errorf("xasr: %w", err)
	}
	if r.spec, err = discoverEncoder(r.info.Encoder, ins, outs, meta); err != nil {
		return nil, fmt.Errorf("xasr: %w", err)
	}
	if r.fb, err = fbank.NewOnline(r.spec.features); err != nil {
		return nil, fmt.Errorf("xasr: %w", err)
	}
	return meta, nil
}

// openDecoder opens the decoder and returns its context size (from
// metadata, else from y's declared shape), its metadata, and its output
// dimension (-1 if symbolic).
func (r *Recognizer) openDecoder(opts onnx.Options, h string) (ctx int, meta map[string]string, dim int64, err error) {
	ins, outs, err := onnx.Declaration(r.info.Decoder)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("xasr: %w; %s", err, h)
	}
	if r.dec, err = onnx.Open(r.info.Decoder,
		[]onnx.Tensor{{Name: inDecoderY, Type: onnx.Int64, Dims: []int64{-1, -1}}},
		[]onnx.Tensor{{Name: outDecoder, Type: onnx.Float, Dims: []int64{-1, -1}}}, opts, h); err != nil {
		return 0, nil, 0, fmt.Errorf("xasr: %w", err)
	}
	if meta, err = metadata(r.dec); err != nil {
		return 0, nil, 0, fmt.Errorf("xasr: %w", err)
	}
	if ctx, err = contextSize(r.info.Decoder, ins, meta); err != nil {
		return 0, nil, 0, fmt.Errorf("xasr: %w", err)
	}
	if v, ok, err := metaInt(r.info.Decoder, meta, "vocab_size"); err != nil {
		return 0, nil, 0, fmt.Errorf("xasr: %w", err)
	} else if ok && v != r.tokens.Len() {
		return 0, nil, 0, fmt.Errorf("xasr: %w", mismatch(r.info.Decoder, "metadata vocab_size=%d but %s has %d tokens", v, tokensFile, r.tokens.Len()))
	}
	return ctx, meta, dimOf(outs, outDecoder, 1), nil
}

// openJoiner opens the joiner, checks its classes against the tokens, and
// returns its declared inputs.
func (r *Recognizer) openJoiner(opts onnx.Options, h string) ([]ort.InputOutputInfo, error) {
	ins, outs, err := onnx.Declaration(r.info.Joiner)
	if err != nil {
		return nil, fmt.Errorf("xasr: %w; %s", err, h)
	}
	if r.join, err = onnx.Open(r.info.Joiner,
		[]onnx.Tensor{{Name: inJoinerEnc, Type: onnx.Float, Dims: []int64{-1, -1}}, {Name: inJoinerDec, Type: onnx.Float, Dims: []int64{-1, -1}}},
		[]onnx.Tensor{{Name: outJoiner, Type: onnx.Float, Dims: []int64{-1, -1}}}, opts, h); err != nil {
		return nil, fmt.Errorf("xasr: %w", err)
	}
	if v := dimOf(outs, outJoiner, 1); v >= 0 && int(v) != r.tokens.Len() {
		return nil, fmt.Errorf("xasr: %w", mismatch(r.info.Joiner, "output logit has %d classes but %s has %d tokens", v, tokensFile, r.tokens.Len()))
	}
	return ins, nil
}

// joinerDim is the joiner dimension: every declaration that states it
// must agree, and one must.
func (r *Recognizer) joinerDim(decDim int64, joinIns []ort.InputOutputInfo) (int64, error) {
	dim := int64(-1)
	for _, d := range []struct {
		what string
		v    int64
	}{
		{r.info.Encoder + " encoder_out", r.spec.outDim},
		{r.info.Decoder + " decoder_out", decDim},
		{r.info.Joiner + " encoder_out", dimOf(joinIns, inJoinerEnc, 1)},
		{r.info.Joiner + " decoder_out", dimOf(joinIns, inJoinerDec, 1)},
	} {
		switch {
		case d.v < 0:
		case dim < 0:
			dim = d.v
		case d.v != dim:
			return 0, fmt.Errorf("xasr: %w: %s has dimension %d, other parts of the model %d", onnx.ErrModelMismatch, d.what, d.v, dim)
		}
	}
	if dim <= 0 {
		return 0, fmt.Errorf("xasr: %w: %s: no model file states the joiner dimension (encoder_out, decoder_out are symbolic)", onnx.ErrModelMismatch, r.info.Dir)
	}
	return dim, nil
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
