package xasr

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/asr/fbank"
	"github.com/voiceassistant/voice/internal/onnx"
)

// Tensor names of icefall's zipformer2 streaming export (X-ASR's encoder,
// decoder and joiner).
const (
	inX             = "x"
	inProcessedLens = "processed_lens"
	inEmbedStates   = "embed_states"
	outEncoder      = "encoder_out"
	newPrefix       = "new_"
	inDecoderY      = "y"
	outDecoder      = "decoder_out"
	inJoinerEnc     = "encoder_out"
	inJoinerDec     = "decoder_out"
	outJoiner       = "logit"
)

// layerCacheKinds are the six per-layer caches, in icefall's order.
var layerCacheKinds = []string{"key", "nonlin_attn", "val1", "val2", "conv1", "conv2"}

var layerCacheRE = regexp.MustCompile(`^cached_(key|nonlin_attn|val1|val2|conv1|conv2)_(\d+)$`)

// cacheSpec is one encoder state input, sized from the model's own
// declaration.
type cacheSpec struct {
	name string
	typ  ort.TensorElementDataType
	// shape is the declared shape with the batch axis set to 1.
	shape []int64
	// batchAxis is the symbolic (-1) axis of the declaration, or -1 when
	// every axis is static (a batch-1 export).
	batchAxis int
	// fedBack: the model declares new_<name>; otherwise (processed_lens
	// only) the recognizer updates it itself.
	fedBack bool
}

func (c cacheSpec) String() string {
	return fmt.Sprintf("%s %s%v (batch axis %d)", c.name, c.typ, c.shape, c.batchAxis)
}

// encoderSpec is what the recognizer needs to know about an encoder,
// discovered from its declared inputs/outputs and metadata.
type encoderSpec struct {
	// window is T, the feature frames per encoder call; shift is
	// decode_chunk_len, how far the window advances.
	window, shift int
	layers        int
	// caches in feeding order: the model's declaration order.
	caches []cacheSpec
	// outDim is the encoder_out feature size (-1 if symbolic).
	outDim int64
	// lensStep is what processed_lens grows by per call when the model
	// does not return new_processed_lens: the chunk length after the
	// encoder's 2x input subsampling, as icefall's OnnxEncoder adds.
	lensStep int64
	// features are the filterbank options the model was trained with.
	features fbank.Options
	meta     map[string]string
}

// mismatch wraps onnx.ErrModelMismatch with the model path and what is wrong.
func mismatch(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", onnx.ErrModelMismatch, path, fmt.Sprintf(format, args...))
}

// discoverEncoder works out the window, the shift, the number of layers
// and every cache tensor from the encoder's declared inputs/outputs and
// metadata (icefall's export-onnx-streaming.py writes model_type
// "zipformer2", T, decode_chunk_len, num_encoder_layers, encoder_dims,
// left_context_len, ...), and cross-checks them. Errors wrap
// onnx.ErrModelMismatch.
func discoverEncoder(path string, ins, outs []ort.InputOutputInfo, meta map[string]string) (*encoderSpec, error) {
	if mt, ok := meta["model_type"]; ok && mt != "zipformer2" {
		return nil, mismatch(path, "metadata model_type is %q, expected \"zipformer2\" (the X-ASR streaming encoder)", mt)
	}
	spec := &encoderSpec{meta: meta, outDim: -1, features: fbank.XASR}
	// The one feature setting an icefall export records is "feature":
	// sherpa-onnx switches to Whisper features when it is "whisper"
	// (k2-fsa/sherpa-onnx sherpa-onnx/csrc/online-zipformer2-transducer-model.cc:127-131,
	// written by X-ASR-zh-en/zipformer/export-onnx-streaming.py:508-509).
	// Fed Kaldi fbank, such a model would hear noise; no export records a
	// mel range, so a Kaldi-fbank model gets the one X-ASR trained with.
	if f := meta["feature"]; f != "" {
		return nil, mismatch(path, "metadata feature is %q: the model takes %s features, and the recognizer computes Kaldi fbank only", f, f)
	}
	outByName := map[string]ort.InputOutputInfo{}
	for _, o := range outs {
		outByName[o.Name] = o
	}
	if err := spec.discoverWindow(path, ins, meta); err != nil {
		return nil, err
	}

	// encoder_out [N, T', D].
	eo, ok := outByName[outEncoder]
	if !ok {
		return nil, mismatch(path, "no output %q (the model declares: %s)", outEncoder, declared(outs))
	}
	if eo.DataType != onnx.Float || len(eo.Dimensions) != 3 {
		return nil, mismatch(path, "output encoder_out is %s%v, expected float [N, T', D]", eo.DataType, eo.Dimensions)
	}
	spec.outDim = eo.Dimensions[2]

	if err := spec.discoverCaches(path, ins, outs, outByName); err != nil {
		return nil, err
	}
	if err := checkLayerMeta(path, spec); err != nil {
		return nil, err
	}
	return spec, nil
}

