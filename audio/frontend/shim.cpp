//go:build webrtcapm

// Thin extern "C" shim over webrtc::AudioProcessing (webrtc-audio-processing
// 0.3). Every C++ call is wrapped so that neither exceptions nor error codes
// escape as anything but integer return values.

#include "shim.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include <webrtc/common.h>
#include <webrtc/modules/audio_processing/include/audio_processing.h>

struct fe_apm {
	webrtc::AudioProcessing *apm;
	webrtc::StreamConfig cfg;
	int delay_ms;
	int aec;
	int bypass; // frames still passed on as captured after a restart
};

// After a restart the capture is passed on unprocessed for this many
// 10 ms frames: a freshly started canceller suppresses the talker too.
static const int kBypassFrames = 50;

static void setmsg(char *msg, int msglen, const char *s) {
	if (msg && msglen > 0) {
		std::snprintf(msg, (size_t)msglen, "%s", s);
	}
}

#define CHECK(call, what)                       \
	do {                                        \
		int rc_ = (call);                       \
		if (rc_ != webrtc::AudioProcessing::kNoError) { \
			setmsg(msg, msglen, what);          \
			return rc_;                         \
		}                                       \
	} while (0)

static int fe_new_impl(const fe_config *c, fe_apm **out, char *msg, int msglen) {
	webrtc::Config config;
	// Extended filter: longer (~ 128 ms vs 64 ms) adaptive filter tail and
	// more robust delay handling; the room echo paths we care about fit it.
	config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
	// Delay-agnostic mode: estimate the render/capture delay internally so a
	// slightly wrong DelayMS does not break cancellation.
	config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
	// The "experimental" AGC (AgcManagerDirect) drives an analog mic volume;
	// we use the purely digital AGC, so switch it off.
	config.Set<webrtc::ExperimentalAgc>(new webrtc::ExperimentalAgc(false));

	webrtc::AudioProcessing *apm = webrtc::AudioProcessing::Create(config);
	if (!apm) {
		setmsg(msg, msglen, "AudioProcessing::Create failed");
		return webrtc::AudioProcessing::kCreationFailedError;
	}
	fe_apm *a = new (std::nothrow) fe_apm;
	if (!a) {
		delete apm;
		setmsg(msg, msglen, "out of memory");
		return webrtc::AudioProcessing::kCreationFailedError;
	}
	a->apm = apm;
	a->cfg = webrtc::StreamConfig(c->sample_rate, 1, false);
	a->delay_ms = c->delay_ms;
	a->aec = c->aec;
	a->bypass = 0;

	webrtc::ProcessingConfig pc = {{a->cfg, a->cfg, a->cfg, a->cfg}};
	int rc = apm->Initialize(pc);
	if (rc != webrtc::AudioProcessing::kNoError) {
		fe_free(a);
		setmsg(msg, msglen, "Initialize");
		return rc;
	}

#define CHECKF(call, what)                          \
	do {                                            \
		int rc_ = (call);                           \
		if (rc_ != webrtc::AudioProcessing::kNoError) { \
			fe_free(a);                             \
			setmsg(msg, msglen, what);              \
			return rc_;                             \
		}                                           \
	} while (0)

	CHECKF(apm->high_pass_filter()->Enable(true), "high_pass_filter.Enable");
	if (c->aec) {
		webrtc::EchoCancellation *ec = apm->echo_cancellation();
		CHECKF(ec->enable_drift_compensation(false), "echo_cancellation.enable_drift_compensation");
		CHECKF(ec->set_suppression_level(webrtc::EchoCancellation::kModerateSuppression),
		       "echo_cancellation.set_suppression_level");
		CHECKF(ec->enable_metrics(true), "echo_cancellation.enable_metrics");
		CHECKF(ec->enable_delay_logging(true), "echo_cancellation.enable_delay_logging");
		CHECKF(ec->Enable(true), "echo_cancellation.Enable");
	}
	if (c->ns) {
		webrtc::NoiseSuppression *ns = apm->noise_suppression();
		CHECKF(ns->set_level((webrtc::NoiseSuppression::Level)c->ns_level), "noise_suppression.set_level");
		CHECKF(ns->Enable(true), "noise_suppression.Enable");
	}
	if (c->agc) {
		webrtc::GainControl *gc = apm->gain_control();
		CHECKF(gc->set_mode(webrtc::GainControl::kAdaptiveDigital), "gain_control.set_mode");
		CHECKF(gc->set_target_level_dbfs(c->agc_target_dbfs), "gain_control.set_target_level_dbfs");
		CHECKF(gc->set_compression_gain_db(c->agc_comp_gain_db), "gain_control.set_compression_gain_db");
		CHECKF(gc->enable_limiter(true), "gain_control.enable_limiter");
		CHECKF(gc->Enable(true), "gain_control.Enable");
	}
	*out = a;
	return 0;
}

