// C interface to the WebRTC audio processing shim (shim.cpp). Used only when
// building with -tags webrtcapm.
#ifndef VOICE_FRONTEND_SHIM_H
#define VOICE_FRONTEND_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fe_apm fe_apm;

typedef struct fe_config {
	int aec;
	int ns;
	int agc;
	int delay_ms;
	int ns_level;        /* 0..3 */
	int agc_target_dbfs; /* 0..31, WebRTC convention (3 = -3 dBFS) */
	int agc_comp_gain_db;
	int sample_rate;
} fe_config;

/* All functions return 0 on success, a negative WebRTC error code on
 * failure, or FE_ERR_EXCEPTION if a C++ exception escaped. msg (if non-NULL)
 * receives a short description of the failing step. */
#define FE_ERR_EXCEPTION (-1000)
#define FE_ERR_NULL (-1001)
/* fe_near: the processed frame was not finite, so the processor was
 * started afresh and out holds the frame as captured. */
#define FE_RESTARTED 1

int fe_new(const fe_config *cfg, fe_apm **out, char *msg, int msglen);
int fe_far(fe_apm *a, const float *in, int n, char *msg, int msglen);
int fe_near(fe_apm *a, const float *in, float *out, int n, int *delay_ms, char *msg, int msglen);
int fe_set_delay(fe_apm *a, int delay_ms);
void fe_free(fe_apm *a);

#ifdef __cplusplus
}
#endif
#endif
