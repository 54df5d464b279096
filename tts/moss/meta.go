package moss

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

// readJSON reads path into v; a missing file names it with the hint.
func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("moss: missing %s; %s", path, Hint)
		}
		return fmt.Errorf("moss: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: moss: %s is not valid metadata JSON: %v", ErrModelMismatch, path, err)
	}
	return nil
}

// intField reads an integer from a raw JSON map.
func intField(path, section string, m map[string]json.RawMessage, key string) (int, error) {
	raw, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("%w: moss: %s: %s has no %q", ErrModelMismatch, path, section, key)
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != float64(int(f)) {
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
