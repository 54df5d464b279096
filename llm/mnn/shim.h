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
// dump_config is the engine's config as JSON, set_config's merged (*text,
// malloc'ed, freed by the caller).
int voice_llm_dump_config(voice_llm *l, char **text, char **err);
// prepare tokenizes a prompt (the chat as apply_template renders it, or
// the start of one) and keeps of the KV cache the longest start of it the
// cache holds (*reused tokens of *total), dropping the rest: what a
// cancelled or speculative reply left there, or the end of a reply the
// user did not hear. It keeps a few tokens fewer where that makes the rest
// a whole number of batches of batch tokens (see shim.cpp). For a reply
// (reply != 0) the prompt's last token is always run again.
int voice_llm_prepare(voice_llm *l, const char *text, int batch, int reply, int *reused, int *total, char **err);
// count_tokens is how many tokens the model's tokenizer makes of text.
int voice_llm_count_tokens(voice_llm *l, const char *text, int *n, char **err);
// apply_template renders the chat with the model's template (*text,
// malloc'ed, freed by the caller).
int voice_llm_apply_template(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **text, char **err);
// prefill runs the next batch of the prepared prompt through the model;
// *left is how many tokens remain.
int voice_llm_prefill(voice_llm *l, int *left, char **err);
// step waits for the decoding call before it to end, then starts one of up
// to tokens tokens in MNN's own loop, on the binding's decoding thread, and
// returns as soon as that call has written text or ended: *text (len
// bytes, valid until the next call) is what came since the last step, and
// *stopped is set when the model ended the reply. The call may still be
// running the last token through the model: a step of 0 tokens starts
// none and waits for it, which every reply does before the engine is
// used otherwise.
int voice_llm_step(voice_llm *l, int tokens, int *stopped, const char **text, size_t *len, char **err);
// hold_after_text, on, keeps the decoding thread at each token's text
// until it is turned off (for tests).
void voice_llm_hold_after_text(voice_llm *l, int on);
void voice_llm_stats_get(voice_llm *l, voice_llm_stats *out);
void voice_llm_reset(voice_llm *l);
void voice_llm_destroy(voice_llm *l);
// mnn_version is the version of the MNN headers the binding was built with.
const char *voice_llm_mnn_version(void);

#ifdef __cplusplus
}
#endif

#endif
