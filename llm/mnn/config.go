// Package mnn runs MNN-Pocket (or any MNN LLM export) on Alibaba's MNN
// engine through a small C shim over MNN::Transformer::Llm. The engine is
// linked only in builds with the tag `mnn` (see docs/models.md, "Building with
// MNN"); other builds compile a stand-in whose Open says how to get one.
package mnn

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// ErrNotBuilt is returned by Open in binaries built without MNN.
var ErrNotBuilt = errors.New(`the LLM needs a build with MNN (-tags mnn): scripts/setup builds MNN and the assistant with it (see docs/models.md, "Building with MNN")`)

// Config selects the model and tunes the engine.
type Config struct {
	// Dir holds the MNN export: config.json, llm_config.json, llm.mnn,
	// llm.mnn.weight, the tokenizer and (for some models) embeddings.
	Dir string
	// ConfigFile is the file in Dir the engine starts from (default
	// config.json).
	ConfigFile string
	// Threads for the CPU backend (default: one per core but one, at most
	// 4). MNN-Pocket's decode is memory-bound past 4 on phone-class cores,
	// and a core is left for synthesis, which runs while the LLM decodes:
	// MNN's workers spin through each engine call, and on a 2-core
	// machine two of them beside the synthesizer decoded 5-10 times
	// slower than one.
	Threads int
	// MaxNewTokens bounds a reply (default 512).
	MaxNewTokens int
	// Settings are passed to the engine's set_config as they are (sampler,
	// precision, memory, backend_type...), over the defaults above.
	Settings map[string]any
}

func (c Config) configPath() (string, error) {
	name := c.ConfigFile
	if name == "" {
		name = "config.json"
	}
	path := filepath.Join(c.Dir, name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("mnn: model directory %s: %w; it should hold an MNN LLM export (config.json, llm.mnn, llm.mnn.weight, tokenizer)", c.Dir, err)
	}
	return path, nil
}

// engineSettings is the JSON given to set_config before load: the
// runtime knobs, KV reuse across replies (the binding keeps what the
// next prompt shares with the KV cache and prefills only the rest; the
// engine's own text-based prompt cache is off), and a private tmp_path
// instead of the working directory.
func (c Config) engineSettings(tmp string) (string, error) {
	s := map[string]any{
		"thread_num":     defaultThreads(runtime.NumCPU()),
		"max_new_tokens": 512,
		"reuse_kv":       true,
		// Synchronous execution, as MNN's llm_bench runs it: the
		// asynchronous default decoded 15-25% slower here (2 cores).
		"async":        false,
		"prompt_cache": false,
		"tmp_path":     tmp,
	}
	if c.Threads > 0 {
		s["thread_num"] = c.Threads
	}
	if c.MaxNewTokens > 0 {
		s["max_new_tokens"] = c.MaxNewTokens
	}
	for k, v := range c.Settings {
		s[k] = v
	}
	b, err := json.Marshal(s)
	return string(b), err
}

func defaultThreads(cores int) int { return min(4, max(1, cores-1)) }

func (c Config) maxNewTokens() int {
	if v, ok := c.Settings["max_new_tokens"].(int); ok && v > 0 {
		return v
	}
	if c.MaxNewTokens > 0 {
		return c.MaxNewTokens
	}
	return 512
}
