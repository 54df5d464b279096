// Package moss is the MOSS-TTS-Nano synthesizer: the model's browser ONNX
// export (prefill, decode step and local fixed-sampled frame graphs) and
// the MOSS audio tokenizer's streaming decode step, on ONNX Runtime.
// *Synthesizer implements pipeline.Synthesizer. docs/moss-tts-nano-onnx.md
// is the specification.
//
// Sampling happens inside the local-frame graph, driven by 17 uniforms per
// frame. They are drawn from math/rand/v2's PCG seeded with Options.Seed
// at the start of every Synthesize call; the reference runtime uses
// numpy's default_rng(1234), so the frames are not claimed to match the
// Python runtime's for the same seed (they are deterministic for ours).
package moss

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
	"github.com/voiceassistant/voice/tts/spm"
)

// Options configure Open. Zero values take the defaults.
type Options struct {
	// Voice is a builtin voice's name (manifest builtin_voices[].voice);
	// default "Junhao", or the first builtin voice when that is absent.
	Voice string
	// MaxFrames caps the frames per text chunk; default the manifest's
	// generation_defaults.max_new_frames.
	MaxFrames int
	// Seed seeds the sampling uniforms; default 1234.
	Seed uint64
	// LowMemory closes the prefill graph once it has made the voice
	// prompt's KV cache, so that its packed copy of the global
	// transformer's weights (85 MiB at int4) is not kept: every chunk then
	// steps through its rows from the prompt's cache, which for a long
	// chunk is slower than prefilling it (up to 0.5 s later for a 75-token
	// chunk at int4 on the build machine). Where the decode step's shared
	// form is kept (useSharedKV) the prefill graph is not opened at all,
	// and LowMemory changes nothing.
	LowMemory bool
	ONNX      onnx.Options
	// slidingCodec keeps the codec's caches as the graph has them
	// (tests compare the ring form with it).
	slidingCodec bool
	// growingKV keeps the decode step's KV cache as the graph grows it
	// (a test hook: Open otherwise writes it in place when the shared
	// form is kept, see useSharedKV).
	growingKV bool
}

// DefaultVoice is the voice Open picks when Options.Voice is empty.
const DefaultVoice = "Junhao"

// MaxChunkTokens is the token budget of a text chunk (upstream's
// voice_clone_max_text_tokens, onnx_tts_runtime.py:607). splitText adds up
// its pieces' token counts against it, so a chunk can come out a token or
// so over where joining two pieces encodes differently.
const MaxChunkTokens = 75

const maxUniform = float32(0.99999994)

type config struct {
	nVQ, rowWidth, hidden, layers, heads, headDim, codebook int
	pad, audioStart, audioEnd, userSlot, assistantSlot      int
}

// Synthesizer turns text into 48 kHz stereo speech. Calls are serialized.
type Synthesizer struct {
	mu      sync.Mutex
	cfg     config
	format  audio.Format
	tok     *spm.Model
	voice   [][]int
	prefix  []int // user prompt prefix ids
	after   []int // after-reference ids
	assist  []int // assistant prefix ids
	frames  int   // max frames per chunk
	seed    uint64
	prefill *onnx.Session
	decode  *onnx.Session
	local   *onnx.Session
	codec   *onnx.Session

	// The codec's state, two sets of tensors a chunk's codecState uses in
	// turn (see reset), and the decode step's KV cache buffers, which
	// each chunk's globalState takes over from the one before.
	codecSets [2][]ort.Value
	// ring is what the codec's ring form declares of its caches
	// (useRingCodec); nil while they slide.
	ring *ringForm
	// sharedDecode says the decode step is its shared form
	// (useSharedKV), whose KV cache is kv, the voice prompt's rows first.
	// fed is what its runs of several rows took (the decode session's
	// Runs count them too).
	sharedDecode bool
	kv           *sharedKV
	fedMu        sync.Mutex
	fed          onnx.RunStats
	// kvBufs hold the growing form's cache.
	kvBufs [][]float32
	// kvSlot is each KV cache output's buffer in kvBufs: its index among
	// the decode step's present_* outputs.
	kvSlot map[string]int

	// The voice prompt's KV cache (see warmPrompt), in decode step input
	// order, unless kv holds it, and its length in rows.
	promptKV  []ort.Value
	promptLen int
	// What a row costs through the prefill graph and the decode step.
	rowCost, stepCost cost

	// Tensor names, from the metadata's onnx sections.
	prefillIn  []string // input_ids, attention_mask
	prefillOut []string // global_hidden, present_*
	decodeIn   []string // input_ids, past_valid_lengths, past_*
	decodeOut  []string // global_hidden, present_*
	localIn    []string // global_hidden, repetition_seen_mask, assistant_random_u, audio_random_u
	localOut   []string // should_continue, frame_token_ids
	codecIn    []string // audio_codes, audio_code_lengths, ...
	codecOut   []string // audio, audio_lengths, ...
	offsets    []offsetSpec
	attns      []attnSpec

	// Test hooks.
	uniforms   func() []float32    // replaces the PCG draws when set
	onFrame    func(frame []int32) // called for every generated frame
	resetKV    bool                // forget the KV cache every step
	resetCodec bool                // forget the codec state every call
	codecBatch int                 // frames per codec call when > 0 (else the budget by the audio's lead)
	now        func() time.Time    // the clock the codec's lead is measured on
	tamperKV   func([]byte) []byte // changes the decode step's shared form before its check

	// from is what Open was given, which a child that derives a rewrite
	// opens the synthesizer from.
	from source
}