// discoverWindow sets the window from metadata T, cross-checked with
// input x's declared time axis, and the shift from decode_chunk_len.
func (spec *encoderSpec) discoverWindow(path string, ins []ort.InputOutputInfo, meta map[string]string) error {
	var x *ort.InputOutputInfo
	for i := range ins {
		if ins[i].Name == inX {
			x = &ins[i]
		}
	}
	if x == nil {
		return mismatch(path, "no input %q (the model declares: %s)", inX, declared(ins))
	}
	if len(x.Dimensions) != 3 {
		return mismatch(path, "input x has shape %v, expected [N, T, %d]", x.Dimensions, fbank.NumBins)
	}
	if d := x.Dimensions[2]; d >= 0 && d != fbank.NumBins {
		return mismatch(path, "input x has %d features per frame, the recognizer computes %d-bin fbank", d, fbank.NumBins)
	}
	metaT, hasT, err := metaInt(path, meta, "T")
	if err != nil {
		return err
	}
	switch xT := x.Dimensions[1]; {
	case hasT && xT >= 0 && int64(metaT) != xT:
		return mismatch(path, "metadata T=%d but input x is declared %v", metaT, x.Dimensions)
	case hasT:
		spec.window = metaT
	case xT > 0:
		spec.window = int(xT)
	default:
		return mismatch(path, "no metadata T and input x has a symbolic time axis %v: cannot tell the window size", x.Dimensions)
	}
	shift, ok, err := metaInt(path, meta, "decode_chunk_len")
	if err != nil {
		return err
	}
	if !ok {
		return mismatch(path, "no metadata decode_chunk_len (how far the window advances); icefall's export-onnx-streaming.py writes it (metadata: %s)", metaKeys(meta))
	}
	if shift <= 0 || shift > spec.window {
		return mismatch(path, "metadata decode_chunk_len=%d does not fit the window T=%d", shift, spec.window)
	}
	spec.shift = shift
	spec.lensStep = int64(shift / 2)
	return nil
}

// discoverCaches takes every input but x as state, fed back from
// new_<name>, and checks that each layer has every cache and that
// embed_states and processed_lens are there.
func (spec *encoderSpec) discoverCaches(path string, ins, outs []ort.InputOutputInfo, outByName map[string]ort.InputOutputInfo) error {
	layerKinds := map[int]map[string]bool{}
	haveEmbed, haveLens := false, false
	for _, in := range ins {
		if in.Name == inX {
			continue
		}
		c, err := cacheOf(path, in, outByName)
		if err != nil {
			return err
		}
		switch m := layerCacheRE.FindStringSubmatch(in.Name); {
		case m != nil:
			i, _ := strconv.Atoi(m[2])
			if layerKinds[i] == nil {
				layerKinds[i] = map[string]bool{}
			}
			layerKinds[i][m[1]] = true
			spec.layers = max(spec.layers, i+1)
		case in.Name == inEmbedStates:
			haveEmbed = true
		case in.Name == inProcessedLens:
			haveLens = true
			if c.typ == onnx.Float {
				return mismatch(path, "input processed_lens is float, expected an integer tensor [N]")
			}
		}
		if !c.fedBack && in.Name != inProcessedLens {
			return mismatch(path, "input %q has no %q output to feed back (the model declares: %s)", in.Name, newPrefix+in.Name, declared(outs))
		}
		spec.caches = append(spec.caches, c)
	}
	if spec.layers == 0 {
		return mismatch(path, "no cached_key_0 ... inputs: not a streaming zipformer2 encoder (the model declares: %s)", declared(ins))
	}
	for i := range spec.layers {
		for _, k := range layerCacheKinds {
			if !layerKinds[i][k] {
				return mismatch(path, "layers 0..%d have caches but input cached_%s_%d is missing", spec.layers-1, k, i)
			}
		}
	}
	if !haveEmbed {
		return mismatch(path, "no input %q", inEmbedStates)
	}
	if !haveLens {
		return mismatch(path, "no input %q", inProcessedLens)
	}
	return nil
}

// cacheOf is the state input in, sized from its declaration with its one
// symbolic axis, the batch, made 1; fedBack if an output new_<name> can
// be fed back to it.
func cacheOf(path string, in ort.InputOutputInfo, outByName map[string]ort.InputOutputInfo) (cacheSpec, error) {
	if in.OrtValueType != ort.ONNXTypeTensor {
		return cacheSpec{}, mismatch(path, "input %q is a %s, not a tensor", in.Name, in.OrtValueType)
	}
	c := cacheSpec{name: in.Name, typ: in.DataType, batchAxis: -1, shape: slices.Clone([]int64(in.Dimensions))}
	for i, d := range c.shape {
		if d >= 0 {
			continue
		}
		if c.batchAxis >= 0 {
			return cacheSpec{}, mismatch(path, "input %q is declared %v: more than one symbolic axis, so the cache cannot be sized (only the batch axis may be symbolic)", in.Name, in.Dimensions)
		}
		c.batchAxis, c.shape[i] = i, 1
	}
	switch c.typ {
	case onnx.Float, onnx.Int64, onnx.Int32:
	default:
		return cacheSpec{}, mismatch(path, "input %q is %s; the recognizer handles float, int64 and int32 state", in.Name, c.typ)
	}
	if newOut, ok := outByName[newPrefix+in.Name]; ok {
		if newOut.DataType != in.DataType || !feedsBack(newOut.Dimensions, in.Dimensions) {
			return cacheSpec{}, mismatch(path, "output %q is %s%v but input %q is %s%v: it cannot be fed back", newOut.Name, newOut.DataType, newOut.Dimensions, in.Name, in.DataType, in.Dimensions)
		}
		c.fedBack = true
	}
	return c, nil
}

