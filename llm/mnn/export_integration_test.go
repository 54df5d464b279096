//go:build mnn

package mnn

// The MNN lines cited are at alibaba/MNN commit
// 4d40bdbd7efb73a58383bb5da867a6f41eb1776e, the one scripts/build-mnn
// builds.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voiceassistant/voice/internal/mnnconf"
	"github.com/voiceassistant/voice/internal/testenv"
)

// tinyExport is a copy of the tiny model without the files drop names,
// and with the JSON objects of edit merged into its JSON files.
func tinyExport(t *testing.T, edit map[string]map[string]any, drop ...string) string {
	src := testenv.TinyLLM(t)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "README.md" && !slices.Contains(drop, e.Name()) {
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
		}
	}
	for name, keys := range edit {
		cfg := map[string]any{}
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			require.NoError(t, json.Unmarshal(data, &cfg))
		}
		mnnconf.Merge(cfg, keys)
		data, err := json.Marshal(cfg)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	return dir
}

func openPrompt(t *testing.T, dir string, settings map[string]any) (*Model, string) {
	m, err := Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: 4, Settings: settings})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	prompt, err := m.Prompt(hello)
	require.NoError(t, err)
	return m, prompt
}

var thinkingOn = map[string]any{"jinja": map[string]any{"context": map[string]any{"enable_thinking": true}}}

// The engine gives the template enable_thinking false, and a Qwen3
// template (Qwen/Qwen3-0.6B's chat_template, Apache-2.0, in
// testdata/qwen3_chat_template.jinja, which the exporter copies into
// llm_config.json: alibaba/MNN transformers/llm/export/llmexport.py:124-133)
// ends the prompt with the empty thinking that keeps the model from
// thinking. MNN renders the
// template with the config's jinja.context as variables
// (transformers/llm/engine/src/llm.cpp:111-140,
// transformers/llm/engine/src/tokenizer/tokenizer.cpp:1047-1054,
// transformers/llm/engine/src/tokenizer/jinja.hpp:2234), where its
// llm_demo turns thinking off once the model is loaded
// (transformers/llm/engine/demo/llm_demo.cpp:322, 342-350).
func TestQwen3TemplateThinksOnlyWhenTold(t *testing.T) {
	template, err := os.ReadFile(filepath.Join("testdata", "qwen3_chat_template.jinja"))
	require.NoError(t, err)
	qwen3 := map[string]map[string]any{"llm_config.json": {"jinja": map[string]any{"chat_template": string(template), "eos": "<|im_end|>"}}}
	const chat = "<|im_start|>system\nyou are a test<|im_end|>\n<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n"

	dir := tinyExport(t, qwen3)
	off, prompt := openPrompt(t, dir, nil)
	assert.Equal(t, chat+"<think>\n\n</think>\n\n", prompt, "thinking off")
	on, prompt := openPrompt(t, dir, thinkingOn)
	assert.Equal(t, chat, prompt, "Settings turn it on")

	// The prompt prefilled is the one shown: the empty thinking's tokens
	// more.
	quiet := func(string) error { return nil }
	stOff, err := off.Generate(context.Background(), hello, quiet)
	require.NoError(t, err)
	stOn, err := on.Generate(context.Background(), hello, quiet)
	require.NoError(t, err)
	assert.Greater(t, stOff.PromptTokens, stOn.PromptTokens)

	// A package's context.json is merged into the template's context as
	// the model loads, over what set_config gave before
	// (transformers/llm/engine/src/llm.cpp:346-369); the settings are
	// given again after.
	dir = tinyExport(t, qwen3)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "context.json"), []byte(`{"enable_thinking": true}`), 0o644))
	_, prompt = openPrompt(t, dir, nil)
	assert.Equal(t, chat+"<think>\n\n</think>\n\n", prompt, "thinking off despite context.json")
}

// The tiny model's own template (ChatML, in its llm_config.json) says
// nothing of thinking: enable_thinking changes nothing in its prompt.
func TestTinyTemplateHasNoThinking(t *testing.T) {
	const want = "<|im_start|>system\nyou are a test<|im_end|>\n<|im_start|>user\nhello there<|im_end|>\n<|im_start|>assistant\n"
	for _, settings := range []map[string]any{nil, thinkingOn} {
		_, prompt := openPrompt(t, testenv.TinyLLM(t), settings)
		assert.Equal(t, want, prompt, "settings %v", settings)
	}
}

// An export with tied embeddings and its tokenizer as tokenizer.mtok, as
// the exporter writes one from a model with a tokenizer.json
// (transformers/llm/export/llmexport.py:41, 390, 743-746, 756-758), has
// neither embeddings_bf16.bin nor tokenizer.txt: the engine opens the
// tokenizer its config names (llmconfig.hpp:130-132; it tells the formats
// apart by their first line, tokenizer/tokenizer.cpp:75-95), and reads the
// embeddings from the weights at tie_embeddings' weight_offset
// (transformers/llm/engine/src/diskembedding.cpp:75-89), which is what
// assets expects of such a package. Here the tiny model's embeddings are
// put at the end of its weights, as float16 rows (a 16-bit tie,
// diskembedding.cpp:198-207): it replies as the tiny model does.
func TestTiedExportNeedsNoEmbeddingsFile(t *testing.T) {
	src := testenv.TinyLLM(t)
	weights, err := os.ReadFile(filepath.Join(src, "llm.mnn.weight"))
	require.NoError(t, err)
	dir := tinyExport(t, map[string]map[string]any{
		"config_greedy.json": {"tokenizer_file": "tokenizer.mtok"},
		"llm_config.json": {"tie_embeddings": map[string]any{
			"weight_offset": len(weights), "alpha_offset": 0, "alpha_size": 0,
			"quant_bit": 16, "quant_block": 0, "alpha_dtype": "fp32",
		}},
	}, "embeddings_bf16.bin", "tokenizer.txt")
	bf16, err := os.ReadFile(filepath.Join(src, "embeddings_bf16.bin"))
	require.NoError(t, err)
	for i := 0; i < len(bf16); i += 2 {
		x := math.Float32frombits(uint32(binary.LittleEndian.Uint16(bf16[i:])) << 16)
		weights = binary.LittleEndian.AppendUint16(weights, half(x))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "llm.mnn.weight"), weights, 0o644))
	tokenizer, err := os.ReadFile(filepath.Join(src, "tokenizer.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.mtok"), tokenizer, 0o644))

	want, _, err := generate(t, openTiny(t, 16), context.Background(), hello, 0, nil)
	require.NoError(t, err)
	m, err := Open(Config{Dir: dir, ConfigFile: "config_greedy.json", Threads: 1, MaxNewTokens: 16})
	require.NoError(t, err)
	defer m.Close()
	m.batch = minPrefill
	got, _, err := generate(t, m, context.Background(), hello, 0, nil)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// half is x, a bfloat16 value, as a float16: exactly, but for the few
// bits a value too small for a normal float16 loses.
func half(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	if a := math.Abs(float64(x)); a < 0x1p-14 {
		return sign | uint16(math.RoundToEven(a*0x1p24))
	}
	return sign | uint16(int(b>>23&0xff)-127+15)<<10 | uint16(b>>13&0x3ff)
}
