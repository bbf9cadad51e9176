/* host_memory.c: "device" memory for tilec_device_* of the backends whose tensors are host memory
 * (cpu, metal's emulator): 64-byte aligned. */
#include <stdlib.h>
#include <string.h>

#include "target/target.h"
#include "util/diag.h"

void *tc_host_mem_alloc(int device, size_t bytes, tilec_error *err) {
  if (device != 0) {
    tc_error(err, TILEC_ERROR_USAGE, "host memory has one device (0), not %d", device);
    return NULL;
  }
  size_t n = (bytes + 63) / 64 * 64;
  if (n < bytes) n = 0; /* overflow */
  void *p = n || !bytes ? aligned_alloc(64, n ? n : 64) : NULL;
  if (!p) tc_error(err, TILEC_ERROR_NOMEM, "out of memory allocating %zu bytes", bytes);
  return p;
}

void tc_host_mem_free(int device, void *p) {
  (void)device;
  free(p);
}

tilec_status tc_host_mem_copy(int device, void *dst, const void *src, size_t bytes, int direction, tilec_error *err) {
  (void)device;
  (void)direction;
  if (bytes && (!dst || !src)) {
    tc_error(err, TILEC_ERROR_USAGE, "tilec_device_copy: NULL pointer");
    return TILEC_ERROR_USAGE;
  }
  if (bytes) memmove(dst, src, bytes);
  return TILEC_OK;
}
