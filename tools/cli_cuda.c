/* cli_cuda.c: what `tilec run --target cuda` needs around the library: device buffers for the
 * generated inputs, copies both ways, and timing with CUDA events after warm-up, with the L2
 * cache flushed (a memset of twice its size) before every timed run. Uses the library's driver
 * table (dlopen'd libcuda), so the CLI links nothing from CUDA either. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "target/cuda/driver.h"

struct cli_gpu {
  const tc_cu_api *cu;
  int ordinal;
  tc_cu_context ctx;
  tc_cu_stream stream;
  tc_cu_devptr flush;
  size_t flush_bytes;
  tc_cu_event start, end;
};

static void describe(const tc_cu_api *cu, tc_cu_result r, const char *what, char *why, size_t cap) {
  char d[200];
  tc_cu_describe(cu, r, d, sizeof d);
  snprintf(why, cap, "%s failed: %s", what, d);
}

cli_gpu *cli_gpu_open(int ordinal, char *why, size_t cap) {
  const tc_cu_api *cu = tc_cu_api_get(why, cap);
  if (!cu) return NULL;
  cli_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(why, cap, "out of memory");
    return NULL;
  }
  g->cu = cu;
  g->ordinal = ordinal;
  tilec_error err = {0};
  if (tc_cu_retain_device(cu, ordinal, &g->ctx, &err) != TILEC_OK) {
    snprintf(why, cap, "%s", err.message);
    free(g);
    return NULL;
  }
  tc_cu_result r = cu->StreamCreate(&g->stream, TC_CU_STREAM_NON_BLOCKING);
  if (r == TC_CU_SUCCESS) r = cu->EventCreate(&g->start, TC_CU_EVENT_DEFAULT);
  if (r == TC_CU_SUCCESS) r = cu->EventCreate(&g->end, TC_CU_EVENT_DEFAULT);
  if (r != TC_CU_SUCCESS) {
    describe(cu, r, "creating a stream and events", why, cap);
    cli_gpu_close(g);
    return NULL;
  }
  return g;
}

void cli_gpu_close(cli_gpu *g) {
  if (!g) return;
  const tc_cu_api *cu = g->cu;
  cu->CtxSetCurrent(g->ctx);
  if (g->flush) cu->MemFree(g->flush);
  if (g->start) cu->EventDestroy(g->start);
  if (g->end) cu->EventDestroy(g->end);
  if (g->stream) cu->StreamDestroy(g->stream);
  tc_cu_release_device(cu, g->ordinal);
  free(g);
}

void *cli_gpu_alloc(cli_gpu *g, size_t bytes, char *why, size_t cap) {
  tc_cu_devptr p = 0;
  g->cu->CtxSetCurrent(g->ctx);
  tc_cu_result r = g->cu->MemAlloc(&p, bytes ? bytes : 1);
  if (r != TC_CU_SUCCESS) {
    describe(g->cu, r, "cuMemAlloc", why, cap);
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

void cli_gpu_free(cli_gpu *g, void *p) {
  if (!g || !p) return;
  g->cu->CtxSetCurrent(g->ctx);
  g->cu->MemFree((tc_cu_devptr)(uintptr_t)p);
}

int cli_gpu_copy(cli_gpu *g, void *dst, const void *src, size_t n, int to_device, char *why, size_t cap) {
  if (!n) return 0;
  g->cu->CtxSetCurrent(g->ctx);
  tc_cu_result r = to_device ? g->cu->MemcpyHtoD((tc_cu_devptr)(uintptr_t)dst, src, n)
                             : g->cu->MemcpyDtoH(dst, (tc_cu_devptr)(uintptr_t)src, n);
  if (r != TC_CU_SUCCESS) {
    describe(g->cu, r, to_device ? "copying to the device" : "copying from the device", why, cap);
    return -1;
  }
  return 0;
}

/* Times one launch per run: flush L2, record, launch, record, wait. */
int cli_gpu_bench(cli_gpu *g, tilec_kernel *k, DLTensor *const *args, size_t n, double *times, int cap, int *nruns,
                  tilec_error *err) {
  const tc_cu_api *cu = g->cu;
  cu->CtxSetCurrent(g->ctx);
  *nruns = 0;
  if (!g->flush) {
    tc_cu_device dev;
    int l2 = 0;
    if (cu->DeviceGet(&dev, g->ordinal) == TC_CU_SUCCESS) cu->DeviceGetAttribute(&l2, TC_CU_DEV_ATTR_L2_CACHE_SIZE, dev);
    g->flush_bytes = 2 * (size_t)(l2 > 0 ? l2 : 64 << 20);
    if (cu->MemAlloc(&g->flush, g->flush_bytes) != TC_CU_SUCCESS) g->flush = 0, g->flush_bytes = 0;
  }
  for (int w = 0; w < 3; w++)
    if (tilec_kernel_launch_stream(k, args, n, g->stream, err) != TILEC_OK) return -1;
  tc_cu_result r = cu->StreamSynchronize(g->stream);
  double total = 0;
  while (r == TC_CU_SUCCESS && *nruns < cap && (*nruns < 10 || total < 1000)) {
    if (g->flush) r = cu->MemsetD8Async(g->flush, (unsigned char)*nruns, g->flush_bytes, g->stream);
    if (r == TC_CU_SUCCESS) r = cu->EventRecord(g->start, g->stream);
    if (r != TC_CU_SUCCESS) break;
    if (tilec_kernel_launch_stream(k, args, n, g->stream, err) != TILEC_OK) return -1;
    r = cu->EventRecord(g->end, g->stream);
    if (r == TC_CU_SUCCESS) r = cu->EventSynchronize(g->end);
    float ms = 0;
    if (r == TC_CU_SUCCESS) r = cu->EventElapsedTime(&ms, g->start, g->end);
    if (r == TC_CU_SUCCESS) times[(*nruns)++] = ms, total += ms;
  }
  if (r != TC_CU_SUCCESS) {
    char d[200];
    tc_cu_describe(cu, r, d, sizeof d);
    snprintf(err->message, sizeof err->message, "timing on the GPU failed: %s", d);
    snprintf(err->rendered, sizeof err->rendered, "error: %s\n", err->message);
    err->status = TILEC_ERROR_TARGET;
    return -1;
  }
  return 0;
}
