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

// The Recognizer and its lifecycle (New, Close). Loading is in load.go, the
// streaming decode in stream.go, the greedy search in search.go.

import (
	"errors"
	"fmt"
	"maps"
	"math"
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

// TailPadding is the silence Finalize appends before draining, sherpa-onnx's
// own: its server pads every stream that ends with end_tail_padding = 0.8 s
// of zeros (k2-fsa/sherpa-onnx sherpa-onnx/csrc/online-websocket-server-impl.h:65,
// online-websocket-server-impl.cc:94-99). The encoder looks T -
// decode_chunk_len = 13 frames (130 ms) ahead and only full windows are
// decoded (see decode), so the last words need audio after them to be
// pushed through: 0.8 s is more than X-ASR's own script pads (0.3 s,
// onnx_pretrained-streaming.py:488-489).
const TailPadding = 800 * time.Millisecond

// logFloor is the fbank value of a frame with no energy, log(FLT_EPSILON):
// what digital silence gives, and what the encoder is probed with.
var logFloor = float32(math.Log(1.1920928955078125e-07))

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

	// forked: enc, dec and join belong to the recognizer this one was
	// forked from, which closes them.
	forked bool

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
	r := &Recognizer{tokens: tokens, unk: -1}
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

// Info describes the loaded model.
func (r *Recognizer) Info() Info {
	info := r.info
	info.EncoderMeta, info.DecoderMeta = maps.Clone(info.EncoderMeta), maps.Clone(info.DecoderMeta)
	return info
}

// Tokens is the model's token table.
func (r *Recognizer) Tokens() *Tokens { return r.tokens }

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
		if *s != nil && !r.forked {
			errs = append(errs, (*s).Destroy())
		}
		*s = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("xasr: closing %s: %w", r.info.Dir, err)
	}
	return nil
}
