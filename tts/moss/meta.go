package moss

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/voiceassistant/voice/audio"
	"github.com/voiceassistant/voice/internal/onnx"
)

// Hint tells the user how to get the model set.
const Hint = "run `voice-agent models pull MOSS-TTS-Nano-100M-ONNX MOSS-Audio-Tokenizer-Nano-ONNX` " +
	"(the TTS graphs, metadata and tokenizer, and the codec decode step and its metadata)"

// File names the loader reads.
const (
	ManifestFile  = "browser_poc_manifest.json"
	TTSMetaFile   = "tts_browser_onnx_meta.json"
	CodecMetaFile = "codec_browser_onnx_meta.json"
	TokenizerFile = "tokenizer.model"
)

// ErrModelMismatch is onnx.ErrModelMismatch: a graph or a metadata file
// does not describe the model the code expects.
var ErrModelMismatch = onnx.ErrModelMismatch

type manifest struct {
	ModelFiles struct {
		TTSMeta        string `json:"tts_meta"`
		CodecMeta      string `json:"codec_meta"`
		TokenizerModel string `json:"tokenizer_model"`
	} `json:"model_files"`
	TTSConfig       map[string]json.RawMessage `json:"tts_config"`
	PromptTemplates struct {
		UserPrefix     []int `json:"user_prompt_prefix_token_ids"`
		AfterReference []int `json:"user_prompt_after_reference_token_ids"`
		AssistantPref  []int `json:"assistant_prompt_prefix_token_ids"`
	} `json:"prompt_templates"`
	GenerationDefaults struct {
		MaxNewFrames int `json:"max_new_frames"`
	} `json:"generation_defaults"`
	BuiltinVoices []struct {
		Voice            string  `json:"voice"`
		DisplayName      string  `json:"display_name"`
		PromptAudioCodes [][]int `json:"prompt_audio_codes"`
	} `json:"builtin_voices"`
}

type ttsMeta struct {
	Files       map[string]string          `json:"files"`
	ModelConfig map[string]json.RawMessage `json:"model_config"`
	ONNX        map[string]json.RawMessage `json:"onnx"`
}

type offsetSpec struct {
	Input  string  `json:"input_name"`
	Output string  `json:"output_name"`
	Shape  []int64 `json:"shape"`
}

type attnSpec struct {
	OffsetIn       string  `json:"offset_input_name"`
	OffsetOut      string  `json:"offset_output_name"`
	OffsetShape    []int64 `json:"offset_shape"`
	KeysIn         string  `json:"cached_keys_input_name"`
	KeysOut        string  `json:"cached_keys_output_name"`
	ValuesIn       string  `json:"cached_values_input_name"`
	ValuesOut      string  `json:"cached_values_output_name"`
	CacheShape     []int64 `json:"cache_shape"`
	PositionsIn    string  `json:"cached_positions_input_name"`
	PositionsOut   string  `json:"cached_positions_output_name"`
	PositionsShape []int64 `json:"positions_shape"`
}

type codecMeta struct {
	Files       map[string]string          `json:"files"`
	ONNX        map[string]json.RawMessage `json:"onnx"`
	CodecConfig struct {
		SampleRate     int `json:"sample_rate"`
		Channels       int `json:"channels"`
		DownsampleRate int `json:"downsample_rate"`
		NumQuantizers  int `json:"num_quantizers"`
	} `json:"codec_config"`
	StreamingDecode struct {
		TransformerOffsets []offsetSpec `json:"transformer_offsets"`
		AttentionCaches    []attnSpec   `json:"attention_caches"`
	} `json:"streaming_decode"`
}

// Limits on what the metadata may ask for, far above the real model's
// (hidden size 768, 12 layers, codec caches of 409,600 values).
const (
	// maxSize bounds each model_config size (hidden size, layers, heads,
	// head dim, codebook size).
	maxSize = 1 << 16
	// maxStateValues bounds the values of one codec state tensor.
	maxStateValues = 1 << 24
)

// readJSON reads path into v; a missing file names it with the hint.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moss: missing %s; %s", path, Hint)
		}
		return fmt.Errorf("moss: %w", err)
	}
	return decodeJSON(path, data, v)
}

// decodeJSON decodes the metadata file at path, which holds data, into v.
func decodeJSON(path string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: moss: %s is not valid metadata JSON: %v", ErrModelMismatch, path, err)
	}
	return nil
}

// metaPaths are where the three metadata files were read from.
type metaPaths struct{ man, tts, codec string }

