// A C interface over MNN's C++ LLM engine (MNN::Transformer::Llm), so cgo
// can drive it. Every function catches C++ exceptions and reports them as
// an error string (*err, malloc'ed, freed by the caller).
#ifndef VOICE_MNN_SHIM_H
#define VOICE_MNN_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct voice_llm voice_llm;

typedef struct {
	int status; // MNN's LlmStatus
	int prompt_len;
	int gen_seq_len;
	int all_seq_len;
	int64_t prefill_us;
	int64_t decode_us;
} voice_llm_stats;

voice_llm *voice_llm_create(const char *config_path, char **err);
int voice_llm_set_config(voice_llm *l, const char *json, char **err);
int voice_llm_load(voice_llm *l, char **err);
// prefill renders the chat with the model's template and runs the prompt
// through the model. Text the engine produced on the way is left in
// *text/*len, valid until the next call on l.
int voice_llm_prefill(voice_llm *l, const char *const *roles, const char *const *contents, int n, const char **text, size_t *len, char **err);
// step decodes up to tokens tokens in MNN's own loop and leaves their text
// as prefill does; *stopped is set when the model ended the reply.
int voice_llm_step(voice_llm *l, int tokens, int *stopped, const char **text, size_t *len, char **err);
void voice_llm_stats_get(voice_llm *l, voice_llm_stats *out);
int voice_llm_sync_prompt_cache(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **err);
void voice_llm_reset(voice_llm *l);
void voice_llm_destroy(voice_llm *l);

#ifdef __cplusplus
}
#endif

#endif
