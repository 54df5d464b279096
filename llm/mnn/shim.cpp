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
#include <condition_variable>
#include <functional>
#include <thread>
#include <string>
#include <vector>

#include <MNN/MNNDefine.h>
#include <MNN/expr/Executor.hpp>
#include <llm/llm.hpp>

using MNN::Transformer::ChatMessages;
using MNN::Transformer::Llm;

namespace {

// Decoder is where the engine writes its text, and the thread its decoding
// calls run on, one at a time. MNN's decoding loop writes a token's text
// and flushes it before it runs the token through the model for the next
// one (ArGeneration::generate,
// transformers/llm/engine/src/speculative_decoding/generate.cpp:79-94). On
// a thread of its own, the flush hands the text to the caller at once: it
// is on its way to the synthesizer a forward pass sooner, while the engine
// runs that pass. The text is copied out rather than handed to Go by a
// callback per piece, which keeps the Go runtime out of the decoding loop:
// a callback per token woke threads that competed with MNN's workers for
// the cores.
class Decoder : public std::streambuf {
public:
	~Decoder() { stop(); }

	// start runs call on the decoding thread; the one before has ended.
	void start(std::function<void()> call) {
		std::unique_lock<std::mutex> lock(mu_);
		if (!thread_.joinable()) {
			thread_ = std::thread([this] { loop(); });
		}
		call_ = std::move(call);
		running_ = true;
		flushed_ = false;
		err_.clear();
		cv_.notify_all();
	}

	// text waits until the call under way has flushed text or ended, moves
	// the text onto out, and says whether the call is still running.
	bool text(std::string &out) {
		std::unique_lock<std::mutex> lock(mu_);
		cv_.wait(lock, [this] { return flushed_ || !running_; });
		take(out);
		return running_;
	}

	// wait waits for the call under way to end, moves the rest of its text
	// onto out, and returns why it failed ("" if it did not).
	std::string wait(std::string &out) {
		std::unique_lock<std::mutex> lock(mu_);
		cv_.wait(lock, [this] { return !running_; });
		take(out);
		return err_;
	}

	// hold keeps the decoding thread at each flush until it is let go: a
	// test's way to see the text arrive before the pass after it.
	void hold(bool on) {
		std::lock_guard<std::mutex> lock(mu_);
		hold_ = on;
		cv_.notify_all();
	}

	void stop() {
		{
			std::lock_guard<std::mutex> lock(mu_);
			quit_ = true;
			hold_ = false;
			cv_.notify_all();
		}
		if (thread_.joinable()) {
			thread_.join();
		}
	}

protected:
	std::streamsize xsputn(const char *s, std::streamsize n) override {
		std::lock_guard<std::mutex> lock(mu_);
		text_.append(s, static_cast<size_t>(n));
		return n;
	}
	int_type overflow(int_type c) override {
		if (c != traits_type::eof()) {
			char ch = static_cast<char>(c);
			xsputn(&ch, 1);
		}
		return c;
	}
	int sync() override {
		std::unique_lock<std::mutex> lock(mu_);
		flushed_ = true;
		cv_.notify_all();
		cv_.wait(lock, [this] { return !hold_; });
		return 0;
	}

private:
	void take(std::string &out) {
		out += text_;
		text_.clear();
		flushed_ = false;
	}

	void loop() {
		std::unique_lock<std::mutex> lock(mu_);
		for (;;) {
			cv_.wait(lock, [this] { return quit_ || call_; });
			if (quit_) {
				return;
			}
			auto call = std::move(call_);
			call_ = nullptr;
			lock.unlock();
			std::string err;
			try {
				call();
			} catch (const std::exception &e) {
				err = e.what();
			} catch (...) {
				err = "unknown C++ exception";
			}
			lock.lock();
			err_ = err;
			running_ = false;
			cv_.notify_all();
		}
	}

