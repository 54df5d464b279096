//go:build mnn

#include "shim.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

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
};

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

int voice_llm_prefill(voice_llm *l, const char *const *roles, const char *const *contents, int n, const char **text, size_t *len, char **err) {
	l->sink.text.clear();
	int rc = guard(err, [&] {
		auto workers = awake(l->llm);
		// max_new_tokens 0: prefill only; decoding is driven by step so
		// that a cancellation lands between two calls.
		l->llm->response(messages(roles, contents, n), &l->os, nullptr, 0);
		l->os.flush();
		return 0;
	});
	*text = l->sink.text.data();
	*len = l->sink.text.size();
	return rc;
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

int voice_llm_sync_prompt_cache(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **err) {
	return guard(err, [&] {
		l->llm->syncPromptCache(messages(roles, contents, n));
		return 0;
	});
}

void voice_llm_reset(voice_llm *l) {
	try {
		l->llm->reset();
	} catch (...) {
	}
}

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
