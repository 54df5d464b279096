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
// through the model; it also clears a cancellation left from before.
int voice_llm_prefill(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **err);
// decode generates up to max_tokens tokens in one call, until the model
// ends the reply or voice_llm_cancel. Their text is taken with
// voice_llm_take, from another thread, while it runs.
int voice_llm_decode(voice_llm *l, int max_tokens, char **err);
// cancel stops decode after the token being computed (and at most one
// more); safe from any thread.
void voice_llm_cancel(voice_llm *l);
// take hands out the text written since the last take (valid until the
// next take) and returns its length; safe while decode runs.
size_t voice_llm_take(voice_llm *l, const char **text);
void voice_llm_stats_get(voice_llm *l, voice_llm_stats *out);
int voice_llm_sync_prompt_cache(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **err);
void voice_llm_reset(voice_llm *l);
void voice_llm_destroy(voice_llm *l);

#ifdef __cplusplus
}
#endif

#endif
