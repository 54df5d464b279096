// Package mnn runs MNN-Pocket (or any MNN LLM export) on Alibaba's MNN
// engine through a small C shim over MNN::Transformer::Llm. The engine is
// linked only in builds with the tag `mnn` (see docs/models.md, "Building with
// MNN"); other builds compile a stand-in whose Open says how to get one.
package mnn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/voiceassistant/voice/internal/mnnconf"
)

// ErrNotBuilt is returned by Open in binaries built without MNN.
var ErrNotBuilt = errors.New(`the LLM needs a build with MNN (-tags mnn): scripts/setup builds MNN and the assistant with it (see docs/models.md, "Building with MNN")`)

// ErrCorrupt is in Open's error when the export's files crash the engine
// (or hang it) in the check of their first load: the caller says how to
// get them whole again, which depends on where they came from.
var ErrCorrupt = errors.New("corrupt or cut short")

// Hint tells the user how to get the model; DIR stands for the model
// directory. The addresses are the manifest's, which follow the MNN team's
// publication pattern but could not be checked: it says so, lest a
// missing page look like a network fault.
const Hint = "run `voice-agent models pull mnn-pocket-0.3b-int4`, or download the MNN-Pocket-0.3B INT4 export " +
	"(config.json, llm_config.json, llm.mnn, llm.mnn.weight and the tokenizer they name) " +
	"from huggingface.co/taobao-mnn/MNN-Pocket-0.3B-MNN or modelscope.cn/models/MNN/MNN-Pocket-0.3B-MNN " +
	"(unverified addresses, see assets/manifest.json) into DIR"

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
	// Settings are passed to the engine's set_config (sampler, precision,
	// memory, backend_type...), over the defaults above, an object merged
	// into an object key by key as MNN merges its config: {"jinja":
	// {"context": {"enable_thinking": true}}} lets a model think.
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

// engineSettings are given to set_config before load: the runtime knobs,
// KV reuse across replies (the binding keeps what the next prompt shares
// with the KV cache and prefills only the rest; the engine's own
// text-based prompt cache is off), the weights mapped from files in
// mapped (none if ""), and the chat template's context.
func (c Config) engineSettings(mapped string) map[string]any {
	s := map[string]any{
		"thread_num":     defaultThreads(runtime.NumCPU()),
		"max_new_tokens": 512,
		"reuse_kv":       true,
		// Synchronous execution, as MNN's llm_bench runs it: the
		// asynchronous default decoded 15-25% slower here (2 cores).
		"async":        false,
		"prompt_cache": false,
		// The weights, rearranged for the CPU at the first load, in files
		// under tmp_path that later loads map (use_cached_mmap, MNN's
		// default, trusts them once a load has completed and written
		// its sync marker: alibaba/MNN source/backend/cpu/CPUBackend.cpp
		// onClearBuffer and the weightMemoryPath setup). Mapped pages are
		// the kernel's to drop and read again under pressure; on the
		// heap (the default, and where mapped is "": the cache cannot
		// hold them), the int4 stand-in's 100 MiB were anonymous.
		"use_mmap": mapped != "",
		// A Qwen3-style model (MNN-Pocket) thinks before it answers
		// unless its chat template is told not to, which MNN does only
		// through the template's context, as its llm_demo does: the
		// prompt then ends in an empty "<think>\n\n</think>\n\n". A voice
		// assistant that thought first would answer seconds later; what
		// thinking a model still writes is dropped from the reply
		// (stream).
		"jinja": map[string]any{"context": map[string]any{"enable_thinking": false}},
	}
	if mapped != "" {
		s["tmp_path"] = mapped
	}
	if c.Threads > 0 {
		s["thread_num"] = c.Threads
	}
	if c.MaxNewTokens > 0 {
		s["max_new_tokens"] = c.MaxNewTokens
	}
	mnnconf.Merge(s, c.Settings)
	return s
}

// templateSettings are given to set_config again once the model is
// loaded: the chat template's context of settings, over what loading
// merged into it from the package's own context.json, if it has one. MNN's
// llm_demo, too, turns thinking off after loading.
func templateSettings(settings map[string]any) (map[string]any, bool) {
	jinja, _ := settings["jinja"].(map[string]any)
	ctx, ok := jinja["context"]
	return map[string]any{"jinja": map[string]any{"context": ctx}}, ok
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
