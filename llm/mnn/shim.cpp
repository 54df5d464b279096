//go:build mnn

#include "shim.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <ostream>
#include <streambuf>
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include <MNN/MNNDefine.h>
#include <MNN/expr/Executor.hpp>
#include <llm/llm.hpp>

using MNN::Transformer::ChatMessages;
using MNN::Transformer::Llm;

namespace {

// Sink keeps what the engine writes to its ostream during one call, for
// the caller to copy out when the call returns. Handing text back this way
// rather than calling into Go for every piece keeps the Go runtime out of
// the decode loop: a callback per token woke threads that competed with
// MNN's workers for the cores.
class Sink : public std::streambuf {
public:
	std::string text;

protected:
	std::streamsize xsputn(const char *s, std::streamsize n) override {
		text.append(s, static_cast<size_t>(n));
		return n;
	}
	int_type overflow(int_type c) override {
		if (c != traits_type::eof()) {
			char ch = static_cast<char>(c);
			xsputn(&ch, 1);
		}
		return c;
	}
};

char *dup(const std::string &s) {
	char *out = static_cast<char *>(std::malloc(s.size() + 1));
	if (out) {
		std::memcpy(out, s.c_str(), s.size() + 1);
	}
	return out;
}

template <typename F>
int guard(char **err, F &&f) {
	try {
		return f();
	} catch (const std::exception &e) {
		*err = dup(e.what());
	} catch (...) {
		*err = dup("unknown C++ exception");
	}
	return -1;
}

ChatMessages messages(const char *const *roles, const char *const *contents, int n) {
	ChatMessages msgs;
	msgs.reserve(n);
	for (int i = 0; i < n; i++) {
		msgs.emplace_back(roles[i], contents[i]);
	}
	return msgs;
}

// awake keeps the engine's worker threads running between the forward
// passes of one call. Without it MNN puts them to sleep after every
// forward pass and wakes them for the next, once a token, which cost about
// a sixth of the decode speed against llm_bench (which holds them awake
// the whole run). They sleep again when the call returns, so they do not
// spin while the caller is busy elsewhere.
std::shared_ptr<MNN::Express::Executor::Activation> awake(Llm *llm) {
	return llm->getExecutor()->activte();
}

} // namespace

struct voice_llm {
	Llm *llm = nullptr;
	Sink sink;
	std::ostream os{&sink};
	// The prompt being prefilled and how far: prepare sets them, prefill
	// works through them.
	std::vector<int> prompt;
	size_t next = 0;
	size_t batch = 1; // tokens a prefill call runs
	bool fresh = false; // the reply's first engine call is still to come
};

namespace {

// history is the engine's record of the tokens its KV cache holds. The
// engine hands it out read-only; the binding truncates it (under its
// mutex) to what stays in the KV cache when it drops the rest.
std::vector<int> &history(Llm *llm) {
	return const_cast<MNN::Transformer::LlmContext *>(llm->getContext())->history_tokens;
}

// keep drops the KV cache past its first n tokens; false if the engine's
// state does not add up (or n is 0), for the caller to clear it instead.
bool keep(Llm *llm, size_t n) {
	const auto *ctx = llm->getContext();
	size_t held = llm->getCurrentHistory();
	{
		std::lock_guard<std::mutex> lock(ctx->mutex);
		if (n == 0 || held != static_cast<size_t>(ctx->all_seq_len) || history(llm).size() < held || n > held) {
			return false;
		}
	}
	if (n < held) {
		llm->eraseHistory(n, 0); // takes the mutex itself
	}
	// What the cache holds and nothing more: a sampled stop token, say,
	// was never run through the model.
	std::lock_guard<std::mutex> lock(ctx->mutex);
	history(llm).resize(n);
	return true;
}

} // namespace

