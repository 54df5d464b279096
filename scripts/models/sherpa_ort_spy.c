// sherpa_ort_spy.c: an LD_PRELOAD shim for sherpa_xasr_golden.sh. It records
// the float data of every ONNX Runtime input named "x" (the X-ASR encoder's
// feature window) that the host process passes to OrtApi::Run, so that the
// features sherpa-onnx computed can be read back bit for bit.
//
// How: it interposes OrtGetApiBase (libsherpa-onnx-c-api.so imports it from
// libonnxruntime.so), calls the real one, and patches the Run pointer of the
// real library's OrtApi table in place (the page is made writable; the
// table is not copied, as its size differs between versions; Run's offset
// has not moved since the C API's first version). The wrapper appends the
// "x" tensor's floats to $ORT_SPY_X and one line "x <dims...>" per call to
// $ORT_SPY_LOG, then calls the real Run. The first line of $ORT_SPY_LOG is
// "version <ORT version string>".
//
// Compiled by sherpa_xasr_golden.sh against onnxruntime_go v1.27.0's
// vendored onnxruntime_c_api.h (ORT_API_VERSION 24; the 1.28 library serves
// that version).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "onnxruntime_c_api.h"

typedef const OrtApiBase *(*get_api_base_fn)(void);
typedef OrtStatus *(ORT_API_CALL *run_fn)(OrtSession *, const OrtRunOptions *,
                                           const char *const *, const OrtValue *const *, size_t,
                                           const char *const *, size_t, OrtValue **);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const OrtApiBase *real_base;
static const OrtApi *api;
static run_fn real_run;

static void die(const char *msg) {
  fprintf(stderr, "sherpa_ort_spy: %s\n", msg);
  _exit(3);
}

static void append(const char *env, const void *p, size_t n) {
  const char *path = getenv(env);
  if (!path || !*path) die("output path not set");
  FILE *f = fopen(path, "ab");
  if (!f) die("cannot open output");
  if (fwrite(p, 1, n, f) != n) die("short write");
  if (fclose(f) != 0) die("close failed");
}

static void check(OrtStatus *st, const char *what) {
  if (st) {
    fprintf(stderr, "sherpa_ort_spy: %s: %s\n", what, api->GetErrorMessage(st));
    _exit(3);
  }
}

static OrtStatus *ORT_API_CALL spy_run(OrtSession *sess, const OrtRunOptions *opts,
                                       const char *const *in_names, const OrtValue *const *in,
                                       size_t n_in, const char *const *out_names, size_t n_out,
                                       OrtValue **out) {
  for (size_t i = 0; i < n_in; i++) {
    if (strcmp(in_names[i], "x") != 0) continue;
    OrtTensorTypeAndShapeInfo *info;
    check(api->GetTensorTypeAndShape(in[i], &info), "GetTensorTypeAndShape");
    ONNXTensorElementDataType t;
    check(api->GetTensorElementType(info, &t), "GetTensorElementType");
    if (t != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) die("x is not float32");
    size_t nd;
    check(api->GetDimensionsCount(info, &nd), "GetDimensionsCount");
    int64_t dims[8];
    if (nd > 8) die("x has too many dims");
    check(api->GetDimensions(info, dims, nd), "GetDimensions");
    api->ReleaseTensorTypeAndShapeInfo(info);
    char line[256];
    int len = snprintf(line, sizeof line, "x");
    size_t count = 1;
    for (size_t d = 0; d < nd; d++) {
      len += snprintf(line + len, sizeof line - len, " %lld", (long long)dims[d]);
      count *= (size_t)dims[d];
    }
    len += snprintf(line + len, sizeof line - len, "\n");
    void *data;
    check(api->GetTensorMutableData((OrtValue *)in[i], &data), "GetTensorMutableData");
    pthread_mutex_lock(&mu);
    append("ORT_SPY_X", data, count * sizeof(float));
    append("ORT_SPY_LOG", line, (size_t)len);
    pthread_mutex_unlock(&mu);
  }
  return real_run(sess, opts, in_names, in, n_in, out_names, n_out, out);
}

static void patch(void) {
  // The library sherpa-onnx loaded (by its RPATH) is named in
  // ORT_SPY_ORT_LIB; dlopen of an already loaded file returns that one.
  // RTLD_NEXT would miss it when node loaded the addon RTLD_LOCAL.
  void *h = NULL;
  const char *lib = getenv("ORT_SPY_ORT_LIB");
  if (lib && *lib) h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
  if (!h && lib && *lib) h = dlopen(lib, RTLD_LAZY);
  get_api_base_fn real = h ? (get_api_base_fn)dlsym(h, "OrtGetApiBase")
                           : (get_api_base_fn)dlsym(RTLD_NEXT, "OrtGetApiBase");
  if (!real || real == (get_api_base_fn)OrtGetApiBase) die("real OrtGetApiBase not found");
  real_base = real();
  api = real_base->GetApi(ORT_API_VERSION);
  if (!api) die("GetApi(ORT_API_VERSION) failed");
  run_fn *slot = (run_fn *)&api->Run;
  long pg = sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)slot & ~(uintptr_t)(pg - 1);
  if (mprotect((void *)start, (size_t)pg, PROT_READ | PROT_WRITE) != 0) die("mprotect failed");
  real_run = *slot;
  *slot = spy_run;
  // The page stays writable: the table may share it with relocated data.
  char line[128];
  int len = snprintf(line, sizeof line, "version %s\n", real_base->GetVersionString());
  append("ORT_SPY_LOG", line, (size_t)len);
}

const OrtApiBase *OrtGetApiBase(void) NO_EXCEPTION {
  pthread_once(&once, patch);
  return real_base;
}