	std::mutex mu_;
	std::condition_variable cv_;
	std::thread thread_;
	std::function<void()> call_;
	std::string text_;
	std::string err_;
	bool running_ = false;
	bool flushed_ = false; // text came since the caller last took it
	bool hold_ = false;
	bool quit_ = false;
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
	Decoder decoder;
	std::ostream os{&decoder};
	std::string text; // what step handed out, until the next step
	bool stopped = false; // the reply's last decoding call ended it
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

// as_written extends the prompt's start the KV cache holds (ids, whose
// first common tokens are the cache's h) past where the tokenizer and the
// cache part: a reply the model wrote in tokens other than the ones the
// tokenizer makes of its text (a rare word, a number, random weights'
// text) is kept as written, and only the text after it is tokenized and
// prefilled. MNN's own prompt cache does the same: the KV cache holds the
// reply as generated and only the new text is prefilled
// (transformers/llm/engine/src/llm.cpp:1174-1245, Llm::response with
// prompt_cache). Matching ids alone re-prefilled the rest of the
// conversation from the first such token: half a second a turn for the
// full-size stand-in. The cached tokens are matched against the text by
// their pieces; where the pieces of ids' first common tokens do not spell
// the text's start (a tokenizer whose pieces are not its text), or the
// tokenizer adds tokens of its own to any text, nothing is extended.
// Returns the tokens kept, with ids rewritten to start with them.
size_t as_written(Llm *llm, const std::string &text, const std::vector<int> &h, size_t held, size_t common,
	std::vector<int> &ids) {
	if (common >= held || common >= ids.size()) {
		return common;
	}
	size_t at = 0;
	for (size_t i = 0; i < common; i++) {
		std::string piece = llm->tokenizer_decode(ids[i]);
		if (text.compare(at, piece.size(), piece) != 0) {
			return common;
		}
		at += piece.size();
	}
	size_t kept = common;
	for (; kept < held; kept++) {
		std::string piece = llm->tokenizer_decode(h[kept]);
		if (piece.empty() || text.compare(at, piece.size(), piece) != 0) {
			break;
		}
		at += piece.size();
	}
	if (kept == common || at >= text.size() || !llm->tokenizer_encode("").empty()) {
		return common;
	}
	std::vector<int> rest = llm->tokenizer_encode(text.substr(at));
	if (rest.empty()) {
		return common;
	}
	ids.assign(h.begin(), h.begin() + kept);
	ids.insert(ids.end(), rest.begin(), rest.end());
	return kept;
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
		{
			const auto *ctx = l->llm->getContext();
			std::lock_guard<std::mutex> lock(ctx->mutex);
			const auto &h = ctx->history_tokens;
			size_t held = std::min(h.size(), static_cast<size_t>(std::max(ctx->all_seq_len, 0)));
			while (common < held && common < ids.size() && h[common] == ids[common]) {
				common++;
			}
			common = as_written(l->llm, text, h, held, common, ids);
		}
		common = std::min(common, reply ? ids.size() - 1 : ids.size());
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
		l->stopped = false;
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
	l->text.clear();
	*stopped = 0;
	int rc = guard(err, [&] {
		std::string failed = l->decoder.wait(l->text);
		if (failed.empty() && tokens > 0 && !l->stopped) {
			l->decoder.start([l, tokens] {
				auto workers = awake(l->llm);
				l->llm->generate(tokens);
				l->os.flush();
				l->stopped = l->llm->stoped();
			});
			if (!l->decoder.text(l->text)) {
				failed = l->decoder.wait(l->text);
				*stopped = l->stopped ? 1 : 0;
			}
		} else {
			*stopped = l->stopped ? 1 : 0;
		}
		if (!failed.empty()) {
			*err = dup(failed);
			return -1;
		}
		return 0;
	});
	*text = l->text.data();
	*len = l->text.size();
	return rc;
}

void voice_llm_hold_after_text(voice_llm *l, int on) { l->decoder.hold(on != 0); }

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
	l->decoder.stop();
	try {
		Llm::destroy(l->llm);
	} catch (...) {
	}
	delete l;
}

} // extern "C"