// checkLayerMeta cross-checks the caches with the per-stack metadata when
// the model has it: num_encoder_layers must add up to the layers found,
// and in stack s cached_key_i is [left_context_len[s], N, key_dim] and
// cached_conv1_i is [N, encoder_dims[s], kernel/2].
func checkLayerMeta(path string, spec *encoderSpec) error {
	perStack, ok, err := metaInts(path, spec.meta, "num_encoder_layers")
	if err != nil || !ok {
		return err
	}
	total := 0
	for _, n := range perStack {
		total += n
	}
	if total != spec.layers {
		return mismatch(path, "metadata num_encoder_layers=%s adds up to %d layers, but the inputs have caches for %d", spec.meta["num_encoder_layers"], total, spec.layers)
	}
	byName := map[string]cacheSpec{}
	for _, c := range spec.caches {
		byName[c.name] = c
	}
	check := func(key, cache string, axis int) error {
		want, ok, err := metaInts(path, spec.meta, key)
		if err != nil || !ok {
			return err
		}
		if len(want) != len(perStack) {
			return mismatch(path, "metadata %s=%s has %d stacks, num_encoder_layers has %d", key, spec.meta[key], len(want), len(perStack))
		}
		layer := 0
		for s, n := range perStack {
			for range n {
				c := byName[fmt.Sprintf("cached_%s_%d", cache, layer)]
				if axis < len(c.shape) && c.batchAxis != axis && c.shape[axis] != int64(want[s]) {
					return mismatch(path, "metadata %s=%s says stack %d has %d, but %s is declared with %d at axis %d", key, spec.meta[key], s, want[s], c.name, c.shape[axis], axis)
				}
				layer++
			}
		}
		return nil
	}
	if err := check("left_context_len", "key", 0); err != nil {
		return err
	}
	return check("encoder_dims", "conv1", 1)
}

// feedsBack is whether an output declared out can be fed back into an
// input declared in: the same rank and sizes, except that the output may
// leave symbolic a size the input fixes. Exporters do (X-ASR's own export
// declares new_cached_key_i as [-1, -1, 128] against cached_key_i's
// [256, -1, 128]); the first run, at open, then checks the real sizes,
// since every output is written into a tensor of its input's shape.
func feedsBack(out, in ort.Shape) bool {
	if len(out) != len(in) {
		return false
	}
	for i := range out {
		switch {
		case out[i] < 0:
		case in[i] < 0 || out[i] != in[i]:
			return false
		}
	}
	return true
}

func metaInt(path string, meta map[string]string, key string) (int, bool, error) {
	v, ok := meta[key]
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, false, mismatch(path, "metadata %s=%q is not an integer", key, v)
	}
	return n, true, nil
}

func metaInts(path string, meta map[string]string, key string) ([]int, bool, error) {
	v, ok := meta[key]
	if !ok {
		return nil, false, nil
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, false, mismatch(path, "metadata %s=%q is not a comma-separated list of integers", key, v)
		}
		out = append(out, n)
	}
	return out, true, nil
}

func declared(infos []ort.InputOutputInfo) string {
	s := make([]string, len(infos))
	for i, in := range infos {
		s[i] = in.String()
	}
	if len(s) > 12 {
		s = append(s[:12], fmt.Sprintf("... (%d in all)", len(infos)))
	}
	return strings.Join(s, ", ")
}

func metaKeys(meta map[string]string) string {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

// metadata returns an open model's custom metadata (from the session
// itself: reading it by path would load the model once more).
func metadata(s *onnx.Session) (map[string]string, error) {
	md, err := s.GetModelMetadata()
	if err != nil {
		return nil, fmt.Errorf("model %s: reading metadata: %w", s.Path, err)
	}
	defer md.Destroy()
	keys, err := md.GetCustomMetadataMapKeys()
	if err != nil {
		return nil, fmt.Errorf("model %s: reading metadata: %w", s.Path, err)
	}
	meta := map[string]string{}
	for _, k := range keys {
		v, ok, err := md.LookupCustomMetadataMap(k)
		if err != nil {
			return nil, fmt.Errorf("model %s: reading metadata %q: %w", s.Path, k, err)
		}
		if ok {
			meta[k] = v
		}
	}
	return meta, nil
}
