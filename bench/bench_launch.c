/* bench_launch.c: the per-launch overhead of a tilec call from C, through the public API only.
 * A kernel that does almost nothing (one block of 32 threads storing one float) is launched
 * back to back: tilec_kernel_launch_stream on the default stream (enqueue only; the last launch
 * is a synchronous tilec_kernel_launch, which waits for all of them) and tilec_kernel_launch
 * (checks, launch, wait). Tensors live in tilec_device_alloc memory. On the cuda target when a
 * device is available, else on the cpu (the same API; a cpu launch runs the block itself).
 *   build/bench/bench_launch [launches]      (default 20000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec.h"

static const char *k_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def tiny(A: T.Tensor((32,), 'float32'), B: T.Tensor((32,), 'float32')):\n"
    "    with T.Kernel(1, threads=32) as bx:\n"
    "        tx = T.get_thread_binding(0)\n"
    "        B[tx] = A[tx] + 1.0\n";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int run(tilec_context *ctx, tilec_program *prog, const char *target, int n) {
  tilec_error err = {0};
  tilec_compile_options co = {0};
  co.target = target;
  tilec_kernel *k = tilec_compile(prog, &co, &err);
  if (!k) {
    printf("%-6s  not run: %s", target, err.rendered);
    return 0;
  }
  tilec_backend_info bi = {0};
  for (size_t i = 0; i < tilec_backend_count(); i++)
    if (tilec_backend_get(ctx, i, &bi) == 0 && strcmp(bi.target, target) == 0 && bi.is_default) break;
  void *a = tilec_device_alloc(ctx, target, 0, 32 * sizeof(float), &err);
  void *b = a ? tilec_device_alloc(ctx, target, 0, 32 * sizeof(float), &err) : NULL;
  int rc = 1;
  if (!a || !b) {
    printf("%-6s  not run: %s", target, err.rendered);
    goto done;
  }
  float host[32] = {0};
  if (tilec_device_copy(ctx, target, 0, a, host, sizeof host, TILEC_COPY_HOST_TO_DEVICE, &err) != TILEC_OK) goto fail;
  int64_t shape[1] = {32};
  DLTensor ta = {a, {(DLDeviceType)bi.device_type, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor tb = {b, {(DLDeviceType)bi.device_type, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor *args[2] = {&ta, &tb};
  for (int w = 0; w < 100; w++)
    if (tilec_kernel_launch(k, args, 2, &err) != TILEC_OK) goto fail;
  /* enqueue n - 1, then one synchronous launch that waits for all of them */
  double t0 = now_us();
  for (int i = 0; i < n - 1; i++)
    if (tilec_kernel_launch_stream(k, args, 2, NULL, &err) != TILEC_OK) goto fail;
  if (tilec_kernel_launch(k, args, 2, &err) != TILEC_OK) goto fail;
  double async_us = (now_us() - t0) / n;
  t0 = now_us();
  for (int i = 0; i < n; i++)
    if (tilec_kernel_launch(k, args, 2, &err) != TILEC_OK) goto fail;
  double sync_us = (now_us() - t0) / n;
  if (tilec_device_copy(ctx, target, 0, host, b, sizeof host, TILEC_COPY_DEVICE_TO_HOST, &err) != TILEC_OK) goto fail;
  printf("%-6s  %-8s  %8d  %14.2f  %14.2f  %s\n", target, tilec_kernel_backend(k), n, async_us, sync_us,
         host[0] == 1.0f ? "result ok" : "RESULT WRONG");
  rc = host[0] == 1.0f ? 0 : 1;
  goto done;
fail:
  printf("%-6s  failed: %s", target, err.rendered);
done:
  tilec_device_free(ctx, target, 0, a);
  tilec_device_free(ctx, target, 0, b);
  tilec_kernel_destroy(k);
  return rc;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  if (n < 2) n = 2;
  tilec_error err = {0};
  tilec_context_options o = {0};
  o.num_threads = 1;
  tilec_context *ctx = tilec_context_create(&o, &err);
  if (!ctx) {
    printf("%s", err.rendered);
    return 1;
  }
  tilec_program *prog = tilec_program_from_string(ctx, "tiny.py", k_src, strlen(k_src), &err);
  if (!prog) {
    printf("%s", err.rendered);
    tilec_context_destroy(ctx);
    return 1;
  }
  printf("per-launch overhead of a tilec call from C (1 block of 32 threads, 2 tensors)\n");
  printf("%-6s  %-8s  %8s  %14s  %14s\n", "target", "backend", "launches", "enqueue us", "launch+wait us");
  int rc = 0;
  for (size_t i = 0; i < tilec_backend_count(); i++) { /* every target whose default backend runs here */
    tilec_backend_info bi;
    if (tilec_backend_get(ctx, i, &bi) != 0 || !bi.is_default) continue;
    if (!bi.available || !bi.has_memory) {
      printf("%-6s  skipped: %s\n", bi.target, bi.reason[0] ? bi.reason : "no device memory");
      continue;
    }
    rc |= run(ctx, prog, bi.target, n);
  }
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}
