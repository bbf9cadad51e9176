/* memory.c: device memory of the cuda backends for tilec_device_*. Each allocation holds a
 * retain of its device's primary context (released when it is freed), so the memory outlives
 * any other user of the context; copies are synchronous (cuMemcpy*), ordered after the kernels
 * tilec_kernel_launch ran on the default stream. */
#include <stdint.h>
#include <stdio.h>

#include "target/cuda/cuda_internal.h"
#include "target/cuda/driver.h"
#include "util/diag.h"

static const tc_cu_api *api(tilec_error *err) {
  char why[256];
  const tc_cu_api *cu = tc_cu_api_get(why, sizeof why);
  if (!cu) tc_error(err, TILEC_ERROR_TARGET, "no CUDA device memory: %s", why);
  return cu;
}

void *tc_cuda_mem_alloc(int device, size_t bytes, tilec_error *err) {
  const tc_cu_api *cu = api(err);
  tc_cu_context ctx;
  if (!cu || tc_cu_retain_device(cu, device, &ctx, err) != TILEC_OK) return NULL;
  tc_cu_devptr p = 0;
  tc_cu_result r = cu->MemAlloc(&p, bytes ? bytes : 1);
  if (r != TC_CU_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "cuMemAlloc of %zu bytes", bytes);
    tc_cu_fail(err, cu, r, what);
    tc_cu_release_device(cu, device);
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

void tc_cuda_mem_free(int device, void *p) {
  if (!p) return;
  tilec_error err = {0};
  const tc_cu_api *cu = api(&err);
  tc_cu_context ctx;
  if (!cu || tc_cu_retain_device(cu, device, &ctx, &err) != TILEC_OK) return;
  cu->MemFree((tc_cu_devptr)(uintptr_t)p);
  tc_cu_release_device(cu, device); /* this call's retain */
  tc_cu_release_device(cu, device); /* the allocation's */
}

tilec_status tc_cuda_mem_copy(int device, void *dst, const void *src, size_t bytes, int direction, tilec_error *err) {
  if (!bytes) return TILEC_OK;
  const tc_cu_api *cu = api(err);
  tc_cu_context ctx;
  if (!cu) return TILEC_ERROR_TARGET;
  tilec_status st = tc_cu_retain_device(cu, device, &ctx, err);
  if (st != TILEC_OK) return st;
  tc_cu_result r;
  const char *what;
  if (direction == TILEC_COPY_HOST_TO_DEVICE) {
    r = cu->MemcpyHtoD((tc_cu_devptr)(uintptr_t)dst, src, bytes), what = "cuMemcpyHtoD";
  } else if (direction == TILEC_COPY_DEVICE_TO_HOST) {
    r = cu->MemcpyDtoH(dst, (tc_cu_devptr)(uintptr_t)src, bytes), what = "cuMemcpyDtoH";
  } else {
    r = cu->MemcpyDtoD((tc_cu_devptr)(uintptr_t)dst, (tc_cu_devptr)(uintptr_t)src, bytes), what = "cuMemcpyDtoD";
  }
  if (r != TC_CU_SUCCESS) st = tc_cu_fail(err, cu, r, what);
  tc_cu_release_device(cu, device);
  return st;
}