extern "C" int fe_new(const fe_config *c, fe_apm **out, char *msg, int msglen) {
	if (!c || !out) {
		setmsg(msg, msglen, "nil argument");
		return FE_ERR_NULL;
	}
	*out = nullptr;
	try {
		return fe_new_impl(c, out, msg, msglen);
	} catch (const std::exception &e) {
		setmsg(msg, msglen, e.what());
	} catch (...) {
		setmsg(msg, msglen, "unknown C++ exception");
	}
	return FE_ERR_EXCEPTION;
}

extern "C" int fe_far(fe_apm *a, const float *in, int n, char *msg, int msglen) {
	if (!a || !a->apm || !in) {
		setmsg(msg, msglen, "nil argument");
		return FE_ERR_NULL;
	}
	(void)n;
	try {
		const float *src[1] = {in};
		float tmp[480];
		float *dst[1] = {tmp};
		CHECK(a->apm->ProcessReverseStream(src, a->cfg, a->cfg, dst), "ProcessReverseStream");
		return 0;
	} catch (const std::exception &e) {
		setmsg(msg, msglen, e.what());
	} catch (...) {
		setmsg(msg, msglen, "unknown C++ exception");
	}
	return FE_ERR_EXCEPTION;
}

extern "C" int fe_near(fe_apm *a, const float *in, float *out, int n, int *delay_ms, char *msg, int msglen) {
	if (!a || !a->apm || !in || !out) {
		setmsg(msg, msglen, "nil argument");
		return FE_ERR_NULL;
	}
	(void)n;
	try {
		if (a->aec) {
			int rc = a->apm->set_stream_delay_ms(a->delay_ms);
			// kBadStreamParameterWarning means the delay was clamped; not fatal.
			if (rc != webrtc::AudioProcessing::kNoError &&
			    rc != webrtc::AudioProcessing::kBadStreamParameterWarning) {
				setmsg(msg, msglen, "set_stream_delay_ms");
				return rc;
			}
		}
		const float *src[1] = {in};
		float *dst[1] = {out};
		CHECK(a->apm->ProcessStream(src, a->cfg, a->cfg, dst), "ProcessStream");
		const size_t frames = a->cfg.num_frames();
		for (size_t i = 0; i < frames; i++) {
			if (!std::isfinite(out[i])) {
				// Debian's arm64 build of this library (its NEON echo
				// canceller) turns NaN when the user talks over the echo,
				// and stays NaN. Start afresh, and pass the capture on as
				// it is while the canceller converges again: the user who
				// is talking must reach the VAD.
				CHECK(a->apm->Initialize(), "Initialize after a non-finite frame");
				std::memcpy(out, in, frames * sizeof(float));
				a->bypass = kBypassFrames;
				return FE_RESTARTED;
			}
		}
		if (a->bypass > 0) {
			a->bypass--;
			std::memcpy(out, in, frames * sizeof(float));
		}
		if (delay_ms) {
			*delay_ms = -1;
			if (a->aec) {
				int median = 0, std = 0;
				float poor = 0;
				if (a->apm->echo_cancellation()->GetDelayMetrics(&median, &std, &poor) ==
				    webrtc::AudioProcessing::kNoError) {
					*delay_ms = median;
				}
			}
		}
		return 0;
	} catch (const std::exception &e) {
		setmsg(msg, msglen, e.what());
	} catch (...) {
		setmsg(msg, msglen, "unknown C++ exception");
	}
	return FE_ERR_EXCEPTION;
}

extern "C" int fe_set_delay(fe_apm *a, int delay_ms) {
	if (!a) return FE_ERR_NULL;
	a->delay_ms = delay_ms;
	return 0;
}

extern "C" void fe_free(fe_apm *a) {
	if (!a) return;
	try {
		delete a->apm;
	} catch (...) {
	}
	a->apm = nullptr;
	delete a;
}
