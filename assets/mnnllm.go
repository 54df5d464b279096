package assets

// MNN LLM exports differ in their files by how they were exported: MNN's
// exporter writes no embeddings file when the model ties its input and
// output embeddings (the engine reads them from the weights), and writes
// its tokenizer as tokenizer.mtok when the source model has a
// tokenizer.json, where older exports have embeddings_bf16.bin and
// tokenizer.txt. What an export has, its config.json and llm_config.json
// say, read here as MNN's engine reads them: the lines cited are of
// alibaba/MNN transformers/llm/engine/src/ at the commit scripts/build-mnn
// builds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/voiceassistant/voice/internal/mnnconf"
)

// FormatMNNLLM is Model.Format for an MNN LLM export.
const FormatMNNLLM = "mnn-llm"

// mnnConfig is the file of an MNN LLM export that names the others, and
// the one the engine is created from.
const mnnConfig = "config.json"

// filesIn is the files of m as installed in dir: its manifest's, or for an
// MNN LLM export whose config.json is there, those the config names.
func (m Model) filesIn(dir string) ([]File, error) {
	if m.Format != FormatMNNLLM {
		return m.Files, nil
	}
	cfg, llmConfig, err := readMNNConfig(dir)
	if errors.Is(err, os.ErrNotExist) {
		return m.Files, nil
	}
	if err != nil {
		return nil, fmt.Errorf("assets: model %s: %w", m.Name, err)
	}
	names, err := mnnFiles(cfg, llmConfig)
	if err != nil {
		return nil, fmt.Errorf("assets: model %s: %w", m.Name, err)
	}
	files := make([]File, len(names))
	for i, name := range names {
		files[i] = m.file(name)
	}
	return files, nil
}

// file is m's file at p: the manifest's entry, or else, for a file an MNN
// LLM export's config names that the manifest does not list, a file from
// beside config.json at each of its sources.
func (m Model) file(p string) File {
	var cfg File
	for _, f := range m.Files {
		if f.Path == p {
			return f
		}
		if f.Path == mnnConfig {
			cfg = f
		}
	}
	f := File{Path: p}
	for _, src := range cfg.Sources {
		u, err := url.Parse(src)
		if err != nil {
			continue // validate accepts only URLs
		}
		u.Path, u.RawPath = path.Join(path.Dir(u.Path), p), ""
		f.Sources = append(f.Sources, u.String())
	}
	return f
}

// pullMNNConfigs pulls the files of an MNN LLM export that name the rest:
// config.json, and the llm_config.json it names.
func (p *Puller) pullMNNConfigs(ctx context.Context, m Model) error {
	if err := p.pullFile(ctx, m, m.file(mnnConfig)); err != nil {
		return err
	}
	cfg, err := readJSON(filepath.Join(Path(p.Dir, m), mnnConfig))
	if err != nil {
		return fmt.Errorf("assets: model %s: %w", m.Name, err)
	}
	name, err := mnnLLMConfig(cfg)
	if err != nil {
		return fmt.Errorf("assets: model %s: %w", m.Name, err)
	}
	return p.pullFile(ctx, m, m.file(name))
}

// readMNNConfig reads the export's config in dir as the engine does
// (llmconfig.hpp:58-98): config.json, with the keys of the llm_config.json
// it names merged over it, if there is one (without it the engine goes on,
// and the file is missing). It returns the merged config and
// llm_config.json's name; os.ErrNotExist if there is no config.json.
func readMNNConfig(dir string) (map[string]any, string, error) {
	cfg, err := readJSON(filepath.Join(dir, mnnConfig))
	if err != nil {
		return nil, "", err
	}
	name, err := mnnLLMConfig(cfg)
	if err != nil {
		return nil, "", err
	}
	llm, err := readJSON(filepath.Join(dir, filepath.FromSlash(name)))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, "", err
	default:
		mnnconf.Merge(cfg, llm)
	}
	return cfg, name, nil
}

// mnnLLMConfig checks an export's config.json, cfg, for what keeps its
// files in its directory, and names the llm_config.json it names.
func mnnLLMConfig(cfg map[string]any) (string, error) {
	if base, ok := cfg["base_dir"]; ok {
		return "", fmt.Errorf("%s: base_dir %v puts the model's files outside its directory", mnnConfig, base)
	}
	return configFile(cfg, "llm_config", "llm_config.json")
}

// mnnFiles names the files the engine reads of an export with config cfg
// and llm_config.json llmConfig: the configs, the model, its weights, the
// tokenizer, and the embeddings unless they are read from the weights.
// Each name is the config's, else the engine's default (llmconfig.hpp:102-132).
func mnnFiles(cfg map[string]any, llmConfig string) ([]string, error) {
	names := []string{mnnConfig, llmConfig}
	keys := [][2]string{{"llm_model", "llm.mnn"}, {"llm_weight", "llm.mnn.weight"}, {"tokenizer_file", "tokenizer.txt"}}
	if !embeddingsInWeights(cfg["tie_embeddings"]) {
		keys = append(keys, [2]string{"embedding_file", "embeddings_bf16.bin"})
	}
	for _, k := range keys {
		name, err := configFile(cfg, k[0], k[1])
		if err != nil {
			return nil, err
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// embeddingsInWeights reports whether the engine reads the embeddings from
// the weights file rather than the embeddings file, given llm_config.json's
// tie_embeddings, in either of the forms the engine reads
// (llmconfig.hpp:461-513): it does when they start past the start of the
// file, as the exporter writes them for tied embeddings; else it reads
// embedding_file (diskembedding.cpp:75-88, 139-144).
func embeddingsInWeights(tie any) bool {
	t, ok := parseTie(tie)
	return ok && t.weightOffset != 0
}

// tiedEmbeddingsEnd is where the embeddings that tie places in the
// weights file end: their rows run from weight_offset to alpha_offset,
// their scales from there for alpha_size bytes (diskembedding.cpp:92-135);
// 0 when they are not in the weights file.
func tiedEmbeddingsEnd(tie any) int64 {
	t, ok := parseTie(tie)
	if !ok || t.weightOffset == 0 {
		return 0
	}
	return max(t.weightOffset, t.alphaOffset+t.alphaSize)
}

// tieInfo is what tie_embeddings says of where the embeddings are.
type tieInfo struct{ weightOffset, alphaOffset, alphaSize int64 }

// parseTie reads tie_embeddings in either of its forms
// (llmconfig.hpp:481-513): false when it has neither.
func parseTie(tie any) (tieInfo, bool) {
	num := func(v any) int64 {
		n, _ := v.(float64)
		return int64(n)
	}
	switch t := tie.(type) {
	case map[string]any:
		return tieInfo{num(t["weight_offset"]), num(t["alpha_offset"]), num(t["alpha_size"])}, true
	case []any:
		if len(t) >= 5 {
			return tieInfo{num(t[0]), num(t[1]), num(t[2])}, true
		}
	}
	return tieInfo{}, false
}

// configFile is the file the config's key names, or def if it names none.
func configFile(cfg map[string]any, key, def string) (string, error) {
	v, ok := cfg[key]
	if !ok {
		return def, nil
	}
	name, ok := v.(string)
	if !ok || !localPath(name) {
		return "", fmt.Errorf("config %s %v is not a file in the model's directory", key, v)
	}
	return name, nil
}

// readJSON reads the JSON object in the file at p.
func readJSON(p string) (map[string]any, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(p), err)
	}
	if v == nil {
		return nil, fmt.Errorf("%s: not a JSON object", filepath.Base(p))
	}
	return v, nil
}