// configure sets s up from the decoded metadata, checking everything that
// does not need the graphs: the model's sizes, the voice, the codec's
// format and streaming state, and the tensor name lists.
func (s *Synthesizer) configure(paths metaPaths, man *manifest, tm *ttsMeta, cm *codecMeta, opts Options) error {
	s.prefix = man.PromptTemplates.UserPrefix
	s.after = man.PromptTemplates.AfterReference
	s.assist = man.PromptTemplates.AssistantPref
	s.frames, s.seed = opts.MaxFrames, opts.Seed
	if s.frames <= 0 {
		s.frames = man.GenerationDefaults.MaxNewFrames
	}
	if s.frames <= 0 {
		return fmt.Errorf("%w: moss: %s: generation_defaults.max_new_frames is missing", ErrModelMismatch, paths.man)
	}
	if s.seed == 0 {
		s.seed = 1234
	}
	for _, t := range []struct {
		key string
		ids []int
	}{
		{"user_prompt_prefix_token_ids", s.prefix}, {"user_prompt_after_reference_token_ids", s.after},
		{"assistant_prompt_prefix_token_ids", s.assist},
	} {
		for _, id := range t.ids {
			if !isID(id) {
				return fmt.Errorf("%w: moss: %s: prompt_templates.%s has %d, not a token id", ErrModelMismatch, paths.man, t.key, id)
			}
		}
	}
	if err := s.readConfig(paths.tts, tm, man); err != nil {
		return err
	}
	if err := s.pickVoice(paths.man, man, opts.Voice); err != nil {
		return err
	}
	if err := s.readNames(paths.tts, tm); err != nil {
		return err
	}
	return s.readCodec(paths.codec, cm)
}

// readNames reads the TTS graphs' tensor names from the meta's onnx
// section (the defaults where it has none) and checks they fit together.
func (s *Synthesizer) readNames(path string, tm *ttsMeta) error {
	c := s.cfg
	var kv []string
	for i := range c.layers {
		kv = append(kv, fmt.Sprintf("present_key_%d", i), fmt.Sprintf("present_value_%d", i))
	}
	defPrefillOut := append([]string{"global_hidden"}, kv...)
	var pastDef []string
	for _, n := range kv {
		pastDef = append(pastDef, strings.Replace(n, "present_", "past_", 1))
	}
	s.prefillIn = nameList(tm.ONNX, []string{"input_ids", "attention_mask"}, "prefill_input_names")
	s.prefillOut = nameList(tm.ONNX, defPrefillOut, "prefill_output_names")
	s.decodeIn = nameList(tm.ONNX, append([]string{"input_ids", "past_valid_lengths"}, pastDef...), "decode_input_names", "decode_step_input_names")
	s.decodeOut = nameList(tm.ONNX, defPrefillOut, "decode_output_names", "decode_step_output_names")
	s.localIn = nameList(tm.ONNX, []string{"global_hidden", "repetition_seen_mask", "assistant_random_u", "audio_random_u"},
		"local_fixed_sampled_frame_input_names", "fixed_sampled_frame_input_names")
	s.localOut = nameList(tm.ONNX, []string{"should_continue", "frame_token_ids"},
		"local_fixed_sampled_frame_output_names", "fixed_sampled_frame_output_names")

	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: moss: %s: %s", ErrModelMismatch, path, fmt.Sprintf(format, a...))
	}
	if len(s.prefillIn) != 2 || len(s.localIn) != 4 || len(s.localOut) != 2 {
		return bad("onnx name lists have the wrong lengths (prefill inputs %d, local inputs %d, local outputs %d; expected 2, 4, 2)", len(s.prefillIn), len(s.localIn), len(s.localOut))
	}
	nKV := 2 * c.layers
	if len(s.prefillOut) != 1+nKV || len(s.decodeOut) != 1+nKV || len(s.decodeIn) != 2+nKV {
		return bad("onnx name lists do not have %d KV tensors for global_layers %d", nKV, c.layers)
	}
	for _, names := range [][]string{s.prefillIn, s.prefillOut, s.decodeIn, s.decodeOut, s.localIn, s.localOut} {
		if slices.Contains(names, "") {
			return bad("an onnx name list has an empty tensor name")
		}
	}
	s.kvSlot = make(map[string]int, nKV)
	for i, name := range s.decodeOut[1:] {
		s.kvSlot[name] = i
	}
	// The decode step's past_* inputs must be fed from present_* outputs.
	presents := map[string]bool{}
	for _, n := range s.prefillOut[1:] {
		presents[n] = true
	}
	for _, n := range s.decodeIn[2:] {
		if !presents[strings.Replace(n, "past_", "present_", 1)] {
			return bad("decode input %q has no matching prefill output %q", n, strings.Replace(n, "past_", "present_", 1))
		}
	}
	return nil
}