extern "C" {

voice_llm *voice_llm_create(const char *config_path, char **err) {
	voice_llm *l = nullptr;
	guard(err, [&] {
		Llm *llm = Llm::createLLM(config_path);
		if (llm == nullptr) {
			*err = dup("MNN could not create an LLM from this config");
			return -1;
		}
		l = new voice_llm();
		l->llm = llm;
		return 0;
	});
	return l;
}

int voice_llm_set_config(voice_llm *l, const char *json, char **err) {
	return guard(err, [&] {
		if (!l->llm->set_config(json)) {
			*err = dup("MNN rejected the config");
			return -1;
		}
		return 0;
	});
}

int voice_llm_load(voice_llm *l, char **err) {
	return guard(err, [&] {
		if (!l->llm->load()) {
			*err = dup("MNN could not load the model (see its log above for the file it could not read)");
			return -1;
		}
		return 0;
	});
}

int voice_llm_dump_config(voice_llm *l, char **text, char **err) {
	*text = nullptr;
	return guard(err, [&] {
		*text = dup(l->llm->dump_config());
		return *text ? 0 : -1;
	});
}

int voice_llm_prepare(voice_llm *l, const char *text, int batch, int reply, int *reused, int *total, char **err) {
	*reused = *total = 0;
	return guard(err, [&] {
		std::vector<int> ids = l->llm->tokenizer_encode(text);
		if (ids.empty()) {
			*err = dup("the chat template and tokenizer made an empty prompt");
			return -1;
		}
		// The longest start of the prompt the KV cache already holds (the
		// conversation so far, usually), but for a reply at least the last
		// token is run again: its logits give the reply's first token.
		size_t common = 0;
		size_t most = reply ? ids.size() - 1 : ids.size();
		{
			const auto *ctx = l->llm->getContext();
			std::lock_guard<std::mutex> lock(ctx->mutex);
			const auto &h = ctx->history_tokens;
			size_t held = std::min(h.size(), static_cast<size_t>(std::max(ctx->all_seq_len, 0)));
			while (common < held && common < most && h[common] == ids[common]) {
				common++;
			}
		}
		// Every prefill call runs batch tokens. A call of a length the
		// engine has not just run makes it rebuild every layer's
		// executions, reloading and repacking their 4-bit weights (about
		// 0.5 s on two x86 cores, against 0.06 s for 8 tokens). So where
		// the new tokens do not fill the last batch, the prefill starts
		// earlier, running again tokens the cache holds: recomputed at the
		// same positions, their keys and values are what they were.
		l->batch = static_cast<size_t>(std::max(batch, 1));
		size_t short_by = (l->batch - (ids.size() - common) % l->batch) % l->batch;
		common = common > short_by ? common - short_by : 0;
		if (!keep(l->llm, common)) {
			l->llm->reset();
			common = 0;
		}
		l->prompt = std::move(ids);
		l->next = common;
		l->fresh = true;
		*reused = static_cast<int>(common);
		*total = static_cast<int>(l->prompt.size());
		return 0;
	});
}

int voice_llm_count_tokens(voice_llm *l, const char *text, int *n, char **err) {
	*n = 0;
	return guard(err, [&] {
		*n = static_cast<int>(l->llm->tokenizer_encode(text).size());
		return 0;
	});
}

int voice_llm_apply_template(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **text, char **err) {
	*text = nullptr;
	return guard(err, [&] {
		*text = dup(l->llm->apply_chat_template(messages(roles, contents, n)));
		return *text ? 0 : -1;
	});
}

int voice_llm_prefill(voice_llm *l, int *left, char **err) {
	*left = 0;
	return guard(err, [&] {
		auto workers = awake(l->llm);
		size_t total = l->prompt.size();
		if (!l->fresh && l->next < total && total - l->next < l->batch) {
			// A prompt prefilled from the start, whose last batch is short
			// (prepare aligned every other): the same, once the cache
			// holds a batch, or else a call of a new length.
			size_t start = total - l->batch;
			if (keep(l->llm, start)) {
				l->next = start;
			}
		}
		if (l->fresh) {
			l->llm->generate_init(&l->os, nullptr);
			l->fresh = false;
		}
		size_t end = std::min(total, l->next + l->batch);
		std::vector<int> chunk(l->prompt.begin() + l->next, l->prompt.begin() + end);
		// max_new_tokens 0: prefill only; decoding is driven by step so
		// that a cancellation lands between two calls.
		l->llm->generate(chunk, 0);
		l->next = end;
		*left = static_cast<int>(l->prompt.size() - end);
		return 0;
	});
}

int voice_llm_step(voice_llm *l, int tokens, int *stopped, const char **text, size_t *len, char **err) {
	l->sink.text.clear();
	int rc = guard(err, [&] {
		auto workers = awake(l->llm);
		l->llm->generate(tokens);
		l->os.flush();
		*stopped = l->llm->stoped() ? 1 : 0;
		return 0;
	});
	*text = l->sink.text.data();
	*len = l->sink.text.size();
	return rc;
}

void voice_llm_stats_get(voice_llm *l, voice_llm_stats *out) {
	std::memset(out, 0, sizeof(*out));
	try {
		const auto *ctx = l->llm->getContext();
		out->status = static_cast<int>(ctx->status);
		out->prompt_len = ctx->prompt_len;
		out->gen_seq_len = ctx->gen_seq_len;
		out->all_seq_len = ctx->all_seq_len;
		out->prefill_us = ctx->prefill_us;
		out->decode_us = ctx->decode_us;
	} catch (...) {
		out->status = 4; // INTERNAL_ERROR
	}
}

void voice_llm_reset(voice_llm *l) {
	try {
		l->llm->reset();
	} catch (...) {
	}
}

const char *voice_llm_mnn_version(void) { return MNN_VERSION; }

void voice_llm_destroy(voice_llm *l) {
	if (l == nullptr) {
		return;
	}
	try {
		Llm::destroy(l->llm);
	} catch (...) {
	}
	delete l;
}

} // extern "C"
