//go:build mnn

#include "shim.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>

#include <llm/llm.hpp>

using MNN::Transformer::ChatMessages;
using MNN::Transformer::Llm;
using MNN::Transformer::LlmContext;
using MNN::Transformer::LlmStatus;

namespace {

// Sink collects what the engine writes to its ostream while it decodes,
// for Go to take at its own pace (take), and carries the cancellation into
// the engine's decode loop. The whole reply is decoded in one engine call:
// calling into the engine once per token, or back into Go for every piece,
// cost a third to a half of the decode speed on a 2-core machine (threads
// woken per token competed with MNN's workers for the cores).
class Sink : public std::streambuf {
public:
	std::mutex mu;
	std::string text;           // written, not yet taken
	std::string taken;          // what take last handed out
	std::atomic<bool> cancel{false};
	const LlmContext *ctx = nullptr;

protected:
	std::streamsize xsputn(const char *s, std::streamsize n) override {
		{
			std::lock_guard<std::mutex> lock(mu);
			text.append(s, static_cast<size_t>(n));
		}
		// Runs on the engine's thread inside its decode loop, which stops
		// at its next turn once the status says so. MNN has no other way
		// in; the status is only touched from this thread.
		if (cancel.load(std::memory_order_relaxed) && ctx != nullptr) {
			const_cast<LlmContext *>(ctx)->status = LlmStatus::USER_CANCEL;
		}
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

int voice_llm_prefill(voice_llm *l, const char *const *roles, const char *const *contents, int n, char **err) {
	l->sink.cancel = false;
	l->sink.ctx = l->llm->getContext();
	{
		std::lock_guard<std::mutex> lock(l->sink.mu);
		l->sink.text.clear();
	}
	return guard(err, [&] {
		// max_new_tokens 0: prefill only, so that a cancellation before
		// the first token costs no decoding.
		l->llm->response(messages(roles, contents, n), &l->os, nullptr, 0);
		l->os.flush();
		return 0;
	});
}

int voice_llm_decode(voice_llm *l, int max_tokens, char **err) {
	int rc = guard(err, [&] {
		l->llm->generate(max_tokens);
		l->os.flush();
		return 0;
	});
	// A cancelled engine refuses every later call until its status moves
	// on; the conversation it holds is still good (settle syncs it).
	auto *ctx = const_cast<LlmContext *>(l->sink.ctx);
	if (ctx->status == LlmStatus::USER_CANCEL) {
		ctx->status = LlmStatus::NORMAL_FINISHED;
	}
	return rc;
}

void voice_llm_cancel(voice_llm *l) { l->sink.cancel = true; }

size_t voice_llm_take(voice_llm *l, const char **text) {
	std::lock_guard<std::mutex> lock(l->sink.mu);
	l->sink.taken.swap(l->sink.text);
	l->sink.text.clear();
	*text = l->sink.taken.data();
	return l->sink.taken.size();
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