// readCodec reads the codec meta: the audio format, the number of
// quantizers, the streaming state and the decode step's tensor names.
func (s *Synthesizer) readCodec(path string, cm *codecMeta) error {
	cc := cm.CodecConfig
	if cc.SampleRate <= 0 || cc.Channels <= 0 {
		return fmt.Errorf("%w: moss: %s: codec_config has no sample_rate/channels", ErrModelMismatch, path)
	}
	s.format = audio.Format{Rate: cc.SampleRate, Channels: cc.Channels}
	if err := s.format.Validate(); err != nil {
		return fmt.Errorf("%w: moss: %s: codec_config: %v", ErrModelMismatch, path, err)
	}
	if cc.NumQuantizers != s.cfg.nVQ {
		return fmt.Errorf("%w: moss: %s: codec_config.num_quantizers is %d, the TTS model has n_vq %d", ErrModelMismatch, path, cc.NumQuantizers, s.cfg.nVQ)
	}
	if len(cm.StreamingDecode.TransformerOffsets) == 0 && len(cm.StreamingDecode.AttentionCaches) == 0 {
		return fmt.Errorf("%w: moss: %s: streaming_decode lists no state", ErrModelMismatch, path)
	}
	s.offsets, s.attns = cm.StreamingDecode.TransformerOffsets, cm.StreamingDecode.AttentionCaches
	// Offsets are [1] when the meta gives no shape (the export omits offset_shape).
	for i := range s.offsets {
		if len(s.offsets[i].Shape) == 0 {
			s.offsets[i].Shape = []int64{1}
		}
		if err := stateShape(s.offsets[i].Shape); err != nil {
			return fmt.Errorf("%w: moss: %s: transformer_offsets[%d]: %v", ErrModelMismatch, path, i, err)
		}
	}
	for i, a := range s.attns {
		if len(a.OffsetShape) == 0 {
			s.attns[i].OffsetShape = []int64{1}
		}
		if len(a.CacheShape) != 4 || len(a.PositionsShape) != 2 {
			return fmt.Errorf("%w: moss: %s: attention_caches[%d] has cache_shape %v and positions_shape %v, expected 4 and 2 dimensions",
				ErrModelMismatch, path, i, a.CacheShape, a.PositionsShape)
		}
		for _, shape := range [][]int64{s.attns[i].OffsetShape, a.CacheShape, a.PositionsShape} {
			if err := stateShape(shape); err != nil {
				return fmt.Errorf("%w: moss: %s: attention_caches[%d]: %v", ErrModelMismatch, path, i, err)
			}
		}
	}

	s.codecIn = nameList(cm.ONNX, []string{"audio_codes", "audio_code_lengths"}, "decode_step_input_names")
	s.codecOut = nameList(cm.ONNX, []string{"audio", "audio_lengths"}, "decode_step_output_names")
	if len(s.codecIn) < 2 || len(s.codecOut) < 2 {
		return fmt.Errorf("%w: moss: %s: onnx.decode_step_*_names are too short", ErrModelMismatch, path)
	}
	names := slices.Concat(s.codecIn[:2], s.codecOut[:2])
	for _, o := range s.offsets {
		names = append(names, o.Input, o.Output)
	}
	for _, a := range s.attns {
		names = append(names, a.OffsetIn, a.OffsetOut, a.KeysIn, a.KeysOut, a.ValuesIn, a.ValuesOut, a.PositionsIn, a.PositionsOut)
	}
	if slices.Contains(names, "") {
		return fmt.Errorf("%w: moss: %s: a streaming_decode spec has an empty tensor name", ErrModelMismatch, path)
	}
	return nil
}

// stateShape checks the shape of a codec state tensor, which Synthesize
// allocates: every dimension known and the whole not huge.
func stateShape(shape []int64) error {
	n := int64(1)
	for _, d := range shape {
		if d <= 0 || d > maxStateValues || n*d > maxStateValues {
			return fmt.Errorf("state shape %v: want dimensions of at least 1 and at most %d values", shape, maxStateValues)
		}
		n *= d
	}
	return nil
}

// isID reports whether v can be a token id or code in an int32 tensor.
func isID(v int) bool { return v >= 0 && v <= math.MaxInt32 }

// intField reads an integer from a raw JSON map.
func intField(path, section string, m map[string]json.RawMessage, key string) (int, error) {
	raw, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("%w: moss: %s: %s has no %q", ErrModelMismatch, path, section, key)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%w: moss: %s: %s.%s is %s, not an integer", ErrModelMismatch, path, section, key, raw)
	}
	return int(f), nil
}

// nameList reads a list of tensor names from the meta's onnx section,
// trying the keys in order; def is used when none is present.
func nameList(m map[string]json.RawMessage, def []string, keys ...string) []string {
	for _, k := range keys {
		raw, ok := m[k]
		if !ok {
			continue
		}
		var names []string
		if json.Unmarshal(raw, &names) == nil && len(names) > 0 {
			return names
		}
	}
	return def
}

// file resolves a file named in metadata relative to dir, failing with
// the hint when it is missing.
func file(dir, name, what string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: moss: the metadata in %s names no %s file", ErrModelMismatch, dir, what)
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, name)
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("moss: missing %s (%s); %s", p, what, Hint)
	}
	return p, nil
}

func voiceNames(m *manifest) string {
	var names []string
	for _, v := range m.BuiltinVoices {
		names = append(names, v.Voice)
	}
	return strings.Join(names, ", ")
}
