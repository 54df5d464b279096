// Package mnnconf holds what the LLM binding and the model cache both
// need to know of MNN's JSON configs.
package mnnconf

// Merge sets src's keys in dst, merging an object into an object, as MNN
// merges llm_config.json over config.json and set_config's JSON into the
// config (alibaba/MNN transformers/llm/engine/src/llm.cpp:137-140).
func Merge(dst, src map[string]any) {
	for k, v := range src {
		d, dok := dst[k].(map[string]any)
		s, sok := v.(map[string]any)
		if dok && sok {
			Merge(d, s)
			continue
		}
		dst[k] = v
	}
}