// source is what a synthesizer is opened from: Open's folders and voice.
type source struct{ TTSDir, CodecDir, Voice string }

// Open loads the TTS model set in ttsDir and the codec in codecDir (when
// empty, the manifest's model_files.codec_meta locates it).
func Open(ttsDir, codecDir string, opts Options) (*Synthesizer, error) {
	s, graphs, err := configured(ttsDir, codecDir, opts)
	if err != nil {
		return nil, err
	}
	if err := onnx.Init(opts.ONNX.Library); err != nil {
		return nil, fmt.Errorf("moss: %w", err)
	}
	if err := s.openGraphs(graphs, opts); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.warmPrompt(!opts.LowMemory); err != nil {
		_ = s.Close()
		return nil, err
	}
	// The codec's state, made now rather than in the first chunk's time
	// to its first audio, and written: its pages, fresh from the system,
	// are faulted in here, not by the first chunk (at full size 90 ms of
	// its first audio for the 25 MB the first reset clears, and more as
	// the first codec call writes the other set).
	if s.codecSets, err = s.codecStateSets(s.ring); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.warmFrame(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if s.prefill != nil && !opts.LowMemory {
		s.kvBufs = s.kvBuffers(s.promptLen + kvRowsAhead)
	}
	if s.prefill != nil && opts.LowMemory {
		_ = s.prefill.Destroy()
		s.prefill = nil
	}
	return s, nil
}

// graphSet is the synthesizer's graphs, each its file and the tensors it
// is opened with.
type graphSet struct{ prefill, decode, local, codec graphFile }

// configured is the synthesizer of the TTS set in ttsDir and the codec in
// codecDir, as Open opens it, with no graph opened yet: its metadata read
// and checked, its tokenizer loaded; and its graphs.
func configured(ttsDir, codecDir string, opts Options) (*Synthesizer, graphSet, error) {
	var man manifest
	manPath := filepath.Join(ttsDir, ManifestFile)
	if err := readJSON(manPath, &man); err != nil {
		return nil, graphSet{}, err
	}
	var tm ttsMeta
	ttsMetaPath := filepath.Join(ttsDir, TTSMetaFile)
	if man.ModelFiles.TTSMeta != "" {
		ttsMetaPath = filepath.Join(ttsDir, man.ModelFiles.TTSMeta)
	}
	if err := readJSON(ttsMetaPath, &tm); err != nil {
		return nil, graphSet{}, err
	}
	codecMetaPath := filepath.Join(codecDir, CodecMetaFile)
	if codecDir == "" {
		if man.ModelFiles.CodecMeta == "" {
			return nil, graphSet{}, fmt.Errorf("%w: moss: %s: model_files.codec_meta is empty and no codec directory was given", ErrModelMismatch, manPath)
		}
		codecMetaPath = filepath.Join(ttsDir, man.ModelFiles.CodecMeta)
	}
	var cm codecMeta
	if err := readJSON(codecMetaPath, &cm); err != nil {
		return nil, graphSet{}, err
	}
	tokPath := filepath.Join(ttsDir, TokenizerFile)
	if man.ModelFiles.TokenizerModel != "" {
		tokPath = filepath.Join(ttsDir, man.ModelFiles.TokenizerModel)
	}

	s := &Synthesizer{now: time.Now, from: source{ttsDir, codecDir, opts.Voice}}
	if err := s.configure(metaPaths{man: manPath, tts: ttsMetaPath, codec: codecMetaPath}, &man, &tm, &cm, opts); err != nil {
		return nil, graphSet{}, err
	}
	var err error
	if _, err = file(filepath.Dir(tokPath), filepath.Base(tokPath), "tokenizer"); err != nil {
		return nil, graphSet{}, err
	}
	if s.tok, err = spm.Load(tokPath); err != nil {
		return nil, graphSet{}, fmt.Errorf("moss: %w", err)
	}
	graphs, err := s.graphFiles(filepath.Dir(ttsMetaPath), filepath.Dir(codecMetaPath), &tm, &cm)
	return s, graphs, err
}

func (s *Synthesizer) readConfig(path string, tm *ttsMeta, man *manifest) error {
	c := &s.cfg
	get := func(key string) (int, error) {
		if _, ok := tm.ModelConfig[key]; !ok {
			if _, ok := man.TTSConfig[key]; ok {
				return intField(path, "tts_config", man.TTSConfig, key)
			}
		}
		return intField(path, "model_config", tm.ModelConfig, key)
	}
	for _, f := range []struct {
		key string
		v   *int
	}{
		{"n_vq", &c.nVQ}, {"row_width", &c.rowWidth}, {"hidden_size", &c.hidden},
		{"global_layers", &c.layers}, {"global_heads", &c.heads}, {"head_dim", &c.headDim},
		{"audio_pad_token_id", &c.pad}, {"audio_start_token_id", &c.audioStart},
		{"audio_end_token_id", &c.audioEnd}, {"audio_user_slot_token_id", &c.userSlot},
		{"audio_assistant_slot_token_id", &c.assistantSlot},
	} {
		v, err := get(f.key)
		if err != nil {
			return err
		}
		*f.v = v
	}
	if c.nVQ != 16 || c.rowWidth != c.nVQ+1 {
		return fmt.Errorf("%w: moss: %s: n_vq %d and row_width %d, expected 16 and 17", ErrModelMismatch, path, c.nVQ, c.rowWidth)
	}
	c.codebook = c.pad
	if raw, ok := tm.ModelConfig["audio_codebook_sizes"]; ok {
		var sizes []int
		if json.Unmarshal(raw, &sizes) == nil && len(sizes) > 0 {
			c.codebook = sizes[0]
		}
	}
	// The sizes shape the tensors and the tensor name lists Open makes, so
	// a damaged file must not make them huge.
	for _, f := range []struct {
		key string
		v   int
	}{
		{"hidden_size", c.hidden}, {"global_layers", c.layers}, {"global_heads", c.heads},
		{"head_dim", c.headDim}, {"audio codebook size", c.codebook},
	} {
		if f.v <= 0 || f.v > maxSize {
			return fmt.Errorf("%w: moss: %s: model_config %s is %d, expected 1..%d", ErrModelMismatch, path, f.key, f.v, maxSize)
		}
	}
	for _, f := range []struct {
		key string
		v   int
	}{
		{"audio_pad_token_id", c.pad}, {"audio_start_token_id", c.audioStart}, {"audio_end_token_id", c.audioEnd},
		{"audio_user_slot_token_id", c.userSlot}, {"audio_assistant_slot_token_id", c.assistantSlot},
	} {
		if !isID(f.v) {
			return fmt.Errorf("%w: moss: %s: model_config %s is %d, not a token id", ErrModelMismatch, path, f.key, f.v)
		}
	}
	return nil
}

func (s *Synthesizer) pickVoice(path string, man *manifest, name string) error {
	if len(man.BuiltinVoices) == 0 {
		return fmt.Errorf("%w: moss: %s lists no builtin_voices", ErrModelMismatch, path)
	}
	idx := -1
	want := name
	if want == "" {
		want = DefaultVoice
	}
	for i, v := range man.BuiltinVoices {
		if v.Voice == want || (name != "" && v.DisplayName == want) {
			idx = i
			break
		}
	}
	if idx < 0 {
		if name != "" {
			return fmt.Errorf("moss: unknown voice %q; the voices are: %s", name, voiceNames(man))
		}
		idx = 0
	}
	codes := man.BuiltinVoices[idx].PromptAudioCodes
	for i, f := range codes {
		if len(f) != s.cfg.nVQ {
			return fmt.Errorf("%w: moss: %s: voice %q frame %d has %d codes, expected %d", ErrModelMismatch, path, man.BuiltinVoices[idx].Voice, i, len(f), s.cfg.nVQ)
		}
		for _, code := range f {
			if !isID(code) {
				return fmt.Errorf("%w: moss: %s: voice %q frame %d has code %d", ErrModelMismatch, path, man.BuiltinVoices[idx].Voice, i, code)
			}
		}
	}
	s.voice = codes
	return nil
}

// graphFiles are the graphs the metadata names, with the tensor names
// and shapes that configure read from it.
func (s *Synthesizer) graphFiles(ttsDir, codecDir string, tm *ttsMeta, cm *codecMeta) (graphSet, error) {
	var g graphSet
	g.prefill.ins, g.prefill.outs = s.prefillTensors()
	g.decode.ins, g.decode.outs = s.decodeTensors()
	g.local.ins, g.local.outs = s.localTensors()
	g.codec.ins, g.codec.outs = s.codecTensors()
	for _, f := range []struct {
		graph          *graphFile
		dir, key, name string
	}{
		{&g.prefill, ttsDir, "prefill", cmp.Or(tm.Files["prefill"], "moss_tts_prefill.onnx")},
		{&g.decode, ttsDir, "decode_step", cmp.Or(tm.Files["decode_step"], "moss_tts_decode_step.onnx")},
		{&g.local, ttsDir, "local_fixed_sampled_frame", cmp.Or(tm.Files["local_fixed_sampled_frame"], "moss_tts_local_fixed_sampled_frame.onnx")},
		{&g.codec, codecDir, "codec decode_step", cmp.Or(cm.Files["decode_step"], "moss_audio_tokenizer_decode_step.onnx")},
	} {
		var err error
		if f.graph.path, err = file(f.dir, f.name, f.key); err != nil {
			return graphSet{}, err
		}
	}
	return g, nil
}

// openGraphs opens the sessions, and the rewrites of the decode step and
// the codec that are kept in their place.
func (s *Synthesizer) openGraphs(g graphSet, o Options) error {
	opts := o.ONNX
	var err error
	if s.decode, err = onnx.Open(g.decode.path, g.decode.ins, g.decode.outs, opts, Hint); err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	if !o.growingKV {
		if err := s.useSharedKV(g.decode, g.prefill, opts); err != nil {
			return err
		}
	}
	// The shared form feeds the voice prompt and a chunk's text itself.
	if !s.sharedDecode {
		if s.prefill, err = onnx.Open(g.prefill.path, g.prefill.ins, g.prefill.outs, opts, Hint); err != nil {
			return fmt.Errorf("moss: %w", err)
		}
	}
	if s.local, err = onnx.Open(g.local.path, g.local.ins, g.local.outs, opts, Hint); err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	if s.codec, err = onnx.Open(g.codec.path, g.codec.ins, g.codec.outs, codecOptions(opts), Hint); err != nil {
		return fmt.Errorf("moss: %w", err)
	}
	if !o.slidingCodec {
		return s.useRingCodec(g.codec, codecOptions(opts))
	}
	return nil
}

// localTensors are the local frame graph's tensors in and out.
func (s *Synthesizer) localTensors() (ins, outs []onnx.Tensor) {
	c, nvq := s.cfg, int64(s.cfg.nVQ)
	ins = []onnx.Tensor{
		{Name: s.localIn[0], Type: onnx.Float, Dims: []int64{-1, int64(c.hidden)}},
		{Name: s.localIn[1], Type: onnx.Int32, Dims: []int64{-1, nvq, int64(c.codebook)}},
		{Name: s.localIn[2], Type: onnx.Float, Dims: []int64{-1}},
		{Name: s.localIn[3], Type: onnx.Float, Dims: []int64{-1, nvq}},
	}
	outs = []onnx.Tensor{
		{Name: s.localOut[0], Type: onnx.Int32},
		{Name: s.localOut[1], Type: onnx.Int32, Dims: []int64{-1, nvq}},
	}
	return ins, outs
}

// prefillTensors and decodeTensors are the prefill's and the decode
// step's tensors in and out, in the order their sessions take them.
func (s *Synthesizer) prefillTensors() (ins, outs []onnx.Tensor) {
	c := s.cfg
	ins = []onnx.Tensor{{Name: s.prefillIn[0], Type: onnx.Int32, Dims: []int64{-1, -1, int64(c.rowWidth)}}, {Name: s.prefillIn[1], Type: onnx.Int32, Dims: []int64{-1, -1}}}
	outs = []onnx.Tensor{{Name: s.prefillOut[0], Type: onnx.Float, Dims: []int64{-1, -1, int64(c.hidden)}}}
	for _, name := range s.prefillOut[1:] {
		outs = append(outs, onnx.Tensor{Name: name, Type: onnx.Float, Dims: []int64{-1, -1, int64(c.heads), int64(c.headDim)}})
	}
	return ins, outs
}

func (s *Synthesizer) decodeTensors() (ins, outs []onnx.Tensor) {
	c := s.cfg
	ins = []onnx.Tensor{{Name: s.decodeIn[0], Type: onnx.Int32, Dims: []int64{-1, 1, int64(c.rowWidth)}}, {Name: s.decodeIn[1], Type: onnx.Int32, Dims: []int64{-1}}}
	outs = []onnx.Tensor{{Name: s.decodeOut[0], Type: onnx.Float, Dims: []int64{-1, -1, int64(c.hidden)}}}
	kv := []int64{-1, -1, int64(c.heads), int64(c.headDim)}
	for _, name := range s.decodeIn[2:] {
		ins = append(ins, onnx.Tensor{Name: name, Type: onnx.Float, Dims: kv})
	}
	for _, name := range s.decodeOut[1:] {
		outs = append(outs, onnx.Tensor{Name: name, Type: onnx.Float, Dims: kv})
	}
	return ins, outs
}

// codecTensors are the codec's tensors in and out, in the order its
// session takes them: audio_codes and audio_code_lengths in, audio and
// audio_lengths out, then the streaming state.
func (s *Synthesizer) codecTensors() (ins, outs []onnx.Tensor) {
	ins = []onnx.Tensor{{Name: s.codecIn[0], Type: onnx.Int32, Dims: []int64{-1, -1, int64(s.cfg.nVQ)}}, {Name: s.codecIn[1], Type: onnx.Int32, Dims: []int64{-1}}}
	outs = []onnx.Tensor{{Name: s.codecOut[0], Type: onnx.Float, Dims: []int64{-1, int64(s.format.Channels), -1}}, {Name: s.codecOut[1], Type: onnx.Int32, Dims: []int64{-1}}}
	for _, o := range s.offsets {
		ins = append(ins, onnx.Tensor{Name: o.Input, Type: onnx.Int32, Dims: o.Shape})
		outs = append(outs, onnx.Tensor{Name: o.Output, Type: onnx.Int32, Dims: o.Shape})
	}
	for _, a := range s.attns {
		ins = append(ins,
			onnx.Tensor{Name: a.OffsetIn, Type: onnx.Int32, Dims: a.OffsetShape},
			onnx.Tensor{Name: a.KeysIn, Type: onnx.Float, Dims: a.CacheShape},
			onnx.Tensor{Name: a.ValuesIn, Type: onnx.Float, Dims: a.CacheShape},
			onnx.Tensor{Name: a.PositionsIn, Type: onnx.Int32, Dims: a.PositionsShape})
		outs = append(outs,
			onnx.Tensor{Name: a.OffsetOut, Type: onnx.Int32, Dims: a.OffsetShape},
			onnx.Tensor{Name: a.KeysOut, Type: onnx.Float, Dims: a.CacheShape},
			onnx.Tensor{Name: a.ValuesOut, Type: onnx.Float, Dims: a.CacheShape},
			onnx.Tensor{Name: a.PositionsOut, Type: onnx.Int32, Dims: a.PositionsShape})
	}
	return ins, outs
}

// codecOptions are opts for the codec. Its attention caches are a
// Concat of the cached keys and the new ones, transposed for the product
// and sliced for the next call; ONNX Runtime's TransposeOptimizer (the
// last of its basic transformers, graph_transformer_utils.cc) pushes the
// transpose through that Concat, transposing the whole cache before it
// and back after it: 97 transposes a call instead of 61 at full size, of
// caches of up to 1,600 positions. Without it, and with the basic
// transformers only (the extended ones push them again), a call took
// 11.4-12.0 against 12.7-13.9 ms.
func codecOptions(opts onnx.Options) onnx.Options {
	opts.Optimization = ort.GraphOptimizationLevelEnableBasic
	opts.DisabledOptimizers = []string{"TransposeOptimizer"}
	return opts
}

// GraphRuns is what one of the synthesizer's graphs' runs took
// (onnx.Session.Runs).
type GraphRuns struct {
	Graph string // prefill, text rows, decode step, local frame, codec
	Model string // its file
	// Runs says which of the model's runs these are.
	Runs RunRows
	onnx.RunStats
}

// RunRows tells a session's runs apart where it runs two kinds: the
// decode step's shared form is fed a chunk's text at once (and the voice
// prompt at Open), then a frame's row a step.
type RunRows int

const (
	AllRuns     RunRows = iota
	OneRowRuns          // each of one row: a decode step
	BatchedRuns         // each of several rows at once
)

// Runs is, graph by graph, what the synthesizer's runs took so far; a
// graph closed or not opened (the prefill, with LowMemory or the decode
// step's shared form) is left out.
func (s *Synthesizer) Runs() []GraphRuns {
	var out []GraphRuns
	if s.prefill != nil {
		out = append(out, GraphRuns{Graph: "prefill", Model: s.prefill.Path, RunStats: s.prefill.Runs()})
	}
	steps := GraphRuns{Graph: "decode step", Model: s.decode.Path, RunStats: s.decode.Runs()}
	if s.sharedDecode {
		s.fedMu.Lock()
		fed := s.fed
		s.fedMu.Unlock()
		steps.Runs = OneRowRuns
		steps.Calls -= fed.Calls
		steps.Time -= fed.Time
		steps.InBytes -= fed.InBytes
		steps.OutBytes -= fed.OutBytes
		out = append(out, GraphRuns{Graph: "text rows", Model: s.decode.Path, Runs: BatchedRuns, RunStats: fed})
	}
	out = append(out, steps,
		GraphRuns{Graph: "local frame", Model: s.local.Path, RunStats: s.local.Runs()},
		GraphRuns{Graph: "codec", Model: s.codec.Path, RunStats: s.codec.Runs()})
	return out
}

// Format is the codec's output: 48 kHz stereo, interleaved.
func (s *Synthesizer) Format() audio.Format { return s.format }

// Close releases the sessions and the voice prompt's KV cache.
func (s *Synthesizer) Close() error {
	destroyAll(s.promptKV)
	s.kv.destroy()
	destroyCodecSets(s.codecSets)
	for _, p := range []**onnx.Session{&s.prefill, &s.decode, &s.local, &s.codec} {
		if *p != nil {
			_ = (*p).Destroy()
			*p = nil
		}
	}
	return nil
}

// draw returns the frame's 17 uniforms.
func (s *Synthesizer) draw(r *rand.Rand) []float32 {
	if s.uniforms != nil {
		return s.uniforms()
	}
	u := make([]float32, 1+s.cfg.nVQ)
	for i := range u {
		u[i] = min(maxUniform, max(0, float32(r.Float64())))
	}
	return u
}
